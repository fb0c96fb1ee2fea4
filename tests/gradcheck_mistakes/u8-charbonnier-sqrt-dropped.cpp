// Mistake: Charbonnier loss L = sqrt((p - t)^2 + 0.25) elementwise with p (2, 3) and fixed targets t (not checked): the backward divides r = p - t by the radicand instead of by its square root, dp = g r / (r^2 + 0.25), where dp = g r / sqrt(r^2 + 0.25) = g r / L belongs
// Origin: written without sight of the checker (issue 27's eighth set; the half worked from)
#include "case.h"
#include <vector>
namespace {
using namespace ropegrad;
struct Charbonnier : Function<Charbonnier> {
  static constexpr const char* name = "charbonnier";
  static Tensor forward(FunctionCtx& ctx, const Tensor& p, const Tensor& t) {
    ctx.save_for_backward({p, t});
    Tensor r = p - t;
    return sqrt(r * r + 0.25);
  }
  static Grads backward(FunctionCtx& ctx, const Tensor& g) {
    const auto s = ctx.saved_tensors();
    Tensor r = s[0] - s[1];
    return {g * r / (r * r + 0.25), Tensor()};
  }
};
mistakes::Case make() {
  Generator gen(8111);
  Tensor p = randn({2, 3}, DType::Float64, &gen);
  Tensor t = randn({2, 3}, DType::Float64, &gen);
  p.requires_grad_();
  std::vector<Tensor> inputs{p, t};
  return {"u8-charbonnier-sqrt-dropped",
          "Charbonnier loss L = sqrt((p - t)^2 + 0.25) elementwise with p (2, 3) and fixed targets t (not checked): the backward divides r = p - t by the radicand instead of by its square root, dp = g r / (r^2 + 0.25), where dp = g r / sqrt(r^2 + 0.25) = g r / L belongs",
          inputs, [](const std::vector<Tensor>& in) { return Charbonnier::apply(in[0], in[1]); }};
}
const mistakes::Register reg(make);
}  // namespace
