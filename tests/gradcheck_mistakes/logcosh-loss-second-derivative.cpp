// Mistake: log-cosh loss y = log(cosh(p - t)) elementwise, p (2, 3) with fixed targets t (not checked): the backward differentiates once too often and returns dp = g (1 - tanh(p - t)^2), the derivative of tanh, instead of the first derivative dp = g tanh(p - t)
// Origin: written without sight of the checker (issue 27's fourth set; held out, judged once on gradcheck as it was then)
#include "case.h"
#include <vector>
namespace {
using namespace ropegrad;
struct LogCosh : Function<LogCosh> {
  static constexpr const char* name = "log_cosh_loss";
  static Tensor forward(FunctionCtx& ctx, const Tensor& p, const Tensor& t) {
    ctx.save_for_backward({p, t});
    const Tensor r = p - t;
    return log((exp(r) + exp(-r)) * 0.5);
  }
  static Grads backward(FunctionCtx& ctx, const Tensor& g) {
    const auto saved = ctx.saved_tensors();
    const Tensor r = saved[0] - saved[1];
    const Tensor th = tanh(r);
    const Tensor dp = g * (1.0 - th * th);
    return {dp, Tensor()};
  }
};
mistakes::Case make() {
  Generator gen(405);
  Tensor p = randn({2, 3}, DType::Float64, &gen);
  Tensor t = randn({2, 3}, DType::Float64, &gen) * 0.5;
  p.requires_grad_();
  std::vector<Tensor> inputs{p, t};
  return {"logcosh-loss-second-derivative",
          "log-cosh loss y = log(cosh(p - t)) elementwise, p (2, 3) with fixed targets t (not checked): the backward differentiates once too often and returns dp = g (1 - tanh(p - t)^2), the derivative of tanh, instead of the first derivative dp = g tanh(p - t)",
          inputs,
          [](const std::vector<Tensor>& in) { return LogCosh::apply(in[0], in[1]); },
          std::vector<std::string>{"the elementwise derivative is wrong"}};
}
const mistakes::Register reg(make);
}  // namespace
