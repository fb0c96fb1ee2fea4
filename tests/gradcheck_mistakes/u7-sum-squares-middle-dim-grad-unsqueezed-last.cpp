// Mistake: sum of squares over the middle dim, x (2, 3, 3) -> y (2, 3), y[b, k] = sum_j x[b, j, k]^2: the backward puts g back along the wrong dim, unsqueezing it at dim 2, dx[b, j, k] = 2 x[b, j, k] g[b, j], instead of at the reduced dim 1, dx[b, j, k] = 2 x[b, j, k] g[b, k] (the square 3 x 3 trailing dims hide the shape error; only the entries with j = k are right)
// Origin: written without sight of the checker (issue 27's seventh set; the held-out half: judged once)
#include "case.h"
#include <vector>
namespace {
using namespace ropegrad;
struct SumSquaresDim1 : Function<SumSquaresDim1> {
  static constexpr const char* name = "sum_squares_dim1";
  static Tensor forward(FunctionCtx& ctx, const Tensor& x) {
    ctx.save_for_backward({x});
    return sum(x * x, {1});
  }
  static Grads backward(FunctionCtx& ctx, const Tensor& g) {
    const Tensor x = ctx.saved_tensors()[0];
    Tensor dx = 2.0 * x * unsqueeze(g, 2);
    return {dx};
  }
};
mistakes::Case make() {
  Generator gen(7211);
  Tensor x = randn({2, 3, 3}, DType::Float64, &gen);
  x.requires_grad_();
  std::vector<Tensor> inputs{x};
  return {"u7-sum-squares-middle-dim-grad-unsqueezed-last",
          "sum of squares over the middle dim, x (2, 3, 3) -> y (2, 3), y[b, k] = sum_j x[b, j, k]^2: the backward puts g back along the wrong dim, unsqueezing it at dim 2, dx[b, j, k] = 2 x[b, j, k] g[b, j], instead of at the reduced dim 1, dx[b, j, k] = 2 x[b, j, k] g[b, k] (the square 3 x 3 trailing dims hide the shape error; only the entries with j = k are right)",
          inputs, [](const std::vector<Tensor>& in) { return SumSquaresDim1::apply(in[0]); }};
}
const mistakes::Register reg(make);
}  // namespace
