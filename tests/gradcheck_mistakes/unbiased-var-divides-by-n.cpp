// Mistake: unbiased variance of each row, v = sum_j (x_j - mean)^2 / (n - 1): the backward divides by n instead of n - 1, dx = 2 g (x - mean) / n instead of 2 g (x - mean) / (n - 1)
#include "case.h"
#include <vector>
namespace {
using namespace ropegrad;
struct RowVar : Function<RowVar> {
  static constexpr const char* name = "row_var";
  static Tensor forward(FunctionCtx& ctx, const Tensor& x) {
    ctx.save_for_backward({x});
    const int64_t n = x.size(-1);
    const Tensor d = x - mean(x, {-1}, true);
    return sum(d * d, {-1}) / static_cast<double>(n - 1);
  }
  static Grads backward(FunctionCtx& ctx, const Tensor& g) {
    const Tensor x = ctx.saved_tensors()[0];
    const int64_t n = x.size(-1);
    const Tensor d = x - mean(x, {-1}, true);
    return {unsqueeze(g, -1) * d * (2.0 / static_cast<double>(n))};
  }
};
mistakes::Case make() {
  Generator gen(77);
  Tensor x = randn({3, 5}, DType::Float64, &gen);
  x.requires_grad_();
  std::vector<Tensor> inputs{x};
  return {"unbiased-var-divides-by-n",
          "unbiased variance of each row, v = sum_j (x_j - mean)^2 / (n - 1): the backward divides by n instead of n - 1, dx = 2 g (x - mean) / n instead of 2 g (x - mean) / (n - 1)",
          inputs,
          [](const std::vector<Tensor>& in) { return RowVar::apply(in[0]); }};
}
const mistakes::Register reg(make);
}  // namespace
