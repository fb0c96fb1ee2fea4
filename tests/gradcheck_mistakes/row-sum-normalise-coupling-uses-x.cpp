// Mistake: y = x / sum(x) per row: the coupling term of the backward uses sum(g * x) where it needs sum(g * y) (= sum(g * x) / s): dx = (g - sum(g * x)) / s instead of (g - sum(g * y)) / s
#include "case.h"
#include <any>
#include <cmath>
#include <limits>
namespace {
using namespace ropegrad;
struct RowSumNormalise : Function<RowSumNormalise> {
  static constexpr const char* name = "row_sum_normalise";
  static Tensor forward(FunctionCtx& ctx, const Tensor& x) {
    Tensor s = sum(x, {-1}, true);
    ctx.save_for_backward({x, s});
    return x / s;
  }
  static Grads backward(FunctionCtx& ctx, const Tensor& g) {
    const auto saved = ctx.saved_tensors();
    const Tensor x = saved[0], s = saved[1];
    return {(g - sum(g * x, {-1}, true)) / s};
  }
};
mistakes::Case make() {
  Generator gen(114);
  Tensor x = rand({3, 4}, DType::Float64, &gen) + 0.5;
  x.requires_grad_();
  std::vector<Tensor> inputs{x};
  return {"row-sum-normalise-coupling-uses-x",
          "y = x / sum(x) per row: the coupling term of the backward uses sum(g * x) where it needs sum(g * y) (= sum(g * x) / s): dx = (g - sum(g * x)) / s instead of (g - sum(g * y)) / s",
          inputs,
          [](const std::vector<Tensor>& in) { return RowSumNormalise::apply(in[0]); },
          std::vector<std::string>{"off by an added term", "coupling term"}};
}
const mistakes::Register reg(make);
}  // namespace
