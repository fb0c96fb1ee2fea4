// Mistake: softplus's backward saves the output y = log(1 + e^x) and returns g * sigmoid(y) instead of g * sigmoid(x) (the derivative taken at the output instead of the input)
#include "case.h"
#include <any>
#include <cmath>
#include <limits>
namespace {
using namespace ropegrad;
struct MySoftplus : Function<MySoftplus> {
  static constexpr const char* name = "my_softplus";
  static Tensor forward(FunctionCtx& ctx, const Tensor& x) {
    Tensor y = log(1.0 + exp(x));
    ctx.save_for_backward({y});
    return y;
  }
  static Grads backward(FunctionCtx& ctx, const Tensor& g) {
    const Tensor y = ctx.saved_tensors()[0];
    return {g * sigmoid(y)};
  }
};
mistakes::Case make() {
  Generator gen(106);
  Tensor x = randn({3, 4}, DType::Float64, &gen);
  x.requires_grad_();
  std::vector<Tensor> inputs{x};
  return {"softplus-sigmoid-of-output",
          "softplus's backward saves the output y = log(1 + e^x) and returns g * sigmoid(y) instead of g * sigmoid(x) (the derivative taken at the output instead of the input)",
          inputs,
          [](const std::vector<Tensor>& in) { return MySoftplus::apply(in[0]); },
          std::vector<std::string>{"the derivative taken at the output where it needs the input"}};
}
const mistakes::Register reg(make);
}  // namespace
