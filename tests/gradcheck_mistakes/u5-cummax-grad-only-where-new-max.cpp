// Mistake: cumulative max along the last dim, x (2, 5) with distinct values, y_j = max_{k <= j} x_k: the backward masks g like an elementwise max, dx = g where x == y and 0 elsewhere, so only the positions that set a new running max get their own g_j and the g_j of every position whose running max was set earlier is lost (correct: each g_j goes to the running argmax, dx_k = sum of g_j over the j whose running max is x_k; here the g of y[0, 1], y[0, 3] and y[1, 2..4] belongs to x[0, 0], x[0, 2] and x[1, 1])
// Origin: written without sight of the checker (issue 27's fifth set; held out, judged once)
#include "case.h"
#include <vector>
namespace {
using namespace ropegrad;
struct CumMax : Function<CumMax> {
  static constexpr const char* name = "cummax";
  static Tensor forward(FunctionCtx& ctx, const Tensor& x) {
    const int64_t rows = x.size(0), n = x.size(1);
    const std::vector<double> xv = x.to_vector<double>();
    std::vector<double> yv(xv.size());
    for (int64_t r = 0; r < rows; ++r) {
      double best = xv[r * n];
      for (int64_t j = 0; j < n; ++j) {
        if (xv[r * n + j] > best) best = xv[r * n + j];
        yv[r * n + j] = best;
      }
    }
    Tensor y = tensor(yv, {rows, n}, DType::Float64);
    ctx.save_for_backward({x, y});
    return y;
  }
  static Grads backward(FunctionCtx& ctx, const Tensor& g) {
    const std::vector<Tensor> saved = ctx.saved_tensors();
    const Tensor& x = saved[0];
    const Tensor& y = saved[1];
    return {where(eq(x, y), g, zeros_like(g))};
  }
};
mistakes::Case make() {
  Generator gen(5103);
  Tensor x = tensor({0.3, -0.5, 1.2, 0.7, 1.9,  -0.2, 0.8, -1.1, 0.4, 0.1}, {2, 5}, DType::Float64);
  x.requires_grad_();
  std::vector<Tensor> inputs{x};
  return {"u5-cummax-grad-only-where-new-max", "cumulative max along the last dim, x (2, 5) with distinct values, y_j = max_{k <= j} x_k: the backward masks g like an elementwise max, dx = g where x == y and 0 elsewhere, so only the positions that set a new running max get their own g_j and the g_j of every position whose running max was set earlier is lost (correct: each g_j goes to the running argmax, dx_k = sum of g_j over the j whose running max is x_k; here the g of y[0, 1], y[0, 3] and y[1, 2..4] belongs to x[0, 0], x[0, 2] and x[1, 1])", inputs,
          [](const std::vector<Tensor>& in) { return CumMax::apply(in[0]); }};
}
const mistakes::Register reg(make);
}  // namespace
