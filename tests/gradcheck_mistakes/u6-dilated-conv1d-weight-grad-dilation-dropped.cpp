// Mistake: valid 1-d cross-correlation with dilation 2 along the last dim, y[r, i] = sum_k w_k x[r, i + 2k] with x (2, 7), a kernel w (3) -> y (2, 3): the kernel's gradient forgets the dilation and reads the neighbours of each window's start, dw_k = sum_{r, i} g[r, i] x[r, i + k], instead of the taps the forward used, dw_k = sum_{r, i} g[r, i] x[r, i + 2k] (dw_0 is right); dx[r, i + 2k] += w_k g[r, i] is right
// Origin: written without sight of the checker (issue 27's sixth set; worked from)
#include "case.h"
#include <vector>
namespace {
using namespace ropegrad;
constexpr int R = 2, N = 7, K = 3, D = 2, L = N - D * (K - 1);
struct DilatedConv1d : Function<DilatedConv1d> {
  static constexpr const char* name = "dilated_conv1d";
  static Tensor forward(FunctionCtx& ctx, const Tensor& x, const Tensor& w) {
    ctx.save_for_backward({x, w});
    const std::vector<double> xv = x.to_vector<double>(), wv = w.to_vector<double>();
    std::vector<double> y(R * L, 0.0);
    for (int r = 0; r < R; ++r)
      for (int i = 0; i < L; ++i)
        for (int k = 0; k < K; ++k) y[r * L + i] += wv[k] * xv[r * N + i + D * k];
    return tensor(y, {R, L}, DType::Float64);
  }
  static Grads backward(FunctionCtx& ctx, const Tensor& g) {
    const auto s = ctx.saved_tensors();
    const std::vector<double> xv = s[0].to_vector<double>(), wv = s[1].to_vector<double>();
    const std::vector<double> gv = g.to_vector<double>();
    std::vector<double> dx(R * N, 0.0), dw(K, 0.0);
    for (int r = 0; r < R; ++r)
      for (int i = 0; i < L; ++i)
        for (int k = 0; k < K; ++k) {
          dx[r * N + i + D * k] += wv[k] * gv[r * L + i];
          dw[k] += gv[r * L + i] * xv[r * N + i + k];  // the dilation is lost: x[i + 2k] belongs
        }
    return {tensor(dx, {R, N}, DType::Float64), tensor(dw, {K}, DType::Float64)};
  }
};
mistakes::Case make() {
  Generator gen(6123);
  Tensor x = randn({R, N}, DType::Float64, &gen);
  Tensor w = randn({K}, DType::Float64, &gen);
  x.requires_grad_();
  w.requires_grad_();
  std::vector<Tensor> inputs{x, w};
  return {"u6-dilated-conv1d-weight-grad-dilation-dropped",
          "Mistake: valid 1-d cross-correlation with dilation 2 along the last dim, y[r, i] = sum_k w_k x[r, i + 2k] "
          "with x (2, 7), a kernel w (3) -> y (2, 3): the kernel's gradient forgets the dilation and reads the "
          "neighbours of each window's start, dw_k = sum_{r, i} g[r, i] x[r, i + k], instead of the taps the forward "
          "used, dw_k = sum_{r, i} g[r, i] x[r, i + 2k] (dw_0 is right); dx[r, i + 2k] += w_k g[r, i] is right",
          inputs, [](const std::vector<Tensor>& in) { return DilatedConv1d::apply(in[0], in[1]); }};
}
const mistakes::Register reg(make);
}  // namespace
