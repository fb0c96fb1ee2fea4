// Mistake: a two-input, two-output map per row, out (3, 2) = [exp(a) cos(b), exp(a) sin(b)] with a (3) and b (3) (the complex exponential exp(a + i b) as (re, im)): the gradient for b differentiates cos(b) as +sin(b), db = g[:, 0] exp(a) sin(b) + g[:, 1] exp(a) cos(b), instead of db = -g[:, 0] exp(a) sin(b) + g[:, 1] exp(a) cos(b); da = g[:, 0] exp(a) cos(b) + g[:, 1] exp(a) sin(b) is right
// Origin: written without sight of the checker (issue 27's seventh set; the held-out half: judged once)
#include "case.h"
#include <vector>
namespace {
using namespace ropegrad;
struct ExpPolar : Function<ExpPolar> {
  static constexpr const char* name = "exp_polar";
  static Tensor forward(FunctionCtx& ctx, const Tensor& a, const Tensor& b) {
    ctx.save_for_backward({a, b});
    Tensor e = exp(a);
    return stack({e * cos(b), e * sin(b)}, 1);
  }
  static Grads backward(FunctionCtx& ctx, const Tensor& g) {
    const std::vector<Tensor> s = ctx.saved_tensors();
    const Tensor& a = s[0];
    const Tensor& b = s[1];
    Tensor e = exp(a);
    Tensor g0 = select(g, 1, 0);
    Tensor g1 = select(g, 1, 1);
    Tensor da = g0 * e * cos(b) + g1 * e * sin(b);
    Tensor db = g0 * e * sin(b) + g1 * e * cos(b);  // d cos(b) / db written as sin(b)
    return {da, db};
  }
};
mistakes::Case make() {
  Generator gen(7193);
  Tensor a = randn({3}, DType::Float64, &gen);
  Tensor b = randn({3}, DType::Float64, &gen);
  a.requires_grad_();
  b.requires_grad_();
  std::vector<Tensor> inputs{a, b};
  return {"u7-exp-polar-cos-derivative-sign",
          "a two-input, two-output map per row, out (3, 2) = [exp(a) cos(b), exp(a) sin(b)] with a (3) and b (3) (the complex exponential exp(a + i b) as (re, im)): the gradient for b differentiates cos(b) as +sin(b), db = g[:, 0] exp(a) sin(b) + g[:, 1] exp(a) cos(b), instead of db = -g[:, 0] exp(a) sin(b) + g[:, 1] exp(a) cos(b); da = g[:, 0] exp(a) cos(b) + g[:, 1] exp(a) sin(b) is right",
          inputs, [](const std::vector<Tensor>& in) { return ExpPolar::apply(in[0], in[1]); }};
}
const mistakes::Register reg(make);
}  // namespace
