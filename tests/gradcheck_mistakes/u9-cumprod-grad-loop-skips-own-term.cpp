// Mistake: Inclusive cumulative product along dim 1, y[r, k] = prod_{j <= k} x[r, j], on x of shape [2, 5] with entries kept away from zero (about 1.3 +- 0.4), written with loops. The backward uses dx[r, j] = sum_k g[r, k] * y[r, k] / x[r, j], but its inner loop starts at k = j + 1 instead of k = j (an off-by-one), leaving out the output y[r, j] that x[r, j] itself completes, so the last column gets zero gradient. The correct rule sums over k >= j: dx[r, j] = sum_{k >= j} g[r, k] * y[r, k] / x[r, j].
// Origin: written without sight of the checker (issue 27's ninth set; the held-out half: judged once)
#include "case.h"
#include <algorithm>
#include <any>
#include <cmath>
#include <vector>
namespace {
using namespace ropegrad;
struct CumProd : Function<CumProd> {
  static constexpr const char* name = "cumprod_dim1";
  static Tensor forward(FunctionCtx& ctx, const Tensor& x) {
    const int64_t r = x.size(0), c = x.size(1);
    std::vector<double> v = x.to_vector<double>(), out(v.size());
    for (int64_t i = 0; i < r; ++i) {
      double acc = 1.0;
      for (int64_t j = 0; j < c; ++j) {
        acc *= v[i * c + j];
        out[i * c + j] = acc;
      }
    }
    Tensor y = tensor(out, {r, c}, DType::Float64);
    ctx.save_for_backward({x, y});
    return y;
  }
  static Grads backward(FunctionCtx& ctx, const Tensor& g) {
    const Tensor x = ctx.saved_tensors()[0], y = ctx.saved_tensors()[1];
    const int64_t r = x.size(0), c = x.size(1);
    std::vector<double> xv = x.to_vector<double>(), yv = y.to_vector<double>(), gv = g.to_vector<double>();
    std::vector<double> dx(r * c, 0.0);
    for (int64_t i = 0; i < r; ++i)
      for (int64_t j = 0; j < c; ++j) {
        double acc = 0.0;
        for (int64_t k = j + 1; k < c; ++k) acc += gv[i * c + k] * yv[i * c + k];
        dx[i * c + j] = acc / xv[i * c + j];
      }
    return {tensor(dx, {r, c}, DType::Float64)};
  }
};
mistakes::Case make() {
  Generator gen(9119);
  Tensor x = randn({2, 5}, DType::Float64, &gen) * 0.4 + 1.3;
  x.requires_grad_();
  std::vector<Tensor> inputs{x};
  return {"u9-cumprod-grad-loop-skips-own-term", "Inclusive cumulative product along dim 1, y[r, k] = prod_{j <= k} x[r, j], on x of shape [2, 5] with entries kept away from zero (about 1.3 +- 0.4), written with loops. The backward uses dx[r, j] = sum_k g[r, k] * y[r, k] / x[r, j], but its inner loop starts at k = j + 1 instead of k = j (an off-by-one), leaving out the output y[r, j] that x[r, j] itself completes, so the last column gets zero gradient. The correct rule sums over k >= j: dx[r, j] = sum_{k >= j} g[r, k] * y[r, k] / x[r, j].", inputs, [](const std::vector<Tensor>& in) { return CumProd::apply(in[0]); }};
}
const mistakes::Register reg(make);
}  // namespace
