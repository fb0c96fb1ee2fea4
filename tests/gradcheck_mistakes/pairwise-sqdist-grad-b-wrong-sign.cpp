// Mistake: pairwise squared distances D_ij = ||a_i - b_j||^2: the gradient for b has the wrong sign, db_j = +2 sum_i g_ij (a_i - b_j) instead of -2 sum_i g_ij (a_i - b_j); da is right
#include "case.h"
#include <any>
#include <cmath>
#include <limits>
namespace {
using namespace ropegrad;
struct PairwiseSqDist : Function<PairwiseSqDist> {
  static constexpr const char* name = "pairwise_sqdist";
  static Tensor forward(FunctionCtx& ctx, const Tensor& a, const Tensor& b) {
    ctx.save_for_backward({a, b});
    Tensor diff = unsqueeze(a, 1) - unsqueeze(b, 0);
    return sum(diff * diff, {2});
  }
  static Grads backward(FunctionCtx& ctx, const Tensor& g) {
    const auto saved = ctx.saved_tensors();
    const Tensor a = saved[0], b = saved[1];
    const Tensor diff = unsqueeze(a, 1) - unsqueeze(b, 0);
    const Tensor gk = unsqueeze(g, 2);
    Tensor da = 2.0 * sum(gk * diff, {1});
    Tensor db = 2.0 * sum(gk * diff, {0});
    return {da, db};
  }
};
mistakes::Case make() {
  Generator gen(119);
  Tensor a = randn({3, 2}, DType::Float64, &gen);
  Tensor b = randn({4, 2}, DType::Float64, &gen);
  a.requires_grad_();
  b.requires_grad_();
  std::vector<Tensor> inputs{a, b};
  return {"pairwise-sqdist-grad-b-wrong-sign",
          "pairwise squared distances D_ij = ||a_i - b_j||^2: the gradient for b has the wrong sign, db_j = +2 sum_i g_ij (a_i - b_j) instead of -2 sum_i g_ij (a_i - b_j); da is right",
          inputs,
          [](const std::vector<Tensor>& in) { return PairwiseSqDist::apply(in[0], in[1]); },
          std::vector<std::string>{"wrong sign"}};
}
const mistakes::Register reg(make);
}  // namespace
