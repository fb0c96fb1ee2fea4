// Mistake: forward difference along the last dim, x (2, 5) -> y (2, 4), y_j = x_{j+1} - x_j: the backward's loop applies the interior formula dx_k = g_{k-1} - g_k only for k = 1 .. 3 and leaves both ends at 0 (correct also at the ends: dx_0 = -g_0 and dx_4 = g_3)
// Origin: written without sight of the checker (issue 27's fourth set; held out, judged once on gradcheck as it was then)
#include "case.h"
#include <cstdint>
#include <vector>
namespace {
using namespace ropegrad;
struct Diff : Function<Diff> {
  static constexpr const char* name = "forward_diff_last";
  static Tensor forward(FunctionCtx& ctx, const Tensor& x) {
    (void)ctx;
    const int64_t n = x.size(1);
    return narrow(x, 1, 1, n - 1) - narrow(x, 1, 0, n - 1);
  }
  static Grads backward(FunctionCtx& ctx, const Tensor& g) {
    (void)ctx;
    const int64_t rows = g.size(0), m = g.size(1), n = m + 1;
    const std::vector<double> gv = g.to_vector<double>();
    std::vector<double> dx(static_cast<size_t>(rows * n), 0.0);
    for (int64_t r = 0; r < rows; ++r)
      for (int64_t k = 1; k < n - 1; ++k) dx[r * n + k] = gv[r * m + k - 1] - gv[r * m + k];
    return {tensor(dx, {rows, n}, DType::Float64)};
  }
};
mistakes::Case make() {
  Generator gen(419);
  Tensor x = randn({2, 5}, DType::Float64, &gen);
  x.requires_grad_();
  std::vector<Tensor> inputs{x};
  return {"forward-difference-ends-skipped",
          "forward difference along the last dim, x (2, 5) -> y (2, 4), y_j = x_{j+1} - x_j: the backward's loop applies the interior formula dx_k = g_{k-1} - g_k only for k = 1 .. 3 and leaves both ends at 0 (correct also at the ends: dx_0 = -g_0 and dx_4 = g_3)",
          inputs,
          [](const std::vector<Tensor>& in) { return Diff::apply(in[0]); },
          std::vector<std::string>{"entries missing", "d output[0, 0] / d input0[0, 0], d output[0, 3] / d input0[0, 4]"}};
}
const mistakes::Register reg(make);
}  // namespace
