// Mistake: hard swish y = x relu6(x + 3) / 6 on x (2, 4): in the middle branch -3 < x < 3, where y = x (x + 3) / 6, the backward differentiates only the factor x and returns g (x + 3) / 6, dropping the product rule's term x / 6 (correct: g (2 x + 3) / 6); the outer branches, 0 below -3 and g above 3, are right
// Origin: written without sight of the checker (issue 27's sixth set; held out, judged once)
#include "case.h"
#include <vector>
namespace {
using namespace ropegrad;
struct HardSwish : Function<HardSwish> {
  static constexpr const char* name = "hardswish";
  static Tensor forward(FunctionCtx& ctx, const Tensor& x) {
    ctx.save_for_backward({x});
    std::vector<double> v = x.to_vector<double>();
    for (double& e : v) e = e <= -3 ? 0.0 : (e >= 3 ? e : e * (e + 3) / 6);
    return tensor(v, x.shape(), DType::Float64);
  }
  static Grads backward(FunctionCtx& ctx, const Tensor& g) {
    const Tensor x = ctx.saved_tensors()[0];
    const std::vector<double> xv = x.to_vector<double>(), gv = g.to_vector<double>();
    std::vector<double> dx(xv.size());
    for (size_t i = 0; i < xv.size(); ++i) {
      const double e = xv[i];
      dx[i] = e <= -3 ? 0.0 : (e >= 3 ? gv[i] : gv[i] * (e + 3) / 6);  // middle: (2x + 3) / 6
    }
    return {tensor(dx, x.shape(), DType::Float64)};
  }
};
mistakes::Case make() {
  const std::vector<double> xs{-3.8, -1.4, 0.6, 2.2, 3.7, -0.5, 1.3, -2.6};
  Tensor x = tensor(xs, {2, 4}, DType::Float64);
  x.requires_grad_();
  std::vector<Tensor> inputs{x};
  return {"u6-hardswish-middle-branch-product-term-dropped",
          "Mistake: hard swish y = x relu6(x + 3) / 6 on x (2, 4): in the middle branch -3 < x < 3, where y = x (x + "
          "3) / 6, the backward differentiates only the factor x and returns g (x + 3) / 6, dropping the product "
          "rule's term x / 6 (correct: g (2 x + 3) / 6); the outer branches, 0 below -3 and g above 3, are right",
          inputs, [](const std::vector<Tensor>& in) { return HardSwish::apply(in[0]); }};
}
const mistakes::Register reg(make);
}  // namespace
