// Mistake: swish with a learned slope per column, y = x sigmoid(beta x) with x (3, 4) and beta (1, 4) broadcast over the rows: the slope's gradient keeps only the inner derivative of sigmoid(beta x) and drops the outer factor x, dbeta = sum over rows of g x s (1 - s), instead of dbeta = sum over rows of g x^2 s (1 - s) (s = sigmoid(beta x)); dx = g (s + beta x s (1 - s)) is right
// Origin: written without sight of the checker (issue 27's fifth set; held out, judged once)
#include "case.h"
#include <vector>
namespace {
using namespace ropegrad;
struct SwishBeta : Function<SwishBeta> {
  static constexpr const char* name = "swish_beta";
  static Tensor forward(FunctionCtx& ctx, const Tensor& x, const Tensor& beta) {
    ctx.save_for_backward({x, beta});
    return x * sigmoid(x * beta);
  }
  static Grads backward(FunctionCtx& ctx, const Tensor& g) {
    const std::vector<Tensor> saved = ctx.saved_tensors();
    const Tensor& x = saved[0];
    const Tensor& beta = saved[1];
    Tensor s = sigmoid(x * beta);
    Tensor ds = s * (1.0 - s);
    Tensor dx = g * (s + beta * x * ds);
    Tensor dbeta = sum(g * x * ds, {0}, true);
    return {dx, dbeta};
  }
};
mistakes::Case make() {
  Generator gen(5107);
  Tensor x = randn({3, 4}, DType::Float64, &gen);
  Tensor beta = tensor({0.6, 1.3, -0.7, 1.9}, {1, 4}, DType::Float64);
  x.requires_grad_();
  beta.requires_grad_();
  std::vector<Tensor> inputs{x, beta};
  return {"u5-swish-beta-grad-outer-x-dropped", "swish with a learned slope per column, y = x sigmoid(beta x) with x (3, 4) and beta (1, 4) broadcast over the rows: the slope's gradient keeps only the inner derivative of sigmoid(beta x) and drops the outer factor x, dbeta = sum over rows of g x s (1 - s), instead of dbeta = sum over rows of g x^2 s (1 - s) (s = sigmoid(beta x)); dx = g (s + beta x s (1 - s)) is right", inputs,
          [](const std::vector<Tensor>& in) { return SwishBeta::apply(in[0], in[1]); }};
}
const mistakes::Register reg(make);
}  // namespace
