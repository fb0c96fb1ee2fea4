// Mistake: gather along dim 0, y[k, j] = x[idx[k, j], j] with x (4, 3) and idx = ((2, 0, 1), (1, 2, 2)): the backward scatters as for a gather along dim 1, dx[k, idx[k, j]] += g[k, j] (the index put into the column, the output's row kept), instead of into the row it was read from, dx[idx[k, j], j] += g[k, j]
// Origin: written without sight of the checker (issue 27's fifth set; worked from)
#include "case.h"
#include <vector>
namespace {
using namespace ropegrad;
struct GatherRows : Function<GatherRows> {
  static constexpr const char* name = "gather_dim0";
  static Tensor forward(FunctionCtx& ctx, const Tensor& x, const std::vector<int64_t>& idx) {
    const int64_t rows = x.size(0), cols = x.size(1);
    const int64_t out_rows = static_cast<int64_t>(idx.size()) / cols;
    const std::vector<double> xv = x.to_vector<double>();
    std::vector<double> yv(idx.size());
    for (int64_t k = 0; k < out_rows; ++k)
      for (int64_t j = 0; j < cols; ++j) yv[k * cols + j] = xv[idx[k * cols + j] * cols + j];
    ctx.saved_data["idx"] = idx;
    ctx.saved_data["rows"] = rows;
    return tensor(yv, {out_rows, cols}, DType::Float64);
  }
  static Grads backward(FunctionCtx& ctx, const Tensor& g) {
    const auto idx = std::any_cast<std::vector<int64_t>>(ctx.saved_data.at("idx"));
    const auto rows = std::any_cast<int64_t>(ctx.saved_data.at("rows"));
    const int64_t out_rows = g.size(0), cols = g.size(1);
    const std::vector<double> gv = g.to_vector<double>();
    std::vector<double> dx(static_cast<size_t>(rows * cols), 0.0);
    for (int64_t k = 0; k < out_rows; ++k)
      for (int64_t j = 0; j < cols; ++j) dx[k * cols + idx[k * cols + j]] += gv[k * cols + j];
    return {tensor(dx, {rows, cols}, DType::Float64)};
  }
};
mistakes::Case make() {
  Generator gen(5113);
  Tensor x = randn({4, 3}, DType::Float64, &gen);
  x.requires_grad_();
  std::vector<Tensor> inputs{x};
  return {"u5-gather-dim0-grad-scattered-along-dim1", "gather along dim 0, y[k, j] = x[idx[k, j], j] with x (4, 3) and idx = ((2, 0, 1), (1, 2, 2)): the backward scatters as for a gather along dim 1, dx[k, idx[k, j]] += g[k, j] (the index put into the column, the output's row kept), instead of into the row it was read from, dx[idx[k, j], j] += g[k, j]", inputs,
          [](const std::vector<Tensor>& in) {
            const std::vector<int64_t> idx{2, 0, 1, 1, 2, 2};
            return GatherRows::apply(in[0], idx);
          }};
}
const mistakes::Register reg(make);
}  // namespace
