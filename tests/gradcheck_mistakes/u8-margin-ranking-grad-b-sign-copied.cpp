// Mistake: margin ranking loss L = max(0, -y (a - b) + 0.5) elementwise with a, b (2, 4) and fixed labels y = +-1 (not checked; active at the flat entries 0, 3, 6 and 7): the gradient for b copies a's line, db = -g y on the active entries, and loses the minus of -(a - b) (correct: db = +g y where the margin is active, 0 elsewhere); da = -g y on the active entries is right
// Origin: written without sight of the checker (issue 27's eighth set; the half worked from)
#include "case.h"
#include <vector>
namespace {
using namespace ropegrad;
struct MarginRanking : Function<MarginRanking> {
  static constexpr const char* name = "margin_ranking";
  static Tensor forward(FunctionCtx& ctx, const Tensor& a, const Tensor& b, const Tensor& y) {
    ctx.save_for_backward({a, b, y});
    return relu(-y * (a - b) + 0.5);
  }
  static Grads backward(FunctionCtx& ctx, const Tensor& g) {
    const auto s = ctx.saved_tensors();
    const Tensor &a = s[0], &b = s[1], &y = s[2];
    const Tensor active = gt(-y * (a - b) + 0.5, 0.0);
    const Tensor zero = zeros_like(g);
    Tensor da = where(active, -g * y, zero);
    Tensor db = where(active, -g * y, zero);
    return {da, db, Tensor()};
  }
};
mistakes::Case make() {
  Tensor a = tensor({0.3, -1.2, 0.8, 0.1, -0.4, 1.5, -0.9, 0.6}, {2, 4}, DType::Float64);
  Tensor b = tensor({1.1, -0.2, -0.5, 0.4, 0.7, 0.2, -1.6, -0.3}, {2, 4}, DType::Float64);
  Tensor y = tensor({1.0, -1.0, 1.0, 1.0, -1.0, 1.0, -1.0, -1.0}, {2, 4}, DType::Float64);
  a.requires_grad_();
  b.requires_grad_();
  std::vector<Tensor> inputs{a, b, y};
  return {"u8-margin-ranking-grad-b-sign-copied",
          "margin ranking loss L = max(0, -y (a - b) + 0.5) elementwise with a, b (2, 4) and fixed labels y = +-1 (not checked; active at the flat entries 0, 3, 6 and 7): the gradient for b copies a's line, db = -g y on the active entries, and loses the minus of -(a - b) (correct: db = +g y where the margin is active, 0 elsewhere); da = -g y on the active entries is right",
          inputs, [](const std::vector<Tensor>& in) { return MarginRanking::apply(in[0], in[1], in[2]); }};
}
const mistakes::Register reg(make);
}  // namespace
