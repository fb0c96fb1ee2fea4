// Mistake: sum of the 2 largest entries of each row of x (3, 5): the backward routes g_i to the row's largest entry only (the argmax, as for a max) and gives the second largest 0 (correct: dx = g_i at both top-2 positions of row i, 0 elsewhere)
// Origin: written without sight of the checker (issue 27's fourth set; worked from)
#include "case.h"
#include <cstdint>
#include <vector>
namespace {
using namespace ropegrad;
struct Top2Sum : Function<Top2Sum> {
  static constexpr const char* name = "top2_sum_rows";
  // Indices of the largest and the second largest entry of row r.
  static void top2(const std::vector<double>& v, int64_t r, int64_t n, int64_t& first, int64_t& second) {
    first = 0;
    for (int64_t j = 1; j < n; ++j)
      if (v[r * n + j] > v[r * n + first]) first = j;
    second = first == 0 ? 1 : 0;
    for (int64_t j = 0; j < n; ++j)
      if (j != first && v[r * n + j] > v[r * n + second]) second = j;
  }
  static Tensor forward(FunctionCtx& ctx, const Tensor& x) {
    ctx.save_for_backward({x});
    const int64_t rows = x.size(0), n = x.size(1);
    const std::vector<double> xv = x.to_vector<double>();
    std::vector<double> yv(static_cast<size_t>(rows));
    for (int64_t r = 0; r < rows; ++r) {
      int64_t i1 = 0, i2 = 0;
      top2(xv, r, n, i1, i2);
      yv[r] = xv[r * n + i1] + xv[r * n + i2];
    }
    return tensor(yv, {rows}, DType::Float64);
  }
  static Grads backward(FunctionCtx& ctx, const Tensor& g) {
    const Tensor x = ctx.saved_tensors()[0];
    const int64_t rows = x.size(0), n = x.size(1);
    const std::vector<double> xv = x.to_vector<double>();
    const std::vector<double> gv = g.to_vector<double>();
    std::vector<double> dx(xv.size(), 0.0);
    for (int64_t r = 0; r < rows; ++r) {
      int64_t i1 = 0, i2 = 0;
      top2(xv, r, n, i1, i2);
      dx[r * n + i1] += gv[r];
    }
    return {tensor(dx, {rows, n}, DType::Float64)};
  }
};
mistakes::Case make() {
  Generator gen(416);
  Tensor x = randn({3, 5}, DType::Float64, &gen);
  x.requires_grad_();
  std::vector<Tensor> inputs{x};
  return {"top2-sum-grad-to-argmax-only",
          "sum of the 2 largest entries of each row of x (3, 5): the backward routes g_i to the row's largest entry only (the argmax, as for a max) and gives the second largest 0 (correct: dx = g_i at both top-2 positions of row i, 0 elsewhere)",
          inputs,
          [](const std::vector<Tensor>& in) { return Top2Sum::apply(in[0]); },
          std::vector<std::string>{"entries missing", "d output[0] / d input0[0, 1]"}};
}
const mistakes::Register reg(make);
}  // namespace
