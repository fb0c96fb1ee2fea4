// Mistake: attention o = softmax(S) V with S = q k^T / sqrt(4), q (3, 4), k (3, 4), v (3, 2): the softmax Jacobian's row sum forgets the weights, dS = P * (dP - rowsum(dP)), instead of dS = P * (dP - rowsum(dP * P)), with dP = G V^T; dq = dS k / 2 and dk = dS^T q / 2 inherit the error; dV = P^T G is right
// Origin: written without sight of the checker (issue 27's sixth set; held out, judged once)
#include "case.h"
#include <vector>
namespace {
using namespace ropegrad;
struct Attention : Function<Attention> {
  static constexpr const char* name = "attention";
  static Tensor forward(FunctionCtx& ctx, const Tensor& q, const Tensor& k, const Tensor& v) {
    Tensor p = softmax(matmul(q, transpose(k, 0, 1)) / 2.0, 1);
    ctx.save_for_backward({q, k, v, p});
    return matmul(p, v);
  }
  static Grads backward(FunctionCtx& ctx, const Tensor& g) {
    const auto s = ctx.saved_tensors();
    const Tensor &q = s[0], &k = s[1], &v = s[2], &p = s[3];
    Tensor dp = matmul(g, transpose(v, 0, 1));
    Tensor ds = p * (dp - sum(dp, {1}, true));  // the row sum must weight dP by P: rowsum(dP * P)
    Tensor dq = matmul(ds, k) / 2.0;
    Tensor dk = matmul(transpose(ds, 0, 1), q) / 2.0;
    Tensor dv = matmul(transpose(p, 0, 1), g);
    return {dq, dk, dv};
  }
};
mistakes::Case make() {
  Generator gen(6104);
  Tensor q = randn({3, 4}, DType::Float64, &gen);
  Tensor k = randn({3, 4}, DType::Float64, &gen);
  Tensor v = randn({3, 2}, DType::Float64, &gen);
  q.requires_grad_();
  k.requires_grad_();
  v.requires_grad_();
  std::vector<Tensor> inputs{q, k, v};
  return {"u6-attention-softmax-rowsum-unweighted",
          "Mistake: attention o = softmax(S) V with S = q k^T / sqrt(4), q (3, 4), k (3, 4), v (3, 2): the softmax "
          "Jacobian's row sum forgets the weights, dS = P * (dP - rowsum(dP)), instead of dS = P * (dP - rowsum(dP * "
          "P)), with dP = G V^T; dq = dS k / 2 and dk = dS^T q / 2 inherit the error; dV = P^T G is right",
          inputs, [](const std::vector<Tensor>& in) { return Attention::apply(in[0], in[1], in[2]); }};
}
const mistakes::Register reg(make);
}  // namespace
