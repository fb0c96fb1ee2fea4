// Mistake: attention o = softmax(S) V with S = q k^T / sqrt(4), q (2, 4), k (3, 4), v (3, 2): the softmax Jacobian in the backward takes the saved scores S where the weights P = softmax(S) belong, dS = S * (dP - rowsum(dP * S)) instead of P * (dP - rowsum(dP * P)), with dP = G V^T; dq = dS k / 2 and dk = dS^T q / 2 inherit the error; dV = P^T G is right
// Origin: written without sight of the checker (issue 27's third set; worked from)
#include "case.h"
#include <vector>
namespace {
using namespace ropegrad;
struct TinyAttention : Function<TinyAttention> {
  static constexpr const char* name = "tiny_attention";
  static Tensor forward(FunctionCtx& ctx, const Tensor& q, const Tensor& k, const Tensor& v) {
    const Tensor s = matmul(q, transpose(k, 0, 1)) / 2.0;  // 1 / sqrt(d), d = 4
    const Tensor p = softmax(s, 1);
    ctx.save_for_backward({q, k, v, s, p});
    return matmul(p, v);
  }
  static Grads backward(FunctionCtx& ctx, const Tensor& g) {
    const auto saved = ctx.saved_tensors();
    const Tensor q = saved[0], k = saved[1], v = saved[2];
    const Tensor w = saved[3];  // the attention weights
    const Tensor p = saved[4];
    const Tensor dv = matmul(transpose(p, 0, 1), g);
    const Tensor dp = matmul(g, transpose(v, 0, 1));
    const Tensor ds = w * (dp - sum(dp * w, {1}, true));
    const Tensor dq = matmul(ds, k) / 2.0;
    const Tensor dk = matmul(transpose(ds, 0, 1), q) / 2.0;
    return {dq, dk, dv};
  }
};
mistakes::Case make() {
  Generator gen(309);
  Tensor q = randn({2, 4}, DType::Float64, &gen);
  Tensor k = randn({3, 4}, DType::Float64, &gen);
  Tensor v = randn({3, 2}, DType::Float64, &gen);
  q.requires_grad_();
  k.requires_grad_();
  v.requires_grad_();
  std::vector<Tensor> inputs{q, k, v};
  return {"attention-jacobian-uses-scores",
          "attention o = softmax(S) V with S = q k^T / sqrt(4), q (2, 4), k (3, 4), v (3, 2): the softmax Jacobian in the backward takes the saved scores S where the weights P = softmax(S) belong, dS = S * (dP - rowsum(dP * S)) instead of P * (dP - rowsum(dP * P)), with dP = G V^T; dq = dS k / 2 and dk = dS^T q / 2 inherit the error; dV = P^T G is right",
          inputs,
          [](const std::vector<Tensor>& in) { return TinyAttention::apply(in[0], in[1], in[2]); },
          std::vector<std::string>{},
          std::vector<std::string>{"observed: input 0's gradient is wrong", "input 2's is right"}};
}
const mistakes::Register reg(make);
}  // namespace
