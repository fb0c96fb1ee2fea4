// Mistake: min-max normalisation of each row, y = (x - min) / (max - min) with x (3, 5) of distinct values: the backward treats the row's min and max as constants, dx = g / R with R = max - min, and drops the terms at the two extremes (correct: dx_k = g_k / R + [k = argmin] sum_j g_j (y_j - 1) / R - [k = argmax] sum_j g_j y_j / R); the entries that are neither the min nor the max are right
// Origin: written without sight of the checker (issue 27's sixth set; held out, judged once)
#include "case.h"
#include <vector>
namespace {
using namespace ropegrad;
constexpr int R = 3, C = 5;
void extremes(const std::vector<double>& xv, int r, int& lo, int& hi) {
  lo = hi = 0;
  for (int j = 1; j < C; ++j) {
    if (xv[r * C + j] < xv[r * C + lo]) lo = j;
    if (xv[r * C + j] > xv[r * C + hi]) hi = j;
  }
}
struct MinMaxNorm : Function<MinMaxNorm> {
  static constexpr const char* name = "minmax_normalise";
  static Tensor forward(FunctionCtx& ctx, const Tensor& x) {
    ctx.save_for_backward({x});
    const std::vector<double> xv = x.to_vector<double>();
    std::vector<double> y(R * C);
    for (int r = 0; r < R; ++r) {
      int lo, hi;
      extremes(xv, r, lo, hi);
      const double mn = xv[r * C + lo], range = xv[r * C + hi] - mn;
      for (int j = 0; j < C; ++j) y[r * C + j] = (xv[r * C + j] - mn) / range;
    }
    return tensor(y, {R, C}, DType::Float64);
  }
  static Grads backward(FunctionCtx& ctx, const Tensor& g) {
    const std::vector<double> xv = ctx.saved_tensors()[0].to_vector<double>(), gv = g.to_vector<double>();
    std::vector<double> dx(R * C);
    for (int r = 0; r < R; ++r) {
      int lo, hi;
      extremes(xv, r, lo, hi);
      const double range = xv[r * C + hi] - xv[r * C + lo];
      for (int j = 0; j < C; ++j) dx[r * C + j] = gv[r * C + j] / range;  // min and max treated as constants
    }
    return {tensor(dx, {R, C}, DType::Float64)};
  }
};
mistakes::Case make() {
  Generator gen(6112);
  Tensor x = randn({R, C}, DType::Float64, &gen);
  x.requires_grad_();
  std::vector<Tensor> inputs{x};
  return {"u6-minmax-normalise-range-held-constant",
          "Mistake: min-max normalisation of each row, y = (x - min) / (max - min) with x (3, 5) of distinct values: "
          "the backward treats the row's min and max as constants, dx = g / R with R = max - min, and drops the terms "
          "at the two extremes (correct: dx_k = g_k / R + [k = argmin] sum_j g_j (y_j - 1) / R - [k = argmax] sum_j "
          "g_j y_j / R); the entries that are neither the min nor the max are right",
          inputs, [](const std::vector<Tensor>& in) { return MinMaxNorm::apply(in[0]); }};
}
const mistakes::Register reg(make);
}  // namespace
