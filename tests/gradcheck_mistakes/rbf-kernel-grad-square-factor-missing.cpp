// Mistake: Gaussian (RBF) kernel K_ij = exp(-||a_i - b_j||^2 / (2 s^2)) with s = 1.2, a (2, 3), b (4, 3): the backward forgets the factor 2 from the derivative of the square and divides by 2 s^2, da_i = -sum_j g_ij K_ij (a_i - b_j) / (2 s^2) and db_j = +sum_i g_ij K_ij (a_i - b_j) / (2 s^2), half the truth (correct: da_i = -sum_j g_ij K_ij (a_i - b_j) / s^2, db_j = sum_i g_ij K_ij (a_i - b_j) / s^2)
// Origin: written without sight of the checker (issue 27's fourth set; held out, judged once on gradcheck as it was then)
#include "case.h"
#include <vector>
namespace {
using namespace ropegrad;
constexpr double kS = 1.2;
struct RbfKernel : Function<RbfKernel> {
  static constexpr const char* name = "rbf_kernel";
  static Tensor forward(FunctionCtx& ctx, const Tensor& a, const Tensor& b) {
    const Tensor diff = unsqueeze(a, 1) - unsqueeze(b, 0);  // (2, 4, 3)
    const Tensor k = exp(sum(diff * diff, {2}) * (-1.0 / (2.0 * kS * kS)));
    ctx.save_for_backward({a, b, k});
    return k;
  }
  static Grads backward(FunctionCtx& ctx, const Tensor& g) {
    const auto saved = ctx.saved_tensors();
    const Tensor a = saved[0], b = saved[1], k = saved[2];
    const Tensor diff = unsqueeze(a, 1) - unsqueeze(b, 0);
    const Tensor w = unsqueeze(g * k, 2);  // (2, 4, 1)
    const Tensor da = -sum(w * diff, {1}) / (2.0 * kS * kS);
    const Tensor db = sum(w * diff, {0}) / (2.0 * kS * kS);
    return {da, db};
  }
};
mistakes::Case make() {
  Generator gen(417);
  Tensor a = randn({2, 3}, DType::Float64, &gen) * 0.8;
  Tensor b = randn({4, 3}, DType::Float64, &gen) * 0.8;
  a.requires_grad_();
  b.requires_grad_();
  std::vector<Tensor> inputs{a, b};
  return {"rbf-kernel-grad-square-factor-missing",
          "Gaussian (RBF) kernel K_ij = exp(-||a_i - b_j||^2 / (2 s^2)) with s = 1.2, a (2, 3), b (4, 3): the backward forgets the factor 2 from the derivative of the square and divides by 2 s^2, da_i = -sum_j g_ij K_ij (a_i - b_j) / (2 s^2) and db_j = +sum_i g_ij K_ij (a_i - b_j) / (2 s^2), half the truth (correct: da_i = -sum_j g_ij K_ij (a_i - b_j) / s^2, db_j = sum_i g_ij K_ij (a_i - b_j) / s^2)",
          inputs,
          [](const std::vector<Tensor>& in) { return RbfKernel::apply(in[0], in[1]); },
          std::vector<std::string>{"a factor of two"}};
}
const mistakes::Register reg(make);
}  // namespace
