// Mistake: Weighted row sum of squares y_r = sum_k a[r, k]^2 * b[r, k], with a and b both of shape [3, 4] and output shape [3]. The backward computes both formulas correctly, da = 2 * a * b * g and db = a^2 * g (g broadcast over dim 1), but returns them in the wrong order, {db, da}, so a receives a^2 * g and b receives 2 * a * b * g; the equal shapes hide the swap. The correct return is {da, db}, in the order of forward arguments.
// Origin: written without sight of the checker (issue 27's ninth set; the held-out half: judged once)
#include "case.h"
#include <algorithm>
#include <any>
#include <cmath>
#include <vector>
namespace {
using namespace ropegrad;
struct WeightedSquareSum : Function<WeightedSquareSum> {
  static constexpr const char* name = "weighted_square_sum";
  static Tensor forward(FunctionCtx& ctx, const Tensor& a, const Tensor& b) {
    ctx.save_for_backward({a, b});
    return sum(a * a * b, {1});
  }
  static Grads backward(FunctionCtx& ctx, const Tensor& g) {
    const Tensor a = ctx.saved_tensors()[0], b = ctx.saved_tensors()[1];
    Tensor gc = unsqueeze(g, 1);
    Tensor da = 2.0 * a * b * gc;
    Tensor db = a * a * gc;
    return {db, da};
  }
};
mistakes::Case make() {
  Generator gen(9118);
  Tensor a = randn({3, 4}, DType::Float64, &gen), b = randn({3, 4}, DType::Float64, &gen);
  a.requires_grad_();
  b.requires_grad_();
  std::vector<Tensor> inputs{a, b};
  return {"u9-weighted-square-sum-grads-returned-swapped", "Weighted row sum of squares y_r = sum_k a[r, k]^2 * b[r, k], with a and b both of shape [3, 4] and output shape [3]. The backward computes both formulas correctly, da = 2 * a * b * g and db = a^2 * g (g broadcast over dim 1), but returns them in the wrong order, {db, da}, so a receives a^2 * g and b receives 2 * a * b * g; the equal shapes hide the swap. The correct return is {da, db}, in the order of forward arguments.", inputs, [](const std::vector<Tensor>& in) { return WeightedSquareSum::apply(in[0], in[1]); }};
}
const mistakes::Register reg(make);
}  // namespace
