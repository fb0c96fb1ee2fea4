// Mistake: population standard deviation of each row, y = sqrt(mean((x - mean(x))^2)) with x (3, 5): the backward returns the variance's gradient, dx = 2 g (x - mean) / 5, forgetting the chain rule through the square root, the factor 1 / (2 y) (correct: dx = g (x - mean) / (5 y)); each row is 2 y_i times the truth
// Origin: written without sight of the checker (issue 27's fifth set; worked from)
#include "case.h"
#include <vector>
namespace {
using namespace ropegrad;
struct RowStd : Function<RowStd> {
  static constexpr const char* name = "row_std";
  static Tensor forward(FunctionCtx& ctx, const Tensor& x) {
    Tensor centred = x - mean(x, {1}, true);
    ctx.save_for_backward({centred});
    return sqrt(mean(centred * centred, {1}));
  }
  static Grads backward(FunctionCtx& ctx, const Tensor& g) {
    const Tensor centred = ctx.saved_tensors()[0];
    const int64_t rows = centred.size(0), n = centred.size(1);
    Tensor gcol = reshape(g, {rows, 1});
    return {2.0 * gcol * centred / n};
  }
};
mistakes::Case make() {
  Generator gen(5109);
  Tensor x = randn({3, 5}, DType::Float64, &gen);
  x.requires_grad_();
  std::vector<Tensor> inputs{x};
  return {"u5-row-std-grad-as-variance", "population standard deviation of each row, y = sqrt(mean((x - mean(x))^2)) with x (3, 5): the backward returns the variance's gradient, dx = 2 g (x - mean) / 5, forgetting the chain rule through the square root, the factor 1 / (2 y) (correct: dx = g (x - mean) / (5 y)); each row is 2 y_i times the truth", inputs,
          [](const std::vector<Tensor>& in) { return RowStd::apply(in[0]); }};
}
const mistakes::Register reg(make);
}  // namespace
