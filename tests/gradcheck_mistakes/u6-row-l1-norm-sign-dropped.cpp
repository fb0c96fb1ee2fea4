// Mistake: L1 norm of each row, y_i = sum_j |x_ij| with x (3, 4) of mixed signs away from 0: the backward differentiates |x| as if it were x and returns dx = g_i for every entry of row i, dropping the sign (correct: dx_ij = g_i sign(x_ij)); the positive entries are right, the negative ones have the wrong sign
// Origin: written without sight of the checker (issue 27's sixth set; worked from)
#include "case.h"
#include <cmath>
#include <vector>
namespace {
using namespace ropegrad;
struct RowL1Norm : Function<RowL1Norm> {
  static constexpr const char* name = "row_l1_norm";
  static Tensor forward(FunctionCtx& ctx, const Tensor& x) {
    ctx.save_for_backward({x});
    const std::vector<double> xv = x.to_vector<double>();
    std::vector<double> y(3, 0.0);
    for (int r = 0; r < 3; ++r)
      for (int j = 0; j < 4; ++j) y[r] += std::abs(xv[r * 4 + j]);
    return tensor(y, {3}, DType::Float64);
  }
  static Grads backward(FunctionCtx& ctx, const Tensor& g) {
    const Tensor x = ctx.saved_tensors()[0];
    const std::vector<double> gv = g.to_vector<double>();
    std::vector<double> dx(3 * 4);
    for (int r = 0; r < 3; ++r)
      for (int j = 0; j < 4; ++j) dx[r * 4 + j] = gv[r];  // g_i * sign(x_ij) belongs
    return {tensor(dx, {3, 4}, DType::Float64)};
  }
};
mistakes::Case make() {
  const std::vector<double> xs{0.8, -1.2, 0.35, -0.6, -0.9, 1.45, -0.25, 0.5, 1.1, 0.4, -1.7, -0.3};
  Tensor x = tensor(xs, {3, 4}, DType::Float64);
  x.requires_grad_();
  std::vector<Tensor> inputs{x};
  return {"u6-row-l1-norm-sign-dropped",
          "Mistake: L1 norm of each row, y_i = sum_j |x_ij| with x (3, 4) of mixed signs away from 0: the backward "
          "differentiates |x| as if it were x and returns dx = g_i for every entry of row i, dropping the sign "
          "(correct: dx_ij = g_i sign(x_ij)); the positive entries are right, the negative ones have the wrong sign",
          inputs, [](const std::vector<Tensor>& in) { return RowL1Norm::apply(in[0]); }};
}
const mistakes::Register reg(make);
}  // namespace
