// Mistake: 1-d linear resize along the last dim, x (2, 4) -> y (2, 7), with align-corners positions p_j = j (4 - 1) / (7 - 1) = j / 2, y_j = (1 - f_j) x[i_j] + f_j x[i_j + 1] with i_j = floor(p_j), f_j = p_j - i_j: the backward recomputes the positions the half-pixel way, p_j = (j + 0.5) 4 / 7 - 0.5 clamped to [0, 3], and scatters g_j with those indices and weights, instead of the forward's own: dx[i_j] += (1 - f_j) g_j, dx[i_j + 1] += f_j g_j at p_j = j / 2
// Origin: written without sight of the checker (issue 27's fourth set; worked from)
#include "case.h"
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <vector>
namespace {
using namespace ropegrad;
struct Tap {
  int64_t i0, i1;
  double f;
};
// Where output j of a resize from n to m samples reads its input.
Tap tap(int64_t j, int64_t n, int64_t m, bool align_corners) {
  double p = align_corners ? static_cast<double>(j) * static_cast<double>(n - 1) / static_cast<double>(m - 1)
                           : (static_cast<double>(j) + 0.5) * static_cast<double>(n) / static_cast<double>(m) - 0.5;
  p = std::clamp(p, 0.0, static_cast<double>(n - 1));
  int64_t i0 = static_cast<int64_t>(std::floor(p));
  if (i0 >= n - 1) return {n - 1, n - 1, 0.0};
  return {i0, i0 + 1, p - static_cast<double>(i0)};
}
struct Resize : Function<Resize> {
  static constexpr const char* name = "linear_resize_4_to_7";
  static Tensor forward(FunctionCtx& ctx, const Tensor& x) {
    (void)ctx;
    const int64_t rows = x.size(0), n = x.size(1), m = 7;
    const std::vector<double> xv = x.to_vector<double>();
    std::vector<double> yv(static_cast<size_t>(rows * m));
    for (int64_t r = 0; r < rows; ++r)
      for (int64_t j = 0; j < m; ++j) {
        const Tap t = tap(j, n, m, true);
        yv[r * m + j] = (1.0 - t.f) * xv[r * n + t.i0] + t.f * xv[r * n + t.i1];
      }
    return tensor(yv, {rows, m}, DType::Float64);
  }
  static Grads backward(FunctionCtx& ctx, const Tensor& g) {
    (void)ctx;
    const int64_t rows = g.size(0), m = g.size(1), n = 4;
    const std::vector<double> gv = g.to_vector<double>();
    std::vector<double> dx(static_cast<size_t>(rows * n), 0.0);
    for (int64_t r = 0; r < rows; ++r)
      for (int64_t j = 0; j < m; ++j) {
        const Tap t = tap(j, n, m, false);
        dx[r * n + t.i0] += (1.0 - t.f) * gv[r * m + j];
        dx[r * n + t.i1] += t.f * gv[r * m + j];
      }
    return {tensor(dx, {rows, n}, DType::Float64)};
  }
};
mistakes::Case make() {
  Generator gen(415);
  Tensor x = randn({2, 4}, DType::Float64, &gen);
  x.requires_grad_();
  std::vector<Tensor> inputs{x};
  return {"linear-resize-backward-half-pixel-positions",
          "1-d linear resize along the last dim, x (2, 4) -> y (2, 7), with align-corners positions p_j = j (4 - 1) / (7 - 1) = j / 2, y_j = (1 - f_j) x[i_j] + f_j x[i_j + 1] with i_j = floor(p_j), f_j = p_j - i_j: the backward recomputes the positions the half-pixel way, p_j = (j + 0.5) 4 / 7 - 0.5 clamped to [0, 3], and scatters g_j with those indices and weights, instead of the forward's own: dx[i_j] += (1 - f_j) g_j, dx[i_j + 1] += f_j g_j at p_j = j / 2",
          inputs,
          [](const std::vector<Tensor>& in) { return Resize::apply(in[0]); },
          std::vector<std::string>{},
          std::vector<std::string>{"observed: input 0's gradient is wrong at 16 of its 112 entries", "all in the rows of output[.., {1..2, 4..5}]"}};
}
const mistakes::Register reg(make);
}  // namespace
