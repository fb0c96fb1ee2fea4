// Mistake: causal linear attention o = tril(q k^T) v with q (4, 3), k (4, 3), v (4, 2): the backward forgets the causal mask on the scores' gradient, dS = G v^T instead of dS = tril(G v^T), so dq = dS k and dk = dS^T q get terms from the future pairs j > i the output never used (correct: dq = tril(G v^T) k, dk = tril(G v^T)^T q); dv = tril(q k^T)^T G is right
// Origin: written without sight of the checker (issue 27's fifth set; held out, judged once)
#include "case.h"
#include <vector>
namespace {
using namespace ropegrad;
struct CausalLinearAttention : Function<CausalLinearAttention> {
  static constexpr const char* name = "causal_linear_attention";
  static Tensor forward(FunctionCtx& ctx, const Tensor& q, const Tensor& k, const Tensor& v) {
    Tensor s = tril(matmul(q, transpose(k, 0, 1)));
    ctx.save_for_backward({q, k, v, s});
    return matmul(s, v);
  }
  static Grads backward(FunctionCtx& ctx, const Tensor& g) {
    const std::vector<Tensor> saved = ctx.saved_tensors();
    const Tensor& q = saved[0];
    const Tensor& k = saved[1];
    const Tensor& v = saved[2];
    const Tensor& s = saved[3];
    Tensor ds = matmul(g, transpose(v, 0, 1));
    Tensor dq = matmul(ds, k);
    Tensor dk = matmul(transpose(ds, 0, 1), q);
    Tensor dv = matmul(transpose(s, 0, 1), g);
    return {dq, dk, dv};
  }
};
mistakes::Case make() {
  Generator gen(5119);
  Tensor q = randn({4, 3}, DType::Float64, &gen);
  Tensor k = randn({4, 3}, DType::Float64, &gen);
  Tensor v = randn({4, 2}, DType::Float64, &gen);
  q.requires_grad_();
  k.requires_grad_();
  v.requires_grad_();
  std::vector<Tensor> inputs{q, k, v};
  return {"u5-causal-linear-attention-mask-dropped-in-backward", "causal linear attention o = tril(q k^T) v with q (4, 3), k (4, 3), v (4, 2): the backward forgets the causal mask on the scores' gradient, dS = G v^T instead of dS = tril(G v^T), so dq = dS k and dk = dS^T q get terms from the future pairs j > i the output never used (correct: dq = tril(G v^T) k, dk = tril(G v^T)^T q); dv = tril(q k^T)^T G is right", inputs,
          [](const std::vector<Tensor>& in) {
            return CausalLinearAttention::apply(in[0], in[1], in[2]);
          }};
}
const mistakes::Register reg(make);
}  // namespace
