// Mistake: Overlapping 1-D average pooling with window 3 and stride 1 along the last dim of x of shape [2, 7], output shape [2, 5], y[i, k] = (x[i, k] + x[i, k+1] + x[i, k+2]) / 3, written with loops. The backward treats the op as one-to-one: dx[i, j] = g[i, j] / 3 for j < 5 and 0 for the last two columns, so each input only hears from the window that starts at it. The correct rule adds the share of every window that covers x[i, j]: dx[i, j] = sum over k with max(0, j-2) <= k <= min(j, 4) of g[i, k] / 3.
// Origin: written without sight of the checker (issue 27's ninth set; the half worked from)
#include "case.h"
#include <algorithm>
#include <any>
#include <cmath>
#include <vector>
namespace {
using namespace ropegrad;
struct AvgPool1d : Function<AvgPool1d> {
  static constexpr const char* name = "avgpool1d_w3";
  static Tensor forward(FunctionCtx& ctx, const Tensor& x) {
    const int64_t r = x.size(0), c = x.size(1), oc = c - 2;
    std::vector<double> v = x.to_vector<double>(), out(r * oc);
    for (int64_t i = 0; i < r; ++i)
      for (int64_t k = 0; k < oc; ++k)
        out[i * oc + k] = (v[i * c + k] + v[i * c + k + 1] + v[i * c + k + 2]) / 3.0;
    ctx.saved_data["cols"] = c;
    return tensor(out, {r, oc}, DType::Float64);
  }
  static Grads backward(FunctionCtx& ctx, const Tensor& g) {
    const int64_t c = std::any_cast<int64_t>(ctx.saved_data["cols"]);
    const int64_t r = g.size(0), oc = g.size(1);
    std::vector<double> gv = g.to_vector<double>(), dx(r * c, 0.0);
    for (int64_t i = 0; i < r; ++i)
      for (int64_t k = 0; k < oc; ++k) dx[i * c + k] = gv[i * oc + k] / 3.0;
    return {tensor(dx, {r, c}, DType::Float64)};
  }
};
mistakes::Case make() {
  Generator gen(9108);
  Tensor x = randn({2, 7}, DType::Float64, &gen);
  x.requires_grad_();
  std::vector<Tensor> inputs{x};
  return {"u9-avgpool1d-overlapping-windows-one-to-one", "Overlapping 1-D average pooling with window 3 and stride 1 along the last dim of x of shape [2, 7], output shape [2, 5], y[i, k] = (x[i, k] + x[i, k+1] + x[i, k+2]) / 3, written with loops. The backward treats the op as one-to-one: dx[i, j] = g[i, j] / 3 for j < 5 and 0 for the last two columns, so each input only hears from the window that starts at it. The correct rule adds the share of every window that covers x[i, j]: dx[i, j] = sum over k with max(0, j-2) <= k <= min(j, 4) of g[i, k] / 3.", inputs, [](const std::vector<Tensor>& in) { return AvgPool1d::apply(in[0]); }};
}
const mistakes::Register reg(make);
}  // namespace
