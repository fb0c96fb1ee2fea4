// Mistake: Row lookup y = x[idx] (index_select along dim 0) with x of shape [5, 3] and the fixed int64 index tensor idx = [4, 0, 4, 2], output shape [4, 3]; the index is a second Tensor argument that gets no gradient. The backward scatters with assignment, dx[idx[r]] = g[r], so row 4, which is looked up twice, keeps only the gradient of its last use. The correct rule accumulates: dx[idx[r]] += g[r] for every r (row 4 gets g[0] + g[2], rows 1 and 3 get zero).
// Origin: written without sight of the checker (issue 27's ninth set; the half worked from)
#include "case.h"
#include <algorithm>
#include <any>
#include <cmath>
#include <vector>
namespace {
using namespace ropegrad;
struct IndexRows : Function<IndexRows> {
  static constexpr const char* name = "index_rows";
  static Tensor forward(FunctionCtx& ctx, const Tensor& x, const Tensor& idx) {
    ctx.saved_data["idx"] = idx.to_vector<int64_t>();
    ctx.saved_data["rows"] = x.size(0);
    return index_select(x, 0, idx);
  }
  static Grads backward(FunctionCtx& ctx, const Tensor& g) {
    const auto idx = std::any_cast<std::vector<int64_t>>(ctx.saved_data["idx"]);
    const int64_t rows = std::any_cast<int64_t>(ctx.saved_data["rows"]);
    const int64_t d = g.size(1);
    std::vector<double> gv = g.to_vector<double>(), dx(rows * d, 0.0);
    for (size_t r = 0; r < idx.size(); ++r)
      for (int64_t j = 0; j < d; ++j) dx[idx[r] * d + j] = gv[r * d + j];
    return {tensor(dx, {rows, d}, DType::Float64), Tensor()};
  }
};
mistakes::Case make() {
  Generator gen(9109);
  Tensor x = randn({5, 3}, DType::Float64, &gen);
  x.requires_grad_();
  std::vector<Tensor> inputs{x};
  return {"u9-index-rows-grad-overwrites-repeats", "Row lookup y = x[idx] (index_select along dim 0) with x of shape [5, 3] and the fixed int64 index tensor idx = [4, 0, 4, 2], output shape [4, 3]; the index is a second Tensor argument that gets no gradient. The backward scatters with assignment, dx[idx[r]] = g[r], so row 4, which is looked up twice, keeps only the gradient of its last use. The correct rule accumulates: dx[idx[r]] += g[r] for every r (row 4 gets g[0] + g[2], rows 1 and 3 get zero).", inputs,
          [](const std::vector<Tensor>& in) { return IndexRows::apply(in[0], tensor_i64({4, 0, 4, 2})); },
          std::vector<std::string>{"only some entries wrong", "several outputs read", "(the last)"}};
}
const mistakes::Register reg(make);
}  // namespace
