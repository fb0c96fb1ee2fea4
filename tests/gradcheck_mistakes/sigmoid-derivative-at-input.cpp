// Mistake: sigmoid's backward evaluates y(1 - y) at the input: g * x * (1 - x) instead of g * y * (1 - y) with y = sigmoid(x)
#include "case.h"
#include <any>
#include <cmath>
#include <limits>
namespace {
using namespace ropegrad;
struct MySigmoid : Function<MySigmoid> {
  static constexpr const char* name = "my_sigmoid";
  static Tensor forward(FunctionCtx& ctx, const Tensor& x) {
    ctx.save_for_backward({x});
    return 1.0 / (1.0 + exp(-x));
  }
  static Grads backward(FunctionCtx& ctx, const Tensor& g) {
    const Tensor x = ctx.saved_tensors()[0];
    return {g * x * (1.0 - x)};
  }
};
mistakes::Case make() {
  Generator gen(105);
  Tensor x = randn({2, 5}, DType::Float64, &gen);
  x.requires_grad_();
  std::vector<Tensor> inputs{x};
  return {"sigmoid-derivative-at-input",
          "sigmoid's backward evaluates y(1 - y) at the input: g * x * (1 - x) instead of g * y * (1 - y) with y = sigmoid(x)",
          inputs,
          [](const std::vector<Tensor>& in) { return MySigmoid::apply(in[0]); },
          std::vector<std::string>{"the derivative taken at the input where it needs the output"}};
}
const mistakes::Register reg(make);
}  // namespace
