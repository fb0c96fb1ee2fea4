// Mistake: Gather along dim 1, y[i, j] = x[i, idx[i, j]], for x of shape [3, 5] and the fixed int64 index idx of shape [3, 3] = [[2, 0, 2], [1, 1, 0], [0, 2, 1]], passed as a second Tensor argument without gradient; output shape [3, 3]. The backward scatters with the dim-0 pattern, dx[idx[i, j], j] += g[i, j], as if the gather had been along dim 0, so each gradient lands in row idx[i, j], column j instead of row i, column idx[i, j]. The correct rule is dx[i, idx[i, j]] += g[i, j], accumulating repeats.
// Origin: written without sight of the checker (issue 27's ninth set; the held-out half: judged once)
#include "case.h"
#include <algorithm>
#include <any>
#include <cmath>
#include <vector>
namespace {
using namespace ropegrad;
struct GatherDim1 : Function<GatherDim1> {
  static constexpr const char* name = "gather_dim1";
  static Tensor forward(FunctionCtx& ctx, const Tensor& x, const Tensor& idx) {
    ctx.saved_data["idx"] = idx.to_vector<int64_t>();
    ctx.saved_data["xshape"] = x.shape();
    return gather(x, 1, idx);
  }
  static Grads backward(FunctionCtx& ctx, const Tensor& g) {
    const auto idx = std::any_cast<std::vector<int64_t>>(ctx.saved_data["idx"]);
    const Shape xs = std::any_cast<Shape>(ctx.saved_data["xshape"]);
    const int64_t r = g.size(0), k = g.size(1), c = xs[1];
    std::vector<double> gv = g.to_vector<double>(), dx(xs[0] * c, 0.0);
    for (int64_t i = 0; i < r; ++i)
      for (int64_t j = 0; j < k; ++j) dx[idx[i * k + j] * c + j] += gv[i * k + j];
    return {tensor(dx, xs, DType::Float64), Tensor()};
  }
};
mistakes::Case make() {
  Generator gen(9120);
  Tensor x = randn({3, 5}, DType::Float64, &gen);
  x.requires_grad_();
  std::vector<Tensor> inputs{x};
  return {"u9-gather-dim1-grad-scattered-along-dim0", "Gather along dim 1, y[i, j] = x[i, idx[i, j]], for x of shape [3, 5] and the fixed int64 index idx of shape [3, 3] = [[2, 0, 2], [1, 1, 0], [0, 2, 1]], passed as a second Tensor argument without gradient; output shape [3, 3]. The backward scatters with the dim-0 pattern, dx[idx[i, j], j] += g[i, j], as if the gather had been along dim 0, so each gradient lands in row idx[i, j], column j instead of row i, column idx[i, j]. The correct rule is dx[i, idx[i, j]] += g[i, j], accumulating repeats.", inputs, [](const std::vector<Tensor>& in) {
            return GatherDim1::apply(in[0], tensor_i64({2, 0, 2, 1, 1, 0, 0, 2, 1}, {3, 3}));
          }};
}
const mistakes::Register reg(make);
}  // namespace
