// Mistake: attention o = softmax(S) V with S = q k^T / sqrt(4), q (3, 4), k (3, 4), v (3, 2): the gradient for k multiplies dS by q without transposing dS, dk = dS q / 2, where dk = dS^T q / 2 belongs (the square 3x3 scores hide the shape error); dS = P * (dP - rowsum(dP * P)) with dP = G V^T, dq = dS k / 2 and dV = P^T G are right
// Origin: written without sight of the checker (issue 27's fourth set; held out, judged once on gradcheck as it was then)
#include "case.h"
#include <vector>
namespace {
using namespace ropegrad;
struct Attention : Function<Attention> {
  static constexpr const char* name = "attention_small";
  static Tensor forward(FunctionCtx& ctx, const Tensor& q, const Tensor& k, const Tensor& v) {
    const Tensor s = matmul(q, transpose(k, 0, 1)) * 0.5;  // 1 / sqrt(4)
    const Tensor p = softmax(s, 1);
    ctx.save_for_backward({q, k, v, p});
    return matmul(p, v);
  }
  static Grads backward(FunctionCtx& ctx, const Tensor& g) {
    const auto saved = ctx.saved_tensors();
    const Tensor q = saved[0], k = saved[1], v = saved[2], p = saved[3];
    const Tensor dv = matmul(transpose(p, 0, 1), g);
    const Tensor dp = matmul(g, transpose(v, 0, 1));
    const Tensor ds = p * (dp - sum(dp * p, {1}, true));
    const Tensor dq = matmul(ds, k) * 0.5;
    const Tensor dk = matmul(ds, q) * 0.5;
    return {dq, dk, dv};
  }
};
mistakes::Case make() {
  Generator gen(411);
  Tensor q = randn({3, 4}, DType::Float64, &gen);
  Tensor k = randn({3, 4}, DType::Float64, &gen);
  Tensor v = randn({3, 2}, DType::Float64, &gen);
  q.requires_grad_();
  k.requires_grad_();
  v.requires_grad_();
  std::vector<Tensor> inputs{q, k, v};
  return {"attention-key-grad-not-transposed",
          "attention o = softmax(S) V with S = q k^T / sqrt(4), q (3, 4), k (3, 4), v (3, 2): the gradient for k multiplies dS by q without transposing dS, dk = dS q / 2, where dk = dS^T q / 2 belongs (the square 3x3 scores hide the shape error); dS = P * (dP - rowsum(dP * P)) with dP = G V^T, dq = dS k / 2 and dV = P^T G are right",
          inputs,
          [](const std::vector<Tensor>& in) { return Attention::apply(in[0], in[1], in[2]); },
          std::vector<std::string>{},
          std::vector<std::string>{"observed: input 1's gradient is wrong at 72 of its 72 entries", "input 0's and input 2's are right"}};
}
const mistakes::Register reg(make);
}  // namespace
