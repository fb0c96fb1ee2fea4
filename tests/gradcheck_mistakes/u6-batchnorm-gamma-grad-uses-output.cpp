// Mistake: batch normalisation with affine, y = gamma xhat + beta, xhat = (x - mean) / sqrt(var + 1e-5) with each column's statistics over the batch, dim 0, of x (4, 3), gamma (3), beta (3): the gain's gradient uses the saved output y where the normalised input belongs, dgamma = sum over rows of g y, instead of dgamma = sum over rows of g xhat (y = gamma xhat + beta); dx = gamma rstd (g - mean(g, 0) - xhat mean(g xhat, 0)) and dbeta = sum over rows of g are right
// Origin: written without sight of the checker (issue 27's sixth set; worked from)
#include "case.h"
#include <cmath>
#include <vector>
namespace {
using namespace ropegrad;
constexpr int R = 4, C = 3;
void normalise(const std::vector<double>& xv, std::vector<double>& xhat, std::vector<double>& rstd) {
  xhat.assign(R * C, 0.0);
  rstd.assign(C, 0.0);
  for (int c = 0; c < C; ++c) {
    double m = 0.0, v = 0.0;
    for (int r = 0; r < R; ++r) m += xv[r * C + c];
    m /= R;
    for (int r = 0; r < R; ++r) v += (xv[r * C + c] - m) * (xv[r * C + c] - m);
    v /= R;
    rstd[c] = 1.0 / std::sqrt(v + 1e-5);
    for (int r = 0; r < R; ++r) xhat[r * C + c] = (xv[r * C + c] - m) * rstd[c];
  }
}
struct BatchNormAffine : Function<BatchNormAffine> {
  static constexpr const char* name = "batch_norm_affine";
  static Tensor forward(FunctionCtx& ctx, const Tensor& x, const Tensor& gamma, const Tensor& beta) {
    std::vector<double> xhat, rstd;
    normalise(x.to_vector<double>(), xhat, rstd);
    const std::vector<double> gm = gamma.to_vector<double>(), bt = beta.to_vector<double>();
    std::vector<double> y(R * C);
    for (int r = 0; r < R; ++r)
      for (int c = 0; c < C; ++c) y[r * C + c] = gm[c] * xhat[r * C + c] + bt[c];
    Tensor out = tensor(y, {R, C}, DType::Float64);
    ctx.save_for_backward({x, gamma, out});
    return out;
  }
  static Grads backward(FunctionCtx& ctx, const Tensor& g) {
    const auto s = ctx.saved_tensors();
    std::vector<double> xhat, rstd;
    normalise(s[0].to_vector<double>(), xhat, rstd);
    const std::vector<double> gm = s[1].to_vector<double>(), yv = s[2].to_vector<double>();
    const std::vector<double> gv = g.to_vector<double>();
    std::vector<double> dx(R * C), dgamma(C, 0.0), dbeta(C, 0.0);
    for (int c = 0; c < C; ++c) {
      double mg = 0.0, mgx = 0.0;
      for (int r = 0; r < R; ++r) {
        mg += gv[r * C + c];
        mgx += gv[r * C + c] * xhat[r * C + c];
        dbeta[c] += gv[r * C + c];
        dgamma[c] += gv[r * C + c] * yv[r * C + c];  // the output y where xhat belongs
      }
      mg /= R;
      mgx /= R;
      for (int r = 0; r < R; ++r)
        dx[r * C + c] = gm[c] * rstd[c] * (gv[r * C + c] - mg - xhat[r * C + c] * mgx);
    }
    return {tensor(dx, {R, C}, DType::Float64), tensor(dgamma, {C}, DType::Float64),
            tensor(dbeta, {C}, DType::Float64)};
  }
};
mistakes::Case make() {
  Generator gen(6111);
  Tensor x = randn({R, C}, DType::Float64, &gen);
  const std::vector<double> gs{1.3, 0.7, -0.9}, bs{0.4, -0.6, 1.1};
  Tensor gamma = tensor(gs, {C}, DType::Float64);
  Tensor beta = tensor(bs, {C}, DType::Float64);
  x.requires_grad_();
  gamma.requires_grad_();
  beta.requires_grad_();
  std::vector<Tensor> inputs{x, gamma, beta};
  return {"u6-batchnorm-gamma-grad-uses-output",
          "Mistake: batch normalisation with affine, y = gamma xhat + beta, xhat = (x - mean) / sqrt(var + 1e-5) with "
          "each column's statistics over the batch, dim 0, of x (4, 3), gamma (3), beta (3): the gain's gradient uses "
          "the saved output y where the normalised input belongs, dgamma = sum over rows of g y, instead of dgamma = "
          "sum over rows of g xhat (y = gamma xhat + beta); dx = gamma rstd (g - mean(g, 0) - xhat mean(g xhat, 0)) "
          "and dbeta = sum over rows of g are right",
          inputs, [](const std::vector<Tensor>& in) { return BatchNormAffine::apply(in[0], in[1], in[2]); }};
}
const mistakes::Register reg(make);
}  // namespace
