// Mistake: cumulative sum of squares along the last dim, y_j = sum_{k <= j} x_k^2 with x (2, 5): the backward puts the factor x inside the sum at the output's position, dx_k = 2 sum_{j >= k} g_j x_j, where it belongs outside at the input's own position, dx_k = 2 x_k sum_{j >= k} g_j (only the last position, k = 4, is right)
// Origin: written without sight of the checker (issue 27's eighth set; the held-out half: judged once)
#include "case.h"
#include <vector>
namespace {
using namespace ropegrad;
struct CumsumSquares : Function<CumsumSquares> {
  static constexpr const char* name = "cumsum_squares";
  static Tensor forward(FunctionCtx& ctx, const Tensor& x) {
    ctx.save_for_backward({x});
    const int64_t rows = x.size(0), n = x.size(1);
    const std::vector<double> xv = x.to_vector<double>();
    std::vector<double> y(xv.size());
    for (int64_t r = 0; r < rows; ++r) {
      double acc = 0.0;
      for (int64_t j = 0; j < n; ++j) {
        acc += xv[r * n + j] * xv[r * n + j];
        y[r * n + j] = acc;
      }
    }
    return tensor(y, {rows, n}, DType::Float64);
  }
  static Grads backward(FunctionCtx& ctx, const Tensor& g) {
    const Tensor x = ctx.saved_tensors()[0];
    const int64_t rows = x.size(0), n = x.size(1);
    const std::vector<double> xv = x.to_vector<double>();
    const std::vector<double> gv = g.to_vector<double>();
    std::vector<double> dx(xv.size(), 0.0);
    for (int64_t r = 0; r < rows; ++r) {
      for (int64_t k = 0; k < n; ++k) {
        double acc = 0.0;
        for (int64_t j = k; j < n; ++j) acc += gv[r * n + j] * xv[r * n + j];
        dx[r * n + k] = 2.0 * acc;
      }
    }
    return {tensor(dx, {rows, n}, DType::Float64)};
  }
};
mistakes::Case make() {
  Generator gen(8103);
  Tensor x = randn({2, 5}, DType::Float64, &gen);
  x.requires_grad_();
  std::vector<Tensor> inputs{x};
  return {"u8-cumsum-squares-x-at-output-position",
          "cumulative sum of squares along the last dim, y_j = sum_{k <= j} x_k^2 with x (2, 5): the backward puts the factor x inside the sum at the output's position, dx_k = 2 sum_{j >= k} g_j x_j, where it belongs outside at the input's own position, dx_k = 2 x_k sum_{j >= k} g_j (only the last position, k = 4, is right)",
          inputs, [](const std::vector<Tensor>& in) { return CumsumSquares::apply(in[0]); }};
}
const mistakes::Register reg(make);
}  // namespace
