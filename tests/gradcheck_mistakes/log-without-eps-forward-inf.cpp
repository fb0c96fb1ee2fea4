// Mistake: the forward computes log(x) where log(x + eps) was meant, so at the exact zero x[0, 2] the output is -inf; the backward 1 / (x + eps) is the one of log(x + eps)
#include "case.h"
namespace {
using namespace ropegrad;
struct LogEps : Function<LogEps> {
  static constexpr const char* name = "log_eps";
  static Tensor forward(FunctionCtx& ctx, const Tensor& x) {
    ctx.save_for_backward({x});
    return log(x);
  }
  static Grads backward(FunctionCtx& ctx, const Tensor& g) { return {g / (ctx.saved_tensors()[0] + 1e-6)}; }
};
mistakes::Case make() {
  Tensor x = tensor(std::vector<double>{0.5, 1.2, 0.0, 2.0, 0.7, 1.5}, Shape{2, 3}, DType::Float64);
  x.requires_grad_();
  std::vector<Tensor> inputs{x};
  GradcheckFn f = [](const std::vector<Tensor>& in) { return LogEps::apply(in[0]); };
  return {"log-without-eps-forward-inf",
          "the forward computes log(x) where log(x + eps) was meant, so at the exact zero x[0, 2] the output is -inf; the backward 1 / (x + eps) is the one of log(x + eps)",
          inputs,
          f,
          std::vector<std::string>{"a non-finite output", "output[0, 2] = -inf"}};
}
const mistakes::Register reg(make);
}  // namespace
