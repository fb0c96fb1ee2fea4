// Mistake: gather along dim 1, y[i, k] = x[i, idx[i, k]] with x (3, 5) and idx = ((3, 0), (4, 2), (1, 3)): the backward adds g[i, k] into dx[i, k], the output's own column, instead of scattering it to the column it was read from, dx[i, idx[i, k]] += g[i, k]
// Origin: written without sight of the checker (issue 27's third set; worked from)
#include "case.h"
#include <any>
#include <cstdint>
#include <vector>
namespace {
using namespace ropegrad;
const std::vector<int64_t> kIdx{3, 0, 4, 2, 1, 3};  // (3, 2), row-major
struct GatherCols : Function<GatherCols> {
  static constexpr const char* name = "gather_cols";
  static Tensor forward(FunctionCtx& ctx, const Tensor& x) {
    ctx.saved_data["rows"] = x.size(0);
    ctx.saved_data["cols"] = x.size(1);
    return gather(x, 1, tensor_i64(kIdx, {3, 2}));
  }
  static Grads backward(FunctionCtx& ctx, const Tensor& g) {
    const int64_t rows = std::any_cast<int64_t>(ctx.saved_data.at("rows"));
    const int64_t cols = std::any_cast<int64_t>(ctx.saved_data.at("cols"));
    const std::vector<double> gv = g.to_vector<double>();
    std::vector<double> dx(static_cast<size_t>(rows * cols), 0.0);
    for (int64_t i = 0; i < rows; ++i) {
      for (int64_t k = 0; k < 2; ++k) {
        dx[i * cols + k] += gv[i * 2 + k];
      }
    }
    return {tensor(dx, {rows, cols}, DType::Float64)};
  }
};
mistakes::Case make() {
  Generator gen(302);
  Tensor x = randn({3, 5}, DType::Float64, &gen);
  x.requires_grad_();
  std::vector<Tensor> inputs{x};
  return {"gather-grad-at-output-position",
          "gather along dim 1, y[i, k] = x[i, idx[i, k]] with x (3, 5) and idx = ((3, 0), (4, 2), (1, 3)): the backward adds g[i, k] into dx[i, k], the output's own column, instead of scattering it to the column it was read from, dx[i, idx[i, k]] += g[i, k]",
          inputs,
          [](const std::vector<Tensor>& in) { return GatherCols::apply(in[0]); },
          std::vector<std::string>{"the gradient on the wrong entries", "each output's gradient has the right total"}};
}
const mistakes::Register reg(make);
}  // namespace
