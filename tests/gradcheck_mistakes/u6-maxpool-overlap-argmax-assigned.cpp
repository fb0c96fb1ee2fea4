// Mistake: overlapping max pooling along the last dim with kernel 3 and stride 2, x (2, 7) -> y (2, 3), windows [2i, 2i + 2]: the backward writes dx[argmax_i] = g_i instead of adding dx[argmax_i] += g_i, so where two windows share their max (x[0, 2] for windows 0 and 1, x[1, 4] for windows 1 and 2) only the later window's gradient survives (correct: x[0, 2] gets g[0, 0] + g[0, 1], x[1, 4] gets g[1, 1] + g[1, 2]); every other entry is right
// Origin: written without sight of the checker (issue 27's sixth set; worked from)
#include "case.h"
#include <vector>
namespace {
using namespace ropegrad;
int window_argmax(const std::vector<double>& xv, int r, int i) {
  int best = 2 * i;
  for (int k = 1; k < 3; ++k)
    if (xv[r * 7 + 2 * i + k] > xv[r * 7 + best]) best = 2 * i + k;
  return best;
}
struct MaxPoolOverlap : Function<MaxPoolOverlap> {
  static constexpr const char* name = "max_pool_overlap";
  static Tensor forward(FunctionCtx& ctx, const Tensor& x) {
    ctx.save_for_backward({x});
    const std::vector<double> xv = x.to_vector<double>();
    std::vector<double> y(2 * 3);
    for (int r = 0; r < 2; ++r)
      for (int i = 0; i < 3; ++i) y[r * 3 + i] = xv[r * 7 + window_argmax(xv, r, i)];
    return tensor(y, {2, 3}, DType::Float64);
  }
  static Grads backward(FunctionCtx& ctx, const Tensor& g) {
    const std::vector<double> xv = ctx.saved_tensors()[0].to_vector<double>(), gv = g.to_vector<double>();
    std::vector<double> dx(2 * 7, 0.0);
    for (int r = 0; r < 2; ++r)
      for (int i = 0; i < 3; ++i) dx[r * 7 + window_argmax(xv, r, i)] = gv[r * 3 + i];  // = where += belongs
    return {tensor(dx, {2, 7}, DType::Float64)};
  }
};
mistakes::Case make() {
  const std::vector<double> xs{0.1, -0.4, 1.5, 0.3, -0.7, 0.9, 0.2,  //
                               0.6, -1.1, 0.2, -0.3, 1.2, 0.8, -0.5};
  Tensor x = tensor(xs, {2, 7}, DType::Float64);
  x.requires_grad_();
  std::vector<Tensor> inputs{x};
  return {"u6-maxpool-overlap-argmax-assigned",
          "Mistake: overlapping max pooling along the last dim with kernel 3 and stride 2, x (2, 7) -> y (2, 3), "
          "windows [2i, 2i + 2]: the backward writes dx[argmax_i] = g_i instead of adding dx[argmax_i] += g_i, so "
          "where two windows share their max (x[0, 2] for windows 0 and 1, x[1, 4] for windows 1 and 2) only the "
          "later window's gradient survives (correct: x[0, 2] gets g[0, 0] + g[0, 1], x[1, 4] gets g[1, 1] + g[1, "
          "2]); every other entry is right",
          inputs, [](const std::vector<Tensor>& in) { return MaxPoolOverlap::apply(in[0]); }};
}
const mistakes::Register reg(make);
}  // namespace
