// Mistake: cumulative sum down the rows (dim 0) of x (3, 4), y[i, j] = sum_{k <= i} x[k, j]: the backward takes the reverse cumulative sum of g along the last dim, dx[i, j] = sum_{l >= j} g[i, l], as for the usual cumsum over a sequence, instead of along the dim the forward summed, dx[k, j] = sum_{i >= k} g[i, j]
// Origin: written without sight of the checker (issue 27's fifth set; worked from)
#include "case.h"
#include <vector>
namespace {
using namespace ropegrad;
struct CumsumRows : Function<CumsumRows> {
  static constexpr const char* name = "cumsum_dim0";
  static Tensor forward(FunctionCtx& ctx, const Tensor& x) {
    const int64_t rows = x.size(0), cols = x.size(1);
    const std::vector<double> xv = x.to_vector<double>();
    std::vector<double> yv(xv.size());
    for (int64_t j = 0; j < cols; ++j) {
      double acc = 0.0;
      for (int64_t i = 0; i < rows; ++i) {
        acc += xv[i * cols + j];
        yv[i * cols + j] = acc;
      }
    }
    ctx.saved_data["rows"] = rows;
    return tensor(yv, {rows, cols}, DType::Float64);
  }
  static Grads backward(FunctionCtx& ctx, const Tensor& g) {
    (void)ctx;
    const int64_t rows = g.size(0), cols = g.size(1);
    const std::vector<double> gv = g.to_vector<double>();
    std::vector<double> dx(gv.size());
    for (int64_t i = 0; i < rows; ++i) {
      double acc = 0.0;
      for (int64_t j = cols - 1; j >= 0; --j) {
        acc += gv[i * cols + j];
        dx[i * cols + j] = acc;
      }
    }
    return {tensor(dx, {rows, cols}, DType::Float64)};
  }
};
mistakes::Case make() {
  Generator gen(5114);
  Tensor x = randn({3, 4}, DType::Float64, &gen);
  x.requires_grad_();
  std::vector<Tensor> inputs{x};
  return {"u5-cumsum-dim0-backward-along-last-dim", "cumulative sum down the rows (dim 0) of x (3, 4), y[i, j] = sum_{k <= i} x[k, j]: the backward takes the reverse cumulative sum of g along the last dim, dx[i, j] = sum_{l >= j} g[i, l], as for the usual cumsum over a sequence, instead of along the dim the forward summed, dx[k, j] = sum_{i >= k} g[i, j]", inputs,
          [](const std::vector<Tensor>& in) { return CumsumRows::apply(in[0]); }};
}
const mistakes::Register reg(make);
}  // namespace
