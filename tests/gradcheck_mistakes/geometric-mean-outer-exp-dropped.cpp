// Mistake: geometric mean of each row, y = exp(mean(log x)) with x (2, 4) positive: the backward returns the derivative of the inner mean(log x) only, dx = g / (n x) with n = 4, and drops the outer exp's derivative, the factor y (correct: dx = g * y / (n x))
// Origin: written without sight of the checker (issue 27's third set; worked from)
#include "case.h"
#include <vector>
namespace {
using namespace ropegrad;
struct GeoMean : Function<GeoMean> {
  static constexpr const char* name = "geo_mean";
  static Tensor forward(FunctionCtx& ctx, const Tensor& x) {
    const Tensor y = exp(mean(log(x), {1}));
    ctx.save_for_backward({x, y});
    return y;
  }
  static Grads backward(FunctionCtx& ctx, const Tensor& g) {
    const auto saved = ctx.saved_tensors();
    const Tensor x = saved[0];
    const double n = static_cast<double>(x.size(1));
    const Tensor gc = unsqueeze(g, 1);  // (2, 1)
    return {gc / (n * x)};
  }
};
mistakes::Case make() {
  Generator gen(313);
  Tensor x = rand({2, 4}, DType::Float64, &gen) * 1.5 + 0.5;
  x.requires_grad_();
  std::vector<Tensor> inputs{x};
  return {"geometric-mean-outer-exp-dropped",
          "geometric mean of each row, y = exp(mean(log x)) with x (2, 4) positive: the backward returns the derivative of the inner mean(log x) only, dx = g / (n x) with n = 4, and drops the outer exp's derivative, the factor y (correct: dx = g * y / (n x))",
          inputs,
          [](const std::vector<Tensor>& in) { return GeoMean::apply(in[0]); },
          std::vector<std::string>{"off by a varying factor", "analytical = numerical / output[i0]"}};
}
const mistakes::Register reg(make);
}  // namespace
