// Mistake: log-sigmoid y = log(sigmoid(x)) = -softplus(-x): the backward returns g * sigmoid(x) instead of g * sigmoid(-x) = g * (1 - sigmoid(x))
#include "case.h"
#include <vector>
namespace {
using namespace ropegrad;
struct LogSigmoid : Function<LogSigmoid> {
  static constexpr const char* name = "logsigmoid";
  static Tensor forward(FunctionCtx& ctx, const Tensor& x) {
    ctx.save_for_backward({x});
    return neg(softplus(neg(x)));  // log(1 / (1 + e^-x)) = -log(1 + e^-x)
  }
  static Grads backward(FunctionCtx& ctx, const Tensor& g) {
    const Tensor x = ctx.saved_tensors()[0];
    return {g * sigmoid(x)};
  }
};
mistakes::Case make() {
  Generator gen(2024);
  Tensor x = randn({3, 5}, DType::Float64, &gen);
  x.requires_grad_();
  std::vector<Tensor> inputs{x};
  return {"logsigmoid-sigmoid-of-x",
          "log-sigmoid y = log(sigmoid(x)) = -softplus(-x): the backward returns g * sigmoid(x) instead of g * sigmoid(-x) = g * (1 - sigmoid(x))",
          inputs,
          [](const std::vector<Tensor>& in) { return LogSigmoid::apply(in[0]); },
          std::vector<std::string>{"the elementwise derivative is wrong", "analytical = 1 - numerical at every element"}};
}
const mistakes::Register reg(make);
}  // namespace
