// Mistake: average pooling along the last dim with kernel 3, stride 1 and padding 1 that excludes the padding from the count, x (2, 5) -> y (2, 5), y_i = mean of x_j over j in [i - 1, i + 1] inside [0, 4] (2 entries at the edges i = 0 and 4, 3 inside): the backward divides every window's g_i by the kernel size 3, dx_j += g_i / 3, where the edge windows averaged only 2 entries and need g_i / 2 (correct: dx_j += g_i / count_i); the contributions of the inner windows are right
// Origin: written without sight of the checker (issue 27's sixth set; held out, judged once)
#include "case.h"
#include <vector>
namespace {
using namespace ropegrad;
constexpr int R = 2, N = 5;
struct AvgPoolPadded : Function<AvgPoolPadded> {
  static constexpr const char* name = "avg_pool_padded";
  static Tensor forward(FunctionCtx&, const Tensor& x) {
    const std::vector<double> xv = x.to_vector<double>();
    std::vector<double> y(R * N, 0.0);
    for (int r = 0; r < R; ++r)
      for (int i = 0; i < N; ++i) {
        int count = 0;
        for (int j = i - 1; j <= i + 1; ++j)
          if (j >= 0 && j < N) {
            y[r * N + i] += xv[r * N + j];
            ++count;
          }
        y[r * N + i] /= count;
      }
    return tensor(y, {R, N}, DType::Float64);
  }
  static Grads backward(FunctionCtx&, const Tensor& g) {
    const std::vector<double> gv = g.to_vector<double>();
    std::vector<double> dx(R * N, 0.0);
    for (int r = 0; r < R; ++r)
      for (int i = 0; i < N; ++i)
        for (int j = i - 1; j <= i + 1; ++j)
          if (j >= 0 && j < N) dx[r * N + j] += gv[r * N + i] / 3.0;  // the window's own count belongs
    return {tensor(dx, {R, N}, DType::Float64)};
  }
};
mistakes::Case make() {
  Generator gen(6124);
  Tensor x = randn({R, N}, DType::Float64, &gen);
  x.requires_grad_();
  std::vector<Tensor> inputs{x};
  return {"u6-avgpool-padded-edges-divided-by-kernel",
          "Mistake: average pooling along the last dim with kernel 3, stride 1 and padding 1 that excludes the padding "
          "from the count, x (2, 5) -> y (2, 5), y_i = mean of x_j over j in [i - 1, i + 1] inside [0, 4] (2 entries "
          "at the edges i = 0 and 4, 3 inside): the backward divides every window's g_i by the kernel size 3, dx_j += "
          "g_i / 3, where the edge windows averaged only 2 entries and need g_i / 2 (correct: dx_j += g_i / count_i); "
          "the contributions of the inner windows are right",
          inputs, [](const std::vector<Tensor>& in) { return AvgPoolPadded::apply(in[0]); }};
}
const mistakes::Register reg(make);
}  // namespace
