// Mistake: attention o = softmax(S) V with S = q k^T / sqrt(4), q (2, 4), k (3, 4), v (3, 2): the gradient for V multiplies G by the saved scores S where the weights P = softmax(S) belong, dV = S^T G instead of dV = P^T G; dS = P * (dP - rowsum(dP * P)) with dP = G V^T, dq = dS k / 2 and dk = dS^T q / 2 are right
// Origin: written without sight of the checker (issue 27's eighth set; the held-out half: judged once)
#include "case.h"
#include <vector>
namespace {
using namespace ropegrad;
struct Attention : Function<Attention> {
  static constexpr const char* name = "attention";
  static Tensor forward(FunctionCtx& ctx, const Tensor& q, const Tensor& k, const Tensor& v) {
    Tensor s = matmul(q, transpose(k, 0, 1)) * 0.5;
    Tensor p = softmax(s, 1);
    ctx.save_for_backward({q, k, v, s, p});
    return matmul(p, v);
  }
  static Grads backward(FunctionCtx& ctx, const Tensor& g) {
    const auto sv = ctx.saved_tensors();
    const Tensor &q = sv[0], &k = sv[1], &v = sv[2], &s = sv[3], &p = sv[4];
    Tensor dp = matmul(g, transpose(v, 0, 1));
    Tensor ds = p * (dp - sum(dp * p, {1}, true));
    Tensor dq = matmul(ds, k) * 0.5;
    Tensor dk = matmul(transpose(ds, 0, 1), q) * 0.5;
    Tensor dv = matmul(transpose(s, 0, 1), g);
    return {dq, dk, dv};
  }
};
mistakes::Case make() {
  Generator gen(8108);
  Tensor q = randn({2, 4}, DType::Float64, &gen);
  Tensor k = randn({3, 4}, DType::Float64, &gen);
  Tensor v = randn({3, 2}, DType::Float64, &gen);
  q.requires_grad_();
  k.requires_grad_();
  v.requires_grad_();
  std::vector<Tensor> inputs{q, k, v};
  return {"u8-attention-value-grad-uses-scores",
          "attention o = softmax(S) V with S = q k^T / sqrt(4), q (2, 4), k (3, 4), v (3, 2): the gradient for V multiplies G by the saved scores S where the weights P = softmax(S) belong, dV = S^T G instead of dV = P^T G; dS = P * (dP - rowsum(dP * P)) with dP = G V^T, dq = dS k / 2 and dk = dS^T q / 2 are right",
          inputs, [](const std::vector<Tensor>& in) { return Attention::apply(in[0], in[1], in[2]); }};
}
const mistakes::Register reg(make);
}  // namespace
