// Mistake: Row-wise L2 normalisation y = x / ||x|| over dim 1 on x of shape [3, 4]. The backward has the right projection shape (g - y * <g, .>) / ||x|| but takes the dot product with the saved raw input x instead of the normalised y: dx = (g - y * sum(g * x)) / ||x||, which is off by a factor ||x|| in the projected part. The correct rule is dx = (g - y * sum(g * y, dim 1, keepdim)) / ||x||.
// Origin: written without sight of the checker (issue 27's ninth set; the held-out half: judged once)
#include "case.h"
#include <algorithm>
#include <any>
#include <cmath>
#include <vector>
namespace {
using namespace ropegrad;
struct L2Normalize : Function<L2Normalize> {
  static constexpr const char* name = "l2_normalize_rows";
  static Tensor forward(FunctionCtx& ctx, const Tensor& x) {
    Tensor n = sqrt(sum(x * x, {1}, true));
    Tensor y = x / n;
    ctx.save_for_backward({x, y, n});
    return y;
  }
  static Grads backward(FunctionCtx& ctx, const Tensor& g) {
    const auto s = ctx.saved_tensors();
    const Tensor x = s[0], y = s[1], n = s[2];
    return {(g - y * sum(g * x, {1}, true)) / n};
  }
};
mistakes::Case make() {
  Generator gen(9115);
  Tensor x = randn({3, 4}, DType::Float64, &gen) * 2.0;
  x.requires_grad_();
  std::vector<Tensor> inputs{x};
  return {"u9-l2-normalize-projection-uses-raw-input", "Row-wise L2 normalisation y = x / ||x|| over dim 1 on x of shape [3, 4]. The backward has the right projection shape (g - y * <g, .>) / ||x|| but takes the dot product with the saved raw input x instead of the normalised y: dx = (g - y * sum(g * x)) / ||x||, which is off by a factor ||x|| in the projected part. The correct rule is dx = (g - y * sum(g * y, dim 1, keepdim)) / ||x||.", inputs, [](const std::vector<Tensor>& in) { return L2Normalize::apply(in[0]); }};
}
const mistakes::Register reg(make);
}  // namespace
