// Mistake: Inclusive cumulative sum along dim 1, y[i, k] = sum_{j <= k} x[i, j], on x of shape [3, 5], written with loops. The backward also runs a forward (left-to-right) cumulative sum over g, dx[i, j] = sum_{k <= j} g[i, k], as if the op were its own adjoint. Each x[i, j] feeds every later output, so the correct rule is the reversed scan dx[i, j] = sum_{k >= j} g[i, k].
// Origin: written without sight of the checker (issue 27's ninth set; the held-out half: judged once)
#include "case.h"
#include <algorithm>
#include <any>
#include <cmath>
#include <vector>
namespace {
using namespace ropegrad;
struct CumSum : Function<CumSum> {
  static constexpr const char* name = "cumsum_dim1";
  static Tensor forward(FunctionCtx& ctx, const Tensor& x) {
    const int64_t r = x.size(0), c = x.size(1);
    std::vector<double> v = x.to_vector<double>(), out(v.size());
    for (int64_t i = 0; i < r; ++i) {
      double acc = 0.0;
      for (int64_t j = 0; j < c; ++j) {
        acc += v[i * c + j];
        out[i * c + j] = acc;
      }
    }
    (void)ctx;
    return tensor(out, {r, c}, DType::Float64);
  }
  static Grads backward(FunctionCtx& ctx, const Tensor& g) {
    (void)ctx;
    const int64_t r = g.size(0), c = g.size(1);
    std::vector<double> gv = g.to_vector<double>(), dx(gv.size());
    for (int64_t i = 0; i < r; ++i) {
      double acc = 0.0;
      for (int64_t j = 0; j < c; ++j) {
        acc += gv[i * c + j];
        dx[i * c + j] = acc;
      }
    }
    return {tensor(dx, {r, c}, DType::Float64)};
  }
};
mistakes::Case make() {
  Generator gen(9106);
  Tensor x = randn({3, 5}, DType::Float64, &gen);
  x.requires_grad_();
  std::vector<Tensor> inputs{x};
  return {"u9-cumsum-backward-scans-forward", "Inclusive cumulative sum along dim 1, y[i, k] = sum_{j <= k} x[i, j], on x of shape [3, 5], written with loops. The backward also runs a forward (left-to-right) cumulative sum over g, dx[i, j] = sum_{k <= j} g[i, k], as if the op were its own adjoint. Each x[i, j] feeds every later output, so the correct rule is the reversed scan dx[i, j] = sum_{k >= j} g[i, k].", inputs, [](const std::vector<Tensor>& in) { return CumSum::apply(in[0]); }};
}
const mistakes::Register reg(make);
}  // namespace
