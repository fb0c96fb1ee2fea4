// Mistake: RMSNorm without gain: the backward treats rstd = 1/sqrt(mean(x^2) + eps) as a constant, dx = g * rstd, and drops the term from the mean, -x * rstd^3 * mean(g * x), which couples the entries of a row and also changes the diagonal
#include "case.h"
namespace {
using namespace ropegrad;
struct RmsNormPlain : Function<RmsNormPlain> {
  static constexpr const char* name = "rms_norm_plain";
  static Tensor forward(FunctionCtx& ctx, const Tensor& x) {
    Tensor rstd = rsqrt(mean(x * x, {-1}, true) + 1e-5);
    ctx.save_for_backward({rstd});
    return x * rstd;
  }
  static Grads backward(FunctionCtx& ctx, const Tensor& g) { return {g * ctx.saved_tensors()[0]}; }
};
mistakes::Case make() {
  Generator gen(202);
  Tensor x = randn({3, 6}, DType::Float64, &gen);
  x.requires_grad_();
  std::vector<Tensor> inputs{x};
  GradcheckFn f = [](const std::vector<Tensor>& in) { return RmsNormPlain::apply(in[0]); };
  return {"rmsnorm-no-mean-term",
          "RMSNorm without gain: the backward treats rstd = 1/sqrt(mean(x^2) + eps) as a constant, dx = g * rstd, and drops the term from the mean, -x * rstd^3 * mean(g * x), which couples the entries of a row and also changes the diagonal",
          inputs,
          f,
          std::vector<std::string>{"a coupling term missing", "only the diagonal"}};
}
const mistakes::Register reg(make);
}  // namespace
