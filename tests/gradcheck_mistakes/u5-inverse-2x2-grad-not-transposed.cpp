// Mistake: inverse of 2x2 matrices, each row (a, b, c, d) of x (3, 4) read as X = [[a, b], [c, d]], y = X^-1 flattened: the backward returns dX = -Y G Y, the matrix-inverse rule without its transposes, instead of dX = -Y^T G Y^T (Y = X^-1, G the incoming gradient of the row as a 2x2 matrix)
// Origin: written without sight of the checker (issue 27's fifth set; held out, judged once)
#include "case.h"
#include <vector>
namespace {
using namespace ropegrad;
using Mat2 = std::vector<double>;  // row-major [m00, m01, m10, m11]
Mat2 mm(const Mat2& p, const Mat2& q) {
  return {p[0] * q[0] + p[1] * q[2], p[0] * q[1] + p[1] * q[3],
          p[2] * q[0] + p[3] * q[2], p[2] * q[1] + p[3] * q[3]};
}
struct Inverse2x2 : Function<Inverse2x2> {
  static constexpr const char* name = "inverse_2x2";
  static Tensor forward(FunctionCtx& ctx, const Tensor& x) {
    const int64_t rows = x.size(0);
    const std::vector<double> xv = x.to_vector<double>();
    std::vector<double> yv(xv.size());
    for (int64_t r = 0; r < rows; ++r) {
      const double a = xv[4 * r], b = xv[4 * r + 1], c = xv[4 * r + 2], d = xv[4 * r + 3];
      const double det = a * d - b * c;
      yv[4 * r] = d / det;
      yv[4 * r + 1] = -b / det;
      yv[4 * r + 2] = -c / det;
      yv[4 * r + 3] = a / det;
    }
    Tensor y = tensor(yv, {rows, 4}, DType::Float64);
    ctx.save_for_backward({y});
    return y;
  }
  static Grads backward(FunctionCtx& ctx, const Tensor& g) {
    const Tensor y = ctx.saved_tensors()[0];
    const int64_t rows = y.size(0);
    const std::vector<double> yv = y.to_vector<double>();
    const std::vector<double> gv = g.to_vector<double>();
    std::vector<double> dx(yv.size());
    for (int64_t r = 0; r < rows; ++r) {
      const Mat2 ym(yv.begin() + 4 * r, yv.begin() + 4 * r + 4);
      const Mat2 gm(gv.begin() + 4 * r, gv.begin() + 4 * r + 4);
      const Mat2 m = mm(mm(ym, gm), ym);
      for (int k = 0; k < 4; ++k) dx[4 * r + k] = -m[k];
    }
    return {tensor(dx, {rows, 4}, DType::Float64)};
  }
};
mistakes::Case make() {
  Generator gen(5108);
  Tensor x = tensor({2.0, 0.5, -0.3, 1.5,  1.2, -0.7, 0.4, 2.1,  -1.8, 0.6, 0.9, 1.1}, {3, 4},
                    DType::Float64);
  x.requires_grad_();
  std::vector<Tensor> inputs{x};
  return {"u5-inverse-2x2-grad-not-transposed", "inverse of 2x2 matrices, each row (a, b, c, d) of x (3, 4) read as X = [[a, b], [c, d]], y = X^-1 flattened: the backward returns dX = -Y G Y, the matrix-inverse rule without its transposes, instead of dX = -Y^T G Y^T (Y = X^-1, G the incoming gradient of the row as a 2x2 matrix)", inputs,
          [](const std::vector<Tensor>& in) { return Inverse2x2::apply(in[0]); }};
}
const mistakes::Register reg(make);
}  // namespace
