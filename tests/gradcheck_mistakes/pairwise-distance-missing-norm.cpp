// Mistake: pairwise Euclidean distances D_ij = ||a_i - b_j||: the backward uses half the squared distance's gradient, da_i = sum_j g_ij (a_i - b_j) and db_j = -sum_i g_ij (a_i - b_j), without dividing each term by D_ij (correct: da_i = sum_j g_ij (a_i - b_j) / D_ij, db_j = -sum_i g_ij (a_i - b_j) / D_ij)
#include "case.h"
#include <vector>
namespace {
using namespace ropegrad;
struct PairwiseDistance : Function<PairwiseDistance> {
  static constexpr const char* name = "pairwise_distance";
  static Tensor forward(FunctionCtx& ctx, const Tensor& a, const Tensor& b) {
    ctx.save_for_backward({a, b});
    const Tensor diff = unsqueeze(a, 1) - unsqueeze(b, 0);  // (3, 4, 2)
    return sqrt(sum(diff * diff, {-1}));                     // (3, 4)
  }
  static Grads backward(FunctionCtx& ctx, const Tensor& g) {
    const auto saved = ctx.saved_tensors();
    const Tensor a = saved[0], b = saved[1];
    const Tensor diff = unsqueeze(a, 1) - unsqueeze(b, 0);
    const Tensor w = unsqueeze(g, -1) * diff;
    return {sum(w, {1}), neg(sum(w, {0}))};
  }
};
mistakes::Case make() {
  Generator gen(1357);
  Tensor a = randn({3, 2}, DType::Float64, &gen);
  Tensor b = randn({4, 2}, DType::Float64, &gen) + 0.5;
  a.requires_grad_();
  b.requires_grad_();
  std::vector<Tensor> inputs{a, b};
  return {"pairwise-distance-missing-norm",
          "pairwise Euclidean distances D_ij = ||a_i - b_j||: the backward uses half the squared distance's gradient, da_i = sum_j g_ij (a_i - b_j) and db_j = -sum_i g_ij (a_i - b_j), without dividing each term by D_ij (correct: da_i = sum_j g_ij (a_i - b_j) / D_ij, db_j = -sum_i g_ij (a_i - b_j) / D_ij)",
          inputs,
          [](const std::vector<Tensor>& in) { return PairwiseDistance::apply(in[0], in[1]); }};
}
const mistakes::Register reg(make);
}  // namespace
