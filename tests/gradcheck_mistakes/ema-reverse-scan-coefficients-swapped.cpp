// Mistake: exponential moving average along the last dim, x (2, 5), a = 0.6: h_t = a h_{t-1} + (1 - a) x_t with h_{-1} = 0, y = h: the backward's reverse scan exchanges the two coefficients, c_t = g_t + (1 - a) c_{t+1} and dx_t = a c_t, instead of c_t = g_t + a c_{t+1} and dx_t = (1 - a) c_t (so dx_t = a sum_{s >= t} (1 - a)^(s - t) g_s where (1 - a) sum_{s >= t} a^(s - t) g_s belongs)
// Origin: written without sight of the checker (issue 27's third set; held out, judged once on gradcheck as it was then)
#include "case.h"
#include <any>
#include <cstdint>
#include <vector>
namespace {
using namespace ropegrad;
constexpr double kDecay = 0.6;
struct Ema : Function<Ema> {
  static constexpr const char* name = "ema_scan";
  static Tensor forward(FunctionCtx& ctx, const Tensor& x) {
    const int64_t rows = x.size(0);
    const int64_t n = x.size(1);
    ctx.saved_data["rows"] = rows;
    ctx.saved_data["n"] = n;
    const std::vector<double> xv = x.to_vector<double>();
    std::vector<double> y(static_cast<size_t>(rows * n), 0.0);
    for (int64_t r = 0; r < rows; ++r) {
      double h = 0.0;
      for (int64_t t = 0; t < n; ++t) {
        h = kDecay * h + (1.0 - kDecay) * xv[r * n + t];
        y[r * n + t] = h;
      }
    }
    return tensor(y, {rows, n}, DType::Float64);
  }
  static Grads backward(FunctionCtx& ctx, const Tensor& g) {
    const int64_t rows = std::any_cast<int64_t>(ctx.saved_data.at("rows"));
    const int64_t n = std::any_cast<int64_t>(ctx.saved_data.at("n"));
    const std::vector<double> gv = g.to_vector<double>();
    std::vector<double> dx(static_cast<size_t>(rows * n), 0.0);
    for (int64_t r = 0; r < rows; ++r) {
      double c = 0.0;
      for (int64_t t = n - 1; t >= 0; --t) {
        c = gv[r * n + t] + (1.0 - kDecay) * c;
        dx[r * n + t] = kDecay * c;
      }
    }
    return {tensor(dx, {rows, n}, DType::Float64)};
  }
};
mistakes::Case make() {
  Generator gen(319);
  Tensor x = randn({2, 5}, DType::Float64, &gen);
  x.requires_grad_();
  std::vector<Tensor> inputs{x};
  return {"ema-reverse-scan-coefficients-swapped",
          "exponential moving average along the last dim, x (2, 5), a = 0.6: h_t = a h_{t-1} + (1 - a) x_t with h_{-1} = 0, y = h: the backward's reverse scan exchanges the two coefficients, c_t = g_t + (1 - a) c_{t+1} and dx_t = a c_t, instead of c_t = g_t + a c_{t+1} and dx_t = (1 - a) c_t (so dx_t = a sum_{s >= t} (1 - a)^(s - t) g_s where (1 - a) sum_{s >= t} a^(s - t) g_s belongs)",
          inputs,
          [](const std::vector<Tensor>& in) { return Ema::apply(in[0]); },
          std::vector<std::string>{},
          std::vector<std::string>{"observed: input 0's gradient is wrong at 22 of its 100 entries"}};
}
const mistakes::Register reg(make);
}  // namespace
