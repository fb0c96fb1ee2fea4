// Mistake: y = sum_j softmax(x)_j x_j per row: the backward differentiates only the weights, dx_j = g p_j (x_j - y), and drops the direct term g p_j from the x_j being averaged (correct: g p_j (1 + x_j - y))
#include "case.h"
#include <any>
#include <cmath>
#include <limits>
namespace {
using namespace ropegrad;
struct SoftmaxWeightedMean : Function<SoftmaxWeightedMean> {
  static constexpr const char* name = "softmax_weighted_mean";
  static Tensor forward(FunctionCtx& ctx, const Tensor& x) {
    Tensor p = softmax(x, -1);
    Tensor y = sum(p * x, {-1}, true);
    ctx.save_for_backward({x, p, y});
    return squeeze(y, -1);
  }
  static Grads backward(FunctionCtx& ctx, const Tensor& g) {
    const auto saved = ctx.saved_tensors();
    const Tensor x = saved[0], p = saved[1], y = saved[2];
    return {unsqueeze(g, -1) * p * (x - y)};
  }
};
mistakes::Case make() {
  Generator gen(122);
  Tensor x = randn({3, 5}, DType::Float64, &gen);
  x.requires_grad_();
  std::vector<Tensor> inputs{x};
  return {"softmax-weighted-mean-missing-direct-term",
          "y = sum_j softmax(x)_j x_j per row: the backward differentiates only the weights, dx_j = g p_j (x_j - y), and drops the direct term g p_j from the x_j being averaged (correct: g p_j (1 + x_j - y))",
          inputs,
          [](const std::vector<Tensor>& in) { return SoftmaxWeightedMean::apply(in[0]); },
          std::vector<std::string>{},
          std::vector<std::string>{"observed: ", "all 15 nonzero ones of the numerical Jacobian", "the numerical Jacobian sums to 1", "the analytical one to 0"}};
}
const mistakes::Register reg(make);
}  // namespace
