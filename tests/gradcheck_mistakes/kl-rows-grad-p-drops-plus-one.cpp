// Mistake: row-wise KL divergence y_i = sum_j p_ij log(p_ij / q_ij) with positive p and q (2, 3): the gradient for p keeps only the log, dp = g_i log(p / q), and drops the product rule's other term p * (1 / p) = 1 (correct: dp = g_i (log(p / q) + 1)); dq = -g_i p / q is right
// Origin: written without sight of the checker (issue 27's fourth set; held out, judged once on gradcheck as it was then)
#include "case.h"
#include <vector>
namespace {
using namespace ropegrad;
struct KlRows : Function<KlRows> {
  static constexpr const char* name = "kl_rows";
  static Tensor forward(FunctionCtx& ctx, const Tensor& p, const Tensor& q) {
    ctx.save_for_backward({p, q});
    return sum(p * log(p / q), {1});
  }
  static Grads backward(FunctionCtx& ctx, const Tensor& g) {
    const auto saved = ctx.saved_tensors();
    const Tensor p = saved[0], q = saved[1];
    const Tensor gc = unsqueeze(g, 1);  // (2, 1)
    const Tensor dp = gc * log(p / q);
    const Tensor dq = -gc * p / q;
    return {dp, dq};
  }
};
mistakes::Case make() {
  Generator gen(406);
  Tensor p = rand({2, 3}, DType::Float64, &gen) * 0.8 + 0.2;
  Tensor q = rand({2, 3}, DType::Float64, &gen) * 0.8 + 0.2;
  p.requires_grad_();
  q.requires_grad_();
  std::vector<Tensor> inputs{p, q};
  return {"kl-rows-grad-p-drops-plus-one",
          "row-wise KL divergence y_i = sum_j p_ij log(p_ij / q_ij) with positive p and q (2, 3): the gradient for p keeps only the log, dp = g_i log(p / q), and drops the product rule's other term p * (1 / p) = 1 (correct: dp = g_i (log(p / q) + 1)); dq = -g_i p / q is right",
          inputs,
          [](const std::vector<Tensor>& in) { return KlRows::apply(in[0], in[1]); },
          std::vector<std::string>{"off by an added term", "one constant c (c = -1)"}};
}
const mistakes::Register reg(make);
}  // namespace
