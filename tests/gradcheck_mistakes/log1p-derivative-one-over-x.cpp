// Mistake: log(1 + x)'s backward written g / x instead of g / (1 + x): wrong everywhere, and infinite at the exact zero x[0, 0]
#include "case.h"
namespace {
using namespace ropegrad;
struct Log1p : Function<Log1p> {
  static constexpr const char* name = "log1p";
  static Tensor forward(FunctionCtx& ctx, const Tensor& x) {
    ctx.save_for_backward({x});
    return log(1.0 + x);
  }
  static Grads backward(FunctionCtx& ctx, const Tensor& g) { return {g / ctx.saved_tensors()[0]}; }
};
mistakes::Case make() {
  Tensor x = tensor(std::vector<double>{0.0, 0.4, 1.3, 0.9, 2.1, 0.6}, Shape{2, 3}, DType::Float64);
  x.requires_grad_();
  std::vector<Tensor> inputs{x};
  GradcheckFn f = [](const std::vector<Tensor>& in) { return Log1p::apply(in[0]); };
  return {"log1p-derivative-one-over-x",
          "log(1 + x)'s backward written g / x instead of g / (1 + x): wrong everywhere, and infinite at the exact zero x[0, 0]",
          inputs,
          f,
          std::vector<std::string>{"a non-finite entry", "the analytical Jacobian is inf", "input0[0, 0] = 0"}};
}
const mistakes::Register reg(make);
}  // namespace
