// Mistake: rotary position embedding with interleaved pairs, x (3, 4) at positions p = 1, 2, 3, base 100: the forward rotates the pairs (x0, x1) by the angle p and (x2, x3) by 0.1 p; the backward rotates g back with the half-split pairing, (g0, g2) by p and (g1, g3) by 0.1 p, instead of the forward's own pairs: dx0 = g0 cos(p) + g1 sin(p), dx1 = -g0 sin(p) + g1 cos(p), dx2 = g2 cos(0.1 p) + g3 sin(0.1 p), dx3 = -g2 sin(0.1 p) + g3 cos(0.1 p)
// Origin: written without sight of the checker (issue 27's eighth set; the half worked from)
#include "case.h"
#include <cmath>
#include <vector>
namespace {
using namespace ropegrad;
constexpr int64_t kD = 4;
double angle(int64_t row, int64_t pair) {
  const double pos = static_cast<double>(row + 1);
  return pos * std::pow(100.0, -2.0 * static_cast<double>(pair) / static_cast<double>(kD));
}
struct Rope : Function<Rope> {
  static constexpr const char* name = "rope";
  static Tensor forward(FunctionCtx& ctx, const Tensor& x) {
    const int64_t rows = x.size(0);
    ctx.saved_data["rows"] = rows;
    const std::vector<double> xv = x.to_vector<double>();
    std::vector<double> y(xv.size());
    for (int64_t r = 0; r < rows; ++r) {
      for (int64_t i = 0; i < kD / 2; ++i) {
        const double c = std::cos(angle(r, i)), s = std::sin(angle(r, i));
        const double a = xv[r * kD + 2 * i], b = xv[r * kD + 2 * i + 1];
        y[r * kD + 2 * i] = a * c - b * s;
        y[r * kD + 2 * i + 1] = a * s + b * c;
      }
    }
    return tensor(y, {rows, kD}, DType::Float64);
  }
  static Grads backward(FunctionCtx& ctx, const Tensor& g) {
    const int64_t rows = std::any_cast<int64_t>(ctx.saved_data["rows"]);
    const std::vector<double> gv = g.to_vector<double>();
    std::vector<double> dx(gv.size());
    const int64_t half = kD / 2;
    for (int64_t r = 0; r < rows; ++r) {
      for (int64_t i = 0; i < half; ++i) {
        const double c = std::cos(angle(r, i)), s = std::sin(angle(r, i));
        const double ga = gv[r * kD + i], gb = gv[r * kD + i + half];
        dx[r * kD + i] = ga * c + gb * s;
        dx[r * kD + i + half] = -ga * s + gb * c;
      }
    }
    return {tensor(dx, {rows, kD}, DType::Float64)};
  }
};
mistakes::Case make() {
  Generator gen(8120);
  Tensor x = randn({3, 4}, DType::Float64, &gen);
  x.requires_grad_();
  std::vector<Tensor> inputs{x};
  return {"u8-rope-backward-half-split-pairs",
          "rotary position embedding with interleaved pairs, x (3, 4) at positions p = 1, 2, 3, base 100: the forward rotates the pairs (x0, x1) by the angle p and (x2, x3) by 0.1 p; the backward rotates g back with the half-split pairing, (g0, g2) by p and (g1, g3) by 0.1 p, instead of the forward's own pairs: dx0 = g0 cos(p) + g1 sin(p), dx1 = -g0 sin(p) + g1 cos(p), dx2 = g2 cos(0.1 p) + g3 sin(0.1 p), dx3 = -g2 sin(0.1 p) + g3 cos(0.1 p)",
          inputs, [](const std::vector<Tensor>& in) { return Rope::apply(in[0]); }};
}
const mistakes::Register reg(make);
}  // namespace
