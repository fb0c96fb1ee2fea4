// Mistake: a function with two outputs per row, out (3, 2) = [min, max] of each row of x (3, 4) with distinct values: the backward routes the two columns of g to each other's extreme, the min's g[:, 0] to the argmax and the max's g[:, 1] to the argmin, instead of dx[i, argmin_i] = g[i, 0] and dx[i, argmax_i] = g[i, 1]; the entries that are neither extreme are right (0)
// Origin: written without sight of the checker (issue 27's sixth set; held out, judged once)
#include "case.h"
#include <vector>
namespace {
using namespace ropegrad;
constexpr int R = 3, C = 4;
void extremes(const std::vector<double>& xv, int r, int& lo, int& hi) {
  lo = hi = 0;
  for (int j = 1; j < C; ++j) {
    if (xv[r * C + j] < xv[r * C + lo]) lo = j;
    if (xv[r * C + j] > xv[r * C + hi]) hi = j;
  }
}
struct RowMinMax : Function<RowMinMax> {
  static constexpr const char* name = "row_min_max";
  static Tensor forward(FunctionCtx& ctx, const Tensor& x) {
    ctx.save_for_backward({x});
    const std::vector<double> xv = x.to_vector<double>();
    std::vector<double> out(R * 2);
    for (int r = 0; r < R; ++r) {
      int lo, hi;
      extremes(xv, r, lo, hi);
      out[r * 2] = xv[r * C + lo];
      out[r * 2 + 1] = xv[r * C + hi];
    }
    return tensor(out, {R, 2}, DType::Float64);
  }
  static Grads backward(FunctionCtx& ctx, const Tensor& g) {
    const std::vector<double> xv = ctx.saved_tensors()[0].to_vector<double>(), gv = g.to_vector<double>();
    std::vector<double> dx(R * C, 0.0);
    for (int r = 0; r < R; ++r) {
      int lo, hi;
      extremes(xv, r, lo, hi);
      dx[r * C + hi] += gv[r * 2];      // the min's gradient, sent to the argmax
      dx[r * C + lo] += gv[r * 2 + 1];  // the max's gradient, sent to the argmin
    }
    return {tensor(dx, {R, C}, DType::Float64)};
  }
};
mistakes::Case make() {
  Generator gen(6114);
  Tensor x = randn({R, C}, DType::Float64, &gen);
  x.requires_grad_();
  std::vector<Tensor> inputs{x};
  return {"u6-row-min-max-pair-grads-swapped",
          "Mistake: a function with two outputs per row, out (3, 2) = [min, max] of each row of x (3, 4) with distinct "
          "values: the backward routes the two columns of g to each other's extreme, the min's g[:, 0] to the argmax "
          "and the max's g[:, 1] to the argmin, instead of dx[i, argmin_i] = g[i, 0] and dx[i, argmax_i] = g[i, 1]; "
          "the entries that are neither extreme are right (0)",
          inputs, [](const std::vector<Tensor>& in) { return RowMinMax::apply(in[0]); }};
}
const mistakes::Register reg(make);
}  // namespace
