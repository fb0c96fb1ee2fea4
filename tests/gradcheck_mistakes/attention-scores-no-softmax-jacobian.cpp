// Mistake: attention-like o = softmax(s) V, the softmax over each row of the scores s: the gradient for s is dP = G V^T, the gradient of the weights, without the softmax's Jacobian (correct: P * (dP - rowsum(dP * P))); dV = P^T G is right
#include "case.h"
#include <vector>
namespace {
using namespace ropegrad;
struct WeightedSum : Function<WeightedSum> {
  static constexpr const char* name = "weighted_sum";
  static Tensor forward(FunctionCtx& ctx, const Tensor& s, const Tensor& v) {
    const Tensor p = softmax(s, -1);
    ctx.save_for_backward({p, v});
    return matmul(p, v);
  }
  static Grads backward(FunctionCtx& ctx, const Tensor& g) {
    const auto saved = ctx.saved_tensors();
    const Tensor p = saved[0], v = saved[1];
    const Tensor dp = matmul(g, transpose(v, 0, 1));
    return {dp, matmul(transpose(p, 0, 1), g)};
  }
};
mistakes::Case make() {
  Generator gen(909);
  Tensor s = randn({3, 4}, DType::Float64, &gen);
  Tensor v = randn({4, 2}, DType::Float64, &gen);
  s.requires_grad_();
  v.requires_grad_();
  std::vector<Tensor> inputs{s, v};
  return {"attention-scores-no-softmax-jacobian",
          "attention-like o = softmax(s) V, the softmax over each row of the scores s: the gradient for s is dP = G V^T, the gradient of the weights, without the softmax's Jacobian (correct: P * (dP - rowsum(dP * P))); dV = P^T G is right",
          inputs,
          [](const std::vector<Tensor>& in) { return WeightedSum::apply(in[0], in[1]); }};
}
const mistakes::Register reg(make);
}  // namespace
