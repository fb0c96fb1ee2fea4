// Mistake: linear recurrence along the last dim with a learned decay per row, h_t = a h_{t-1} + x_t, h_{-1} = 0, y = h, x (2, 5), a (2, 1) = (0.6, 0.35): the decay's gradient pairs each step's adjoint with the current state, da = sum_t c_t h_t, where the state the decay multiplied belongs, da = sum_t c_t h_{t-1} (an off-by-one in time; c_t = g_t + a c_{t+1} is the adjoint of h_t); dx_t = c_t is right
// Origin: written without sight of the checker (issue 27's seventh set; the half worked from)
#include "case.h"
#include <vector>
namespace {
using namespace ropegrad;
struct DecayScan : Function<DecayScan> {
  static constexpr const char* name = "decay_scan";
  static Tensor forward(FunctionCtx& ctx, const Tensor& x, const Tensor& a) {
    const int64_t rows = x.size(0), n = x.size(1);
    std::vector<double> xv = x.to_vector<double>();
    std::vector<double> av = a.to_vector<double>();
    std::vector<double> hv(xv.size());
    for (int64_t r = 0; r < rows; ++r) {
      double h = 0.0;
      for (int64_t t = 0; t < n; ++t) {
        h = av[r] * h + xv[r * n + t];
        hv[r * n + t] = h;
      }
    }
    Tensor y = tensor(hv, x.shape(), DType::Float64);
    ctx.save_for_backward({a, y});
    return y;
  }
  static Grads backward(FunctionCtx& ctx, const Tensor& g) {
    const std::vector<Tensor> s = ctx.saved_tensors();
    const int64_t rows = s[1].size(0), n = s[1].size(1);
    std::vector<double> av = s[0].to_vector<double>();
    std::vector<double> hv = s[1].to_vector<double>();
    std::vector<double> gv = g.to_vector<double>();
    std::vector<double> dx(hv.size()), da(rows, 0.0);
    for (int64_t r = 0; r < rows; ++r) {
      double c = 0.0;
      for (int64_t t = n - 1; t >= 0; --t) {
        c = gv[r * n + t] + av[r] * c;
        dx[r * n + t] = c;
        da[r] += c * hv[r * n + t];
      }
    }
    return {tensor(dx, s[1].shape(), DType::Float64), tensor(da, s[0].shape(), DType::Float64)};
  }
};
mistakes::Case make() {
  Generator gen(7151);
  Tensor x = randn({2, 5}, DType::Float64, &gen);
  Tensor a = tensor(std::vector<double>{0.6, 0.35}, {2, 1}, DType::Float64);
  x.requires_grad_();
  a.requires_grad_();
  std::vector<Tensor> inputs{x, a};
  return {"u7-linear-recurrence-decay-grad-current-state",
          "linear recurrence along the last dim with a learned decay per row, h_t = a h_{t-1} + x_t, h_{-1} = 0, y = h, x (2, 5), a (2, 1) = (0.6, 0.35): the decay's gradient pairs each step's adjoint with the current state, da = sum_t c_t h_t, where the state the decay multiplied belongs, da = sum_t c_t h_{t-1} (an off-by-one in time; c_t = g_t + a c_{t+1} is the adjoint of h_t); dx_t = c_t is right",
          inputs, [](const std::vector<Tensor>& in) { return DecayScan::apply(in[0], in[1]); }};
}
const mistakes::Register reg(make);
}  // namespace
