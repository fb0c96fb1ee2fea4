// Mistake: y = a^b elementwise with a (2, 3) and b (2, 3), both in [0.5, 2]: the exponent's gradient takes the log of the wrong operand, db = g y log b, instead of the log of the base, db = g y log a (from a^b = exp(b log a)); da = g b a^(b - 1) is right
// Origin: written without sight of the checker (issue 27's sixth set; worked from)
#include "case.h"
#include <cmath>
#include <vector>
namespace {
using namespace ropegrad;
struct PowTensor : Function<PowTensor> {
  static constexpr const char* name = "pow_tensor";
  static Tensor forward(FunctionCtx& ctx, const Tensor& a, const Tensor& b) {
    const std::vector<double> av = a.to_vector<double>(), bv = b.to_vector<double>();
    std::vector<double> y(av.size());
    for (size_t i = 0; i < av.size(); ++i) y[i] = std::pow(av[i], bv[i]);
    Tensor out = tensor(y, a.shape(), DType::Float64);
    ctx.save_for_backward({a, b, out});
    return out;
  }
  static Grads backward(FunctionCtx& ctx, const Tensor& g) {
    const auto s = ctx.saved_tensors();
    const std::vector<double> av = s[0].to_vector<double>(), bv = s[1].to_vector<double>();
    const std::vector<double> yv = s[2].to_vector<double>(), gv = g.to_vector<double>();
    std::vector<double> da(av.size()), db(av.size());
    for (size_t i = 0; i < av.size(); ++i) {
      da[i] = gv[i] * bv[i] * std::pow(av[i], bv[i] - 1);
      db[i] = gv[i] * yv[i] * std::log(bv[i]);  // log of the exponent: log(a) belongs
    }
    return {tensor(da, s[0].shape(), DType::Float64), tensor(db, s[1].shape(), DType::Float64)};
  }
};
mistakes::Case make() {
  const std::vector<double> as{0.6, 1.4, 1.9, 0.8, 1.2, 1.7}, bs{1.3, 0.7, 1.8, 0.55, 1.6, 0.9};
  Tensor a = tensor(as, {2, 3}, DType::Float64);
  Tensor b = tensor(bs, {2, 3}, DType::Float64);
  a.requires_grad_();
  b.requires_grad_();
  std::vector<Tensor> inputs{a, b};
  return {"u6-pow-tensor-exponent-grad-log-of-exponent",
          "Mistake: y = a^b elementwise with a (2, 3) and b (2, 3), both in [0.5, 2]: the exponent's gradient takes the "
          "log of the wrong operand, db = g y log b, instead of the log of the base, db = g y log a (from a^b = exp(b "
          "log a)); da = g b a^(b - 1) is right",
          inputs, [](const std::vector<Tensor>& in) { return PowTensor::apply(in[0], in[1]); }};
}
const mistakes::Register reg(make);
}  // namespace
