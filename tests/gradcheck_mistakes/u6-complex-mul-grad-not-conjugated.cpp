// Mistake: complex multiplication of pairs stored as (re, im) rows, a (3, 2), b (3, 2) -> c (3, 2), c = a b = (a_re b_re - a_im b_im, a_re b_im + a_im b_re): the gradient for a multiplies g by b instead of by its conjugate, da = g b = (g_re b_re - g_im b_im, g_re b_im + g_im b_re), where da = g conj(b) = (g_re b_re + g_im b_im, g_im b_re - g_re b_im) belongs; db = g conj(a) is right
// Origin: written without sight of the checker (issue 27's sixth set; worked from)
#include "case.h"
#include <vector>
namespace {
using namespace ropegrad;
struct ComplexMul : Function<ComplexMul> {
  static constexpr const char* name = "complex_mul";
  static Tensor forward(FunctionCtx& ctx, const Tensor& a, const Tensor& b) {
    ctx.save_for_backward({a, b});
    const std::vector<double> av = a.to_vector<double>(), bv = b.to_vector<double>();
    std::vector<double> c(3 * 2);
    for (int i = 0; i < 3; ++i) {
      const double ar = av[2 * i], ai = av[2 * i + 1], br = bv[2 * i], bi = bv[2 * i + 1];
      c[2 * i] = ar * br - ai * bi;
      c[2 * i + 1] = ar * bi + ai * br;
    }
    return tensor(c, {3, 2}, DType::Float64);
  }
  static Grads backward(FunctionCtx& ctx, const Tensor& g) {
    const auto s = ctx.saved_tensors();
    const std::vector<double> av = s[0].to_vector<double>(), bv = s[1].to_vector<double>();
    const std::vector<double> gv = g.to_vector<double>();
    std::vector<double> da(3 * 2), db(3 * 2);
    for (int i = 0; i < 3; ++i) {
      const double ar = av[2 * i], ai = av[2 * i + 1], br = bv[2 * i], bi = bv[2 * i + 1];
      const double gr = gv[2 * i], gi = gv[2 * i + 1];
      da[2 * i] = gr * br - gi * bi;  // g * b: b is not conjugated
      da[2 * i + 1] = gr * bi + gi * br;
      db[2 * i] = gr * ar + gi * ai;  // g * conj(a)
      db[2 * i + 1] = gi * ar - gr * ai;
    }
    return {tensor(da, {3, 2}, DType::Float64), tensor(db, {3, 2}, DType::Float64)};
  }
};
mistakes::Case make() {
  Generator gen(6113);
  Tensor a = randn({3, 2}, DType::Float64, &gen);
  Tensor b = randn({3, 2}, DType::Float64, &gen);
  a.requires_grad_();
  b.requires_grad_();
  std::vector<Tensor> inputs{a, b};
  return {"u6-complex-mul-grad-not-conjugated",
          "Mistake: complex multiplication of pairs stored as (re, im) rows, a (3, 2), b (3, 2) -> c (3, 2), c = a b = "
          "(a_re b_re - a_im b_im, a_re b_im + a_im b_re): the gradient for a multiplies g by b instead of by its "
          "conjugate, da = g b = (g_re b_re - g_im b_im, g_re b_im + g_im b_re), where da = g conj(b) = (g_re b_re + "
          "g_im b_im, g_im b_re - g_re b_im) belongs; db = g conj(a) is right",
          inputs, [](const std::vector<Tensor>& in) { return ComplexMul::apply(in[0], in[1]); }};
}
const mistakes::Register reg(make);
}  // namespace
