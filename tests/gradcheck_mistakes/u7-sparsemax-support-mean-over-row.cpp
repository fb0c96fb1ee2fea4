// Mistake: sparsemax over each row of x (3, 4), p = max(x - tau, 0) with tau chosen so that each row sums to 1 (supports of 2, 3 and 1 entries here): the backward centres g over the whole row, dx = [p > 0] (g - mean(g over all 4 entries)), instead of over the support only, dx = [p > 0] (g - sum(g [p > 0]) / |support|); the entries off the support (0) are right
// Origin: written without sight of the checker (issue 27's seventh set; the half worked from)
#include "case.h"
#include <algorithm>
#include <functional>
#include <vector>
namespace {
using namespace ropegrad;
struct Sparsemax : Function<Sparsemax> {
  static constexpr const char* name = "sparsemax";
  static Tensor forward(FunctionCtx& ctx, const Tensor& x) {
    const int64_t rows = x.size(0), n = x.size(1);
    std::vector<double> xv = x.to_vector<double>();
    std::vector<double> pv(xv.size());
    for (int64_t r = 0; r < rows; ++r) {
      std::vector<double> z(xv.begin() + r * n, xv.begin() + (r + 1) * n);
      std::sort(z.begin(), z.end(), std::greater<double>());
      double cum = 0.0, tau = 0.0;
      for (int64_t k = 1; k <= n; ++k) {
        cum += z[k - 1];
        if (1.0 + k * z[k - 1] > cum) tau = (cum - 1.0) / k;
      }
      for (int64_t j = 0; j < n; ++j) pv[r * n + j] = std::max(xv[r * n + j] - tau, 0.0);
    }
    Tensor p = tensor(pv, x.shape(), DType::Float64);
    ctx.save_for_backward({p});
    return p;
  }
  static Grads backward(FunctionCtx& ctx, const Tensor& g) {
    const Tensor p = ctx.saved_tensors()[0];
    const int64_t rows = p.size(0), n = p.size(1);
    std::vector<double> pv = p.to_vector<double>();
    std::vector<double> gv = g.to_vector<double>();
    std::vector<double> dx(pv.size(), 0.0);
    for (int64_t r = 0; r < rows; ++r) {
      double gsum = 0.0;
      for (int64_t j = 0; j < n; ++j) gsum += gv[r * n + j];
      const double gmean = gsum / static_cast<double>(n);
      for (int64_t j = 0; j < n; ++j)
        if (pv[r * n + j] > 0) dx[r * n + j] = gv[r * n + j] - gmean;
    }
    return {tensor(dx, p.shape(), DType::Float64)};
  }
};
mistakes::Case make() {
  Tensor x = tensor(std::vector<double>{0.9, 0.1, 0.6, -0.5,    //
                                        -0.3, 0.4, 0.2, 0.5,    //
                                        1.5, 0.2, -0.1, 0.3},
                    {3, 4}, DType::Float64);
  x.requires_grad_();
  std::vector<Tensor> inputs{x};
  return {"u7-sparsemax-support-mean-over-row",
          "sparsemax over each row of x (3, 4), p = max(x - tau, 0) with tau chosen so that each row sums to 1 (supports of 2, 3 and 1 entries here): the backward centres g over the whole row, dx = [p > 0] (g - mean(g over all 4 entries)), instead of over the support only, dx = [p > 0] (g - sum(g [p > 0]) / |support|); the entries off the support (0) are right",
          inputs, [](const std::vector<Tensor>& in) { return Sparsemax::apply(in[0]); }};
}
const mistakes::Register reg(make);
}  // namespace
