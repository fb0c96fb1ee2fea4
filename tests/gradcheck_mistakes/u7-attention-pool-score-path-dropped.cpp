// Mistake: attention pooling with a learned query w, s = X w, a = softmax(s) over the 4 rows of X (4, 3), out = a^T X (3): the gradient for X keeps only the path through the pooled values, dX = a g^T, and drops the path through the scores, ds w^T with ds = a * (X g - a . (X g)) (correct: dX = a g^T + ds w^T); dw = X^T ds is right
// Origin: written without sight of the checker (issue 27's seventh set; the held-out half: judged once)
#include "case.h"
#include <vector>
namespace {
using namespace ropegrad;
struct AttentionPool : Function<AttentionPool> {
  static constexpr const char* name = "attention_pool";
  static Tensor forward(FunctionCtx& ctx, const Tensor& X, const Tensor& w) {
    Tensor s = matmul(X, unsqueeze(w, 1));  // (4, 1)
    Tensor a = softmax(s, 0);               // weights over the rows
    ctx.save_for_backward({X, w, a});
    return sum(a * X, {0});  // (3)
  }
  static Grads backward(FunctionCtx& ctx, const Tensor& g) {
    const std::vector<Tensor> saved = ctx.saved_tensors();
    const Tensor& X = saved[0];
    const Tensor& a = saved[2];
    Tensor da = matmul(X, unsqueeze(g, 1));          // (4, 1): X g
    Tensor ds = a * (da - sum(a * da, {0}, true));    // softmax backward
    Tensor dw = reshape(matmul(transpose(X, 0, 1), ds), {X.size(1)});
    Tensor dX = a * unsqueeze(g, 0);  // value path only; X also fed the scores
    return {dX, dw};
  }
};
mistakes::Case make() {
  Generator gen(7067);
  Tensor X = randn({4, 3}, DType::Float64, &gen);
  Tensor w = randn({3}, DType::Float64, &gen);
  X.requires_grad_();
  w.requires_grad_();
  std::vector<Tensor> inputs{X, w};
  return {"u7-attention-pool-score-path-dropped",
          "attention pooling with a learned query w, s = X w, a = softmax(s) over the 4 rows of X (4, 3), out = a^T X (3): the gradient for X keeps only the path through the pooled values, dX = a g^T, and drops the path through the scores, ds w^T with ds = a * (X g - a . (X g)) (correct: dX = a g^T + ds w^T); dw = X^T ds is right",
          inputs, [](const std::vector<Tensor>& in) { return AttentionPool::apply(in[0], in[1]); }};
}
const mistakes::Register reg(make);
}  // namespace
