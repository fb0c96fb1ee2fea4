// Mistake: batch normalisation without affine, xhat = (x - mean) / sqrt(var + 1e-5) with each column's statistics taken over the batch, dim 0, of x (3, 4): the backward's two means run over dim 1, the features of each row, dx = rstd (g - mean(g, dim 1) - xhat mean(g xhat, dim 1)), instead of over the batch the statistics came from, dx = rstd (g - mean(g, dim 0) - xhat mean(g xhat, dim 0)) (rstd per column)
// Origin: written without sight of the checker (issue 27's fourth set; worked from)
#include "case.h"
#include <vector>
namespace {
using namespace ropegrad;
struct BatchNorm : Function<BatchNorm> {
  static constexpr const char* name = "batch_norm_plain";
  static Tensor forward(FunctionCtx& ctx, const Tensor& x) {
    const Tensor mu = mean(x, {0}, true);  // (1, 4)
    const Tensor c = x - mu;
    const Tensor var = mean(c * c, {0}, true);
    const Tensor rstd = rsqrt(var + 1e-5);
    const Tensor xhat = c * rstd;
    ctx.save_for_backward({xhat, rstd});
    return xhat;
  }
  static Grads backward(FunctionCtx& ctx, const Tensor& g) {
    const auto saved = ctx.saved_tensors();
    const Tensor xhat = saved[0], rstd = saved[1];
    const Tensor dx = rstd * (g - mean(g, {1}, true) - xhat * mean(g * xhat, {1}, true));
    return {dx};
  }
};
mistakes::Case make() {
  Generator gen(407);
  Tensor x = randn({3, 4}, DType::Float64, &gen) * 1.5 + 0.3;
  x.requires_grad_();
  std::vector<Tensor> inputs{x};
  return {"batchnorm-backward-means-over-features",
          "batch normalisation without affine, xhat = (x - mean) / sqrt(var + 1e-5) with each column's statistics taken over the batch, dim 0, of x (3, 4): the backward's two means run over dim 1, the features of each row, dx = rstd (g - mean(g, dim 1) - xhat mean(g xhat, dim 1)), instead of over the batch the statistics came from, dx = rstd (g - mean(g, dim 0) - xhat mean(g xhat, dim 0)) (rstd per column)",
          inputs,
          [](const std::vector<Tensor>& in) { return BatchNorm::apply(in[0]); },
          std::vector<std::string>{"the coupling in the wrong place", "every input of its row along dim 0"}};
}
const mistakes::Register reg(make);
}  // namespace
