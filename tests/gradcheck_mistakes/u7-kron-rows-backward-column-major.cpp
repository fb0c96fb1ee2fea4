// Mistake: row-wise flattened outer (Kronecker) product y[r, 3 i + j] = a[r, i] b[r, j] with a (2, 2), b (2, 3) -> y (2, 6): the backward unflattens g in column-major order, G[r, i, j] = g[r, 2 j + i] (a reshape to (2, 3, 2) then transposed), instead of the forward's row-major G[r, i, j] = g[r, 3 i + j] (a reshape to (2, 2, 3)); da = sum_j G b and db = sum_i G a inherit the wrong G (only g[r, 0] and g[r, 5] land right)
// Origin: written without sight of the checker (issue 27's seventh set; the half worked from)
#include "case.h"
#include <vector>
namespace {
using namespace ropegrad;
struct KronRows : Function<KronRows> {
  static constexpr const char* name = "kron_rows";
  static Tensor forward(FunctionCtx& ctx, const Tensor& a, const Tensor& b) {
    ctx.save_for_backward({a, b});
    const int64_t rows = a.size(0), m = a.size(1), n = b.size(1);
    return reshape(unsqueeze(a, 2) * unsqueeze(b, 1), {rows, m * n});
  }
  static Grads backward(FunctionCtx& ctx, const Tensor& g) {
    const std::vector<Tensor> saved = ctx.saved_tensors();
    const Tensor& a = saved[0];
    const Tensor& b = saved[1];
    const int64_t rows = a.size(0), m = a.size(1), n = b.size(1);
    Tensor G = transpose(reshape(g, {rows, n, m}), 1, 2);  // (rows, m, n)
    Tensor da = sum(G * unsqueeze(b, 1), {2});
    Tensor db = sum(G * unsqueeze(a, 2), {1});
    return {da, db};
  }
};
mistakes::Case make() {
  Generator gen(7079);
  Tensor a = randn({2, 2}, DType::Float64, &gen);
  Tensor b = randn({2, 3}, DType::Float64, &gen);
  a.requires_grad_();
  b.requires_grad_();
  std::vector<Tensor> inputs{a, b};
  return {"u7-kron-rows-backward-column-major",
          "row-wise flattened outer (Kronecker) product y[r, 3 i + j] = a[r, i] b[r, j] with a (2, 2), b (2, 3) -> y (2, 6): the backward unflattens g in column-major order, G[r, i, j] = g[r, 2 j + i] (a reshape to (2, 3, 2) then transposed), instead of the forward's row-major G[r, i, j] = g[r, 3 i + j] (a reshape to (2, 2, 3)); da = sum_j G b and db = sum_i G a inherit the wrong G (only g[r, 0] and g[r, 5] land right)",
          inputs, [](const std::vector<Tensor>& in) { return KronRows::apply(in[0], in[1]); }};
}
const mistakes::Register reg(make);
}  // namespace
