// Mistake: max pooling along the last dim with kernel 2 and stride 2, x (2, 6) -> y (2, 3), y[r, i] = max(x[r, 2i], x[r, 2i + 1]): the backward looks for window i's argmax in x[r, i : i + 2] (the stride forgotten in the window start) instead of x[r, 2i : 2i + 2], so g[r, i] goes to the larger of x[r, i], x[r, i + 1] (right only for window 0) instead of to the larger of x[r, 2i], x[r, 2i + 1]
// Origin: written without sight of the checker (issue 27's third set; held out, judged once on gradcheck as it was then)
#include "case.h"
#include <cstdint>
#include <vector>
namespace {
using namespace ropegrad;
constexpr int64_t kWin = 2;
struct MaxPool2 : Function<MaxPool2> {
  static constexpr const char* name = "max_pool2";
  static Tensor forward(FunctionCtx& ctx, const Tensor& x) {
    ctx.save_for_backward({x});
    const int64_t rows = x.size(0);
    const int64_t n = x.size(1);
    const int64_t out = n / kWin;
    const std::vector<double> xv = x.to_vector<double>();
    std::vector<double> y(static_cast<size_t>(rows * out), 0.0);
    for (int64_t r = 0; r < rows; ++r) {
      for (int64_t i = 0; i < out; ++i) {
        const int64_t s = i * kWin;
        const double a = xv[r * n + s];
        const double b = xv[r * n + s + 1];
        y[r * out + i] = a > b ? a : b;
      }
    }
    return tensor(y, {rows, out}, DType::Float64);
  }
  static Grads backward(FunctionCtx& ctx, const Tensor& g) {
    const Tensor x = ctx.saved_tensors()[0];
    const int64_t rows = x.size(0);
    const int64_t n = x.size(1);
    const int64_t out = n / kWin;
    const std::vector<double> xv = x.to_vector<double>();
    const std::vector<double> gv = g.to_vector<double>();
    std::vector<double> dx(static_cast<size_t>(rows * n), 0.0);
    for (int64_t r = 0; r < rows; ++r) {
      for (int64_t i = 0; i < out; ++i) {
        const int64_t s = i;  // window start
        const int64_t arg = xv[r * n + s] > xv[r * n + s + 1] ? s : s + 1;
        dx[r * n + arg] += gv[r * out + i];
      }
    }
    return {tensor(dx, {rows, n}, DType::Float64)};
  }
};
mistakes::Case make() {
  // Distinct values, every pair well apart (no ties near the finite-difference step).
  Tensor x = tensor(std::vector<double>{0.3, -1.2, 0.8, 1.5, -0.4, 0.1,
                                        -0.9, 0.6, -0.2, 1.1, 0.5, 2.0},
                    {2, 6}, DType::Float64);
  x.requires_grad_();
  std::vector<Tensor> inputs{x};
  return {"maxpool-window-stride-forgotten",
          "max pooling along the last dim with kernel 2 and stride 2, x (2, 6) -> y (2, 3), y[r, i] = max(x[r, 2i], x[r, 2i + 1]): the backward looks for window i's argmax in x[r, i : i + 2] (the stride forgotten in the window start) instead of x[r, 2i : 2i + 2], so g[r, i] goes to the larger of x[r, i], x[r, i + 1] (right only for window 0) instead of to the larger of x[r, 2i], x[r, 2i + 1]",
          inputs,
          [](const std::vector<Tensor>& in) { return MaxPool2::apply(in[0]); },
          std::vector<std::string>{"the right values at the wrong inputs"}};
}
const mistakes::Register reg(make);
}  // namespace
