// Mistake: valid 1-d cross-correlation along the last dim, y[r, i] = sum_k w_k x[r, i + k] with x (2, 6) and a kernel w (3): the input gradient flips the kernel, dx[r, i + k] += w_{2 - k} g[r, i], where no flip belongs in this scatter form (correct: dx[r, i + k] += w_k g[r, i], i.e. dx[r, j] = sum_k w_k g[r, j - k]); dw_k = sum_{r, i} g[r, i] x[r, i + k] is right
// Origin: written without sight of the checker (issue 27's third set; worked from)
#include "case.h"
#include <cstdint>
#include <vector>
namespace {
using namespace ropegrad;
struct Conv1d : Function<Conv1d> {
  static constexpr const char* name = "conv1d_valid";
  static Tensor forward(FunctionCtx& ctx, const Tensor& x, const Tensor& w) {
    ctx.save_for_backward({x, w});
    const int64_t rows = x.size(0);
    const int64_t n = x.size(1);
    const int64_t kk = w.size(0);
    const int64_t out = n - kk + 1;
    const std::vector<double> xv = x.to_vector<double>();
    const std::vector<double> wv = w.to_vector<double>();
    std::vector<double> y(static_cast<size_t>(rows * out), 0.0);
    for (int64_t r = 0; r < rows; ++r)
      for (int64_t i = 0; i < out; ++i)
        for (int64_t k = 0; k < kk; ++k) y[r * out + i] += wv[k] * xv[r * n + i + k];
    return tensor(y, {rows, out}, DType::Float64);
  }
  static Grads backward(FunctionCtx& ctx, const Tensor& g) {
    const auto saved = ctx.saved_tensors();
    const Tensor x = saved[0], w = saved[1];
    const int64_t rows = x.size(0);
    const int64_t n = x.size(1);
    const int64_t kk = w.size(0);
    const int64_t out = n - kk + 1;
    const std::vector<double> xv = x.to_vector<double>();
    const std::vector<double> wv = w.to_vector<double>();
    const std::vector<double> gv = g.to_vector<double>();
    std::vector<double> dx(static_cast<size_t>(rows * n), 0.0);
    std::vector<double> dw(static_cast<size_t>(kk), 0.0);
    for (int64_t r = 0; r < rows; ++r) {
      for (int64_t i = 0; i < out; ++i) {
        const double gi = gv[r * out + i];
        for (int64_t k = 0; k < kk; ++k) {
          // the gradient of a convolution is a convolution with the flipped kernel
          dx[r * n + i + k] += wv[kk - 1 - k] * gi;
          dw[k] += gi * xv[r * n + i + k];
        }
      }
    }
    return {tensor(dx, {rows, n}, DType::Float64), tensor(dw, {kk}, DType::Float64)};
  }
};
mistakes::Case make() {
  Generator gen(320);
  Tensor x = randn({2, 6}, DType::Float64, &gen);
  Tensor w = tensor(std::vector<double>{0.9, -0.4, 0.25}, {3}, DType::Float64);
  x.requires_grad_();
  w.requires_grad_();
  std::vector<Tensor> inputs{x, w};
  return {"conv1d-input-grad-kernel-flipped",
          "valid 1-d cross-correlation along the last dim, y[r, i] = sum_k w_k x[r, i + k] with x (2, 6) and a kernel w (3): the input gradient flips the kernel, dx[r, i + k] += w_{2 - k} g[r, i], where no flip belongs in this scatter form (correct: dx[r, i + k] += w_k g[r, i], i.e. dx[r, j] = sum_k w_k g[r, j - k]); dw_k = sum_{r, i} g[r, i] x[r, i + k] is right",
          inputs,
          [](const std::vector<Tensor>& in) { return Conv1d::apply(in[0], in[1]); },
          std::vector<std::string>{"the right values at the wrong inputs"}};
}
const mistakes::Register reg(make);
}  // namespace
