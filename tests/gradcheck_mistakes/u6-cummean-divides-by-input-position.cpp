// Mistake: cumulative mean along the last dim, x (2, 5), y_j = sum_{k <= j} x_k / (j + 1): the backward divides by the input's own count instead of each output's, dx_k = sum_{j >= k} g_j / (k + 1), where dx_k = sum_{j >= k} g_j / (j + 1) belongs (only the last position, k = 4, is right)
// Origin: written without sight of the checker (issue 27's sixth set; worked from)
#include "case.h"
#include <vector>
namespace {
using namespace ropegrad;
struct CumMean : Function<CumMean> {
  static constexpr const char* name = "cummean";
  static Tensor forward(FunctionCtx&, const Tensor& x) {
    const std::vector<double> xv = x.to_vector<double>();
    std::vector<double> y(2 * 5);
    for (int r = 0; r < 2; ++r) {
      double s = 0.0;
      for (int j = 0; j < 5; ++j) {
        s += xv[r * 5 + j];
        y[r * 5 + j] = s / (j + 1);
      }
    }
    return tensor(y, {2, 5}, DType::Float64);
  }
  static Grads backward(FunctionCtx&, const Tensor& g) {
    const std::vector<double> gv = g.to_vector<double>();
    std::vector<double> dx(2 * 5);
    for (int r = 0; r < 2; ++r)
      for (int k = 0; k < 5; ++k) {
        double s = 0.0;
        for (int j = k; j < 5; ++j) s += gv[r * 5 + j];
        dx[r * 5 + k] = s / (k + 1);  // each g_j must be divided by its own output's count j + 1
      }
    return {tensor(dx, {2, 5}, DType::Float64)};
  }
};
mistakes::Case make() {
  Generator gen(6107);
  Tensor x = randn({2, 5}, DType::Float64, &gen);
  x.requires_grad_();
  std::vector<Tensor> inputs{x};
  return {"u6-cummean-divides-by-input-position",
          "Mistake: cumulative mean along the last dim, x (2, 5), y_j = sum_{k <= j} x_k / (j + 1): the backward "
          "divides by the input's own count instead of each output's, dx_k = sum_{j >= k} g_j / (k + 1), where dx_k = "
          "sum_{j >= k} g_j / (j + 1) belongs (only the last position, k = 4, is right)",
          inputs, [](const std::vector<Tensor>& in) { return CumMean::apply(in[0]); }};
}
const mistakes::Register reg(make);
}  // namespace
