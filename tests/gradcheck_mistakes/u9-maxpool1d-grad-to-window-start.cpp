// Mistake: Non-overlapping 1-D max pooling with window 2 and stride 2 along the last dim of x of shape [2, 8], output shape [2, 4], written with loops. The backward routes each output gradient g[i, k] to the first element of its window, x[i, 2k], whatever element was the maximum. The correct rule sends g[i, k] only to the argmax of the window: dx[i, 2k + a] = g[i, k] where a is the position (0 or 1) of the larger of x[i, 2k], x[i, 2k + 1], and 0 to the other.
// Origin: written without sight of the checker (issue 27's ninth set; the held-out half: judged once)
#include "case.h"
#include <algorithm>
#include <any>
#include <cmath>
#include <vector>
namespace {
using namespace ropegrad;
struct MaxPool1d : Function<MaxPool1d> {
  static constexpr const char* name = "maxpool1d_w2";
  static Tensor forward(FunctionCtx& ctx, const Tensor& x) {
    const int64_t r = x.size(0), c = x.size(1), oc = c / 2;
    std::vector<double> v = x.to_vector<double>(), out(r * oc);
    for (int64_t i = 0; i < r; ++i)
      for (int64_t k = 0; k < oc; ++k) out[i * oc + k] = std::max(v[i * c + 2 * k], v[i * c + 2 * k + 1]);
    ctx.save_for_backward({x});
    return tensor(out, {r, oc}, DType::Float64);
  }
  static Grads backward(FunctionCtx& ctx, const Tensor& g) {
    const Tensor x = ctx.saved_tensors()[0];
    const int64_t r = x.size(0), c = x.size(1), oc = c / 2;
    std::vector<double> gv = g.to_vector<double>(), dx(r * c, 0.0);
    for (int64_t i = 0; i < r; ++i)
      for (int64_t k = 0; k < oc; ++k) dx[i * c + 2 * k] = gv[i * oc + k];
    return {tensor(dx, {r, c}, DType::Float64)};
  }
};
mistakes::Case make() {
  Generator gen(9107);
  Tensor x = randn({2, 8}, DType::Float64, &gen);
  x.requires_grad_();
  std::vector<Tensor> inputs{x};
  return {"u9-maxpool1d-grad-to-window-start", "Non-overlapping 1-D max pooling with window 2 and stride 2 along the last dim of x of shape [2, 8], output shape [2, 4], written with loops. The backward routes each output gradient g[i, k] to the first element of its window, x[i, 2k], whatever element was the maximum. The correct rule sends g[i, k] only to the argmax of the window: dx[i, 2k + a] = g[i, k] where a is the position (0 or 1) of the larger of x[i, 2k], x[i, 2k + 1], and 0 to the other.", inputs, [](const std::vector<Tensor>& in) { return MaxPool1d::apply(in[0]); }};
}
const mistakes::Register reg(make);
}  // namespace
