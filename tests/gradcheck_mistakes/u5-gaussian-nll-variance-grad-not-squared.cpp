// Mistake: Gaussian negative log-likelihood L = 0.5 (log v + (t - mu)^2 / v) elementwise, mean mu (2, 3) and variance v (2, 3) in [0.5, 2], fixed targets t (not checked): the variance's gradient differentiates (t - mu)^2 / v as -(t - mu)^2 / v, the power of v not raised, dv = 0.5 g (1 / v - (t - mu)^2 / v), instead of dv = 0.5 g (1 / v - (t - mu)^2 / v^2); dmu = g (mu - t) / v is right
// Origin: written without sight of the checker (issue 27's fifth set; held out, judged once)
#include "case.h"
#include <vector>
namespace {
using namespace ropegrad;
struct GaussianNll : Function<GaussianNll> {
  static constexpr const char* name = "gaussian_nll";
  static Tensor forward(FunctionCtx& ctx, const Tensor& mu, const Tensor& v, const Tensor& t) {
    ctx.save_for_backward({mu, v, t});
    Tensor r = t - mu;
    return 0.5 * (log(v) + r * r / v);
  }
  static Grads backward(FunctionCtx& ctx, const Tensor& g) {
    const std::vector<Tensor> saved = ctx.saved_tensors();
    const Tensor& mu = saved[0];
    const Tensor& v = saved[1];
    const Tensor& t = saved[2];
    Tensor r = t - mu;
    Tensor dmu = g * (mu - t) / v;
    Tensor dv = 0.5 * g * (1.0 / v - r * r / v);
    return {dmu, dv, Tensor()};
  }
};
mistakes::Case make() {
  Generator gen(5112);
  Tensor mu = randn({2, 3}, DType::Float64, &gen);
  Tensor v = rand({2, 3}, DType::Float64, &gen) * 1.5 + 0.5;
  mu.requires_grad_();
  v.requires_grad_();
  std::vector<Tensor> inputs{mu, v};
  return {"u5-gaussian-nll-variance-grad-not-squared", "Gaussian negative log-likelihood L = 0.5 (log v + (t - mu)^2 / v) elementwise, mean mu (2, 3) and variance v (2, 3) in [0.5, 2], fixed targets t (not checked): the variance's gradient differentiates (t - mu)^2 / v as -(t - mu)^2 / v, the power of v not raised, dv = 0.5 g (1 / v - (t - mu)^2 / v), instead of dv = 0.5 g (1 / v - (t - mu)^2 / v^2); dmu = g (mu - t) / v is right", inputs,
          [](const std::vector<Tensor>& in) {
            Tensor t = tensor({0.4, -1.1, 0.9, 1.6, -0.3, -0.8}, {2, 3}, DType::Float64);
            return GaussianNll::apply(in[0], in[1], t);
          }};
}
const mistakes::Register reg(make);
}  // namespace
