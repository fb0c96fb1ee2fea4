// Mistake: tanh-approximation GELU: the derivative of the inner u = c (x + 0.044715 x^3) is written c (1 + 0.044715 x^2), missing the factor 3 from d(x^3)/dx = 3x^2
#include "case.h"
#include <any>
#include <cmath>
#include <limits>
namespace {
using namespace ropegrad;
struct GeluTanh : Function<GeluTanh> {
  static constexpr const char* name = "gelu_tanh";
  static Tensor forward(FunctionCtx& ctx, const Tensor& x) {
    const double c = std::sqrt(2.0 / 3.14159265358979323846);
    ctx.save_for_backward({x});
    return 0.5 * x * (1.0 + tanh(c * (x + 0.044715 * x * x * x)));
  }
  static Grads backward(FunctionCtx& ctx, const Tensor& g) {
    const Tensor x = ctx.saved_tensors()[0];
    const double c = std::sqrt(2.0 / 3.14159265358979323846);
    const Tensor t = tanh(c * (x + 0.044715 * x * x * x));
    const Tensor du = c * (1.0 + 0.044715 * x * x);
    return {g * (0.5 * (1.0 + t) + 0.5 * x * (1.0 - t * t) * du)};
  }
};
mistakes::Case make() {
  Generator gen(120);
  Tensor x = 1.5 * randn({3, 4}, DType::Float64, &gen);
  x.requires_grad_();
  std::vector<Tensor> inputs{x};
  return {"gelu-tanh-cubic-derivative-missing-3",
          "tanh-approximation GELU: the derivative of the inner u = c (x + 0.044715 x^3) is written c (1 + 0.044715 x^2), missing the factor 3 from d(x^3)/dx = 3x^2",
          inputs,
          [](const std::vector<Tensor>& in) { return GeluTanh::apply(in[0]); },
          std::vector<std::string>{"the elementwise derivative is wrong"}};
}
const mistakes::Register reg(make);
}  // namespace
