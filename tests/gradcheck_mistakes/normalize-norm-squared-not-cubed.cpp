// Mistake: the backward of x / ||x|| (per row) divides the coupling term by ||x||^2 instead of ||x||^3: dx = g/n - x * sum(g * x)/n^2 (correct: g/n - x * sum(g * x)/n^3)
#include "case.h"
#include <any>
#include <cmath>
#include <limits>
namespace {
using namespace ropegrad;
struct RowNormalize : Function<RowNormalize> {
  static constexpr const char* name = "row_normalize";
  static Tensor forward(FunctionCtx& ctx, const Tensor& x) {
    Tensor n = sqrt(sum(x * x, {-1}, true));
    ctx.save_for_backward({x, n});
    return x / n;
  }
  static Grads backward(FunctionCtx& ctx, const Tensor& g) {
    const auto saved = ctx.saved_tensors();
    const Tensor x = saved[0], n = saved[1];
    return {g / n - x * sum(g * x, {-1}, true) / (n * n)};
  }
};
mistakes::Case make() {
  Generator gen(104);
  Tensor x = randn({3, 4}, DType::Float64, &gen);
  x.requires_grad_();
  std::vector<Tensor> inputs{x};
  return {"normalize-norm-squared-not-cubed",
          "the backward of x / ||x|| (per row) divides the coupling term by ||x||^2 instead of ||x||^3: dx = g/n - x * sum(g * x)/n^2 (correct: g/n - x * sum(g * x)/n^3)",
          inputs,
          [](const std::vector<Tensor>& in) { return RowNormalize::apply(in[0]); },
          std::vector<std::string>{"the coupling term scaled", "one c per row", "c = ||input0's row||"}};
}
const mistakes::Register reg(make);
}  // namespace
