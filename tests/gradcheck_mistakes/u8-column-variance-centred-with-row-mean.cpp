// Mistake: unbiased variance of each column, v_j = sum_i (x_ij - m_j)^2 / 3 with m_j the mean of column j over the 4 rows of x (4, 3): the backward recomputes the mean over the wrong dim, the row means mean(x, dim 1), and returns dx_ij = 2 g_j (x_ij - mean_k x_ik) / 3, instead of centring with the column's own mean, dx_ij = 2 g_j (x_ij - m_j) / 3
// Origin: written without sight of the checker (issue 27's eighth set; the held-out half: judged once)
#include "case.h"
#include <vector>
namespace {
using namespace ropegrad;
struct ColumnVar : Function<ColumnVar> {
  static constexpr const char* name = "column_var";
  static Tensor forward(FunctionCtx& ctx, const Tensor& x) {
    ctx.save_for_backward({x});
    Tensor c = x - mean(x, {0}, true);
    return sum(c * c, {0}) / static_cast<double>(x.size(0) - 1);
  }
  static Grads backward(FunctionCtx& ctx, const Tensor& g) {
    const Tensor x = ctx.saved_tensors()[0];
    Tensor c = x - mean(x, {1}, true);
    return {unsqueeze(g, 0) * c * (2.0 / static_cast<double>(x.size(0) - 1))};
  }
};
mistakes::Case make() {
  Generator gen(8116);
  Tensor x = randn({4, 3}, DType::Float64, &gen);
  x.requires_grad_();
  std::vector<Tensor> inputs{x};
  return {"u8-column-variance-centred-with-row-mean",
          "unbiased variance of each column, v_j = sum_i (x_ij - m_j)^2 / 3 with m_j the mean of column j over the 4 rows of x (4, 3): the backward recomputes the mean over the wrong dim, the row means mean(x, dim 1), and returns dx_ij = 2 g_j (x_ij - mean_k x_ik) / 3, instead of centring with the column's own mean, dx_ij = 2 g_j (x_ij - m_j) / 3",
          inputs, [](const std::vector<Tensor>& in) { return ColumnVar::apply(in[0]); }};
}
const mistakes::Register reg(make);
}  // namespace
