// Mistake: y = atan(x) elementwise on x (2, 3) in (-0.8, 0.8): the backward returns atanh's derivative, g / (1 - x^2), a minus where the plus belongs (correct: dx = g / (1 + x^2))
// Origin: written without sight of the checker (issue 27's sixth set; held out, judged once)
#include "case.h"
#include <cmath>
#include <vector>
namespace {
using namespace ropegrad;
struct Atan : Function<Atan> {
  static constexpr const char* name = "atan";
  static Tensor forward(FunctionCtx& ctx, const Tensor& x) {
    ctx.save_for_backward({x});
    std::vector<double> v = x.to_vector<double>();
    for (double& e : v) e = std::atan(e);
    return tensor(v, x.shape(), DType::Float64);
  }
  static Grads backward(FunctionCtx& ctx, const Tensor& g) {
    const Tensor x = ctx.saved_tensors()[0];
    const std::vector<double> xv = x.to_vector<double>(), gv = g.to_vector<double>();
    std::vector<double> dx(xv.size());
    for (size_t i = 0; i < xv.size(); ++i) dx[i] = gv[i] / (1 - xv[i] * xv[i]);  // 1 + x^2 belongs
    return {tensor(dx, x.shape(), DType::Float64)};
  }
};
mistakes::Case make() {
  const std::vector<double> xs{0.3, -0.7, 0.5, -0.2, 0.75, -0.45};
  Tensor x = tensor(xs, {2, 3}, DType::Float64);
  x.requires_grad_();
  std::vector<Tensor> inputs{x};
  return {"u6-atan-derivative-minus-in-denominator",
          "Mistake: y = atan(x) elementwise on x (2, 3) in (-0.8, 0.8): the backward returns atanh's derivative, g / "
          "(1 - x^2), a minus where the plus belongs (correct: dx = g / (1 + x^2))",
          inputs, [](const std::vector<Tensor>& in) { return Atan::apply(in[0]); }};
}
const mistakes::Register reg(make);
}  // namespace
