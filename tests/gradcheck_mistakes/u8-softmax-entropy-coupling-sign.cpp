// Mistake: entropy of the softmax of each row, H_i = -sum_j p_ij log p_ij with p = softmax(z), z (3, 4): the backward subtracts the entropy where it must add it, dz = -g_i p (log p - H_i), instead of dz = -g_i p (log p + H_i) (from the softmax Jacobian applied to dH/dp = -(log p + 1))
// Origin: written without sight of the checker (issue 27's eighth set; the half worked from)
#include "case.h"
#include <vector>
namespace {
using namespace ropegrad;
struct SoftmaxEntropy : Function<SoftmaxEntropy> {
  static constexpr const char* name = "softmax_entropy";
  static Tensor forward(FunctionCtx& ctx, const Tensor& z) {
    Tensor logp = log_softmax(z, 1);
    Tensor h = -sum(exp(logp) * logp, {1});
    ctx.save_for_backward({logp, h});
    return h;
  }
  static Grads backward(FunctionCtx& ctx, const Tensor& g) {
    const auto s = ctx.saved_tensors();
    const Tensor logp = s[0];
    const Tensor h = unsqueeze(s[1], 1);
    return {-unsqueeze(g, 1) * exp(logp) * (logp - h)};
  }
};
mistakes::Case make() {
  Generator gen(8112);
  Tensor z = randn({3, 4}, DType::Float64, &gen);
  z.requires_grad_();
  std::vector<Tensor> inputs{z};
  return {"u8-softmax-entropy-coupling-sign",
          "entropy of the softmax of each row, H_i = -sum_j p_ij log p_ij with p = softmax(z), z (3, 4): the backward subtracts the entropy where it must add it, dz = -g_i p (log p - H_i), instead of dz = -g_i p (log p + H_i) (from the softmax Jacobian applied to dH/dp = -(log p + 1))",
          inputs, [](const std::vector<Tensor>& in) { return SoftmaxEntropy::apply(in[0]); }};
}
const mistakes::Register reg(make);
}  // namespace
