// Mistake: softmax with a learned temperature, y = softmax(x / T) over each row of x (3, 4), T (1) = 1.5: the temperature's gradient differentiates 1 / T as -1 / T instead of -1 / T^2, dT = -sum(dz * x) / T, where dT = -sum(dz * x) / T^2 belongs (dz = y * (g - rowsum(g * y)), the softmax's own backward; 1.5 times the truth); dx = dz / T is right
// Origin: written without sight of the checker (issue 27's eighth set; the held-out half: judged once)
#include "case.h"
#include <vector>
namespace {
using namespace ropegrad;
struct TempSoftmax : Function<TempSoftmax> {
  static constexpr const char* name = "temperature_softmax";
  static Tensor forward(FunctionCtx& ctx, const Tensor& x, const Tensor& t) {
    Tensor y = softmax(x / t, 1);
    ctx.save_for_backward({x, t, y});
    return y;
  }
  static Grads backward(FunctionCtx& ctx, const Tensor& g) {
    const auto s = ctx.saved_tensors();
    const Tensor &x = s[0], &t = s[1], &y = s[2];
    Tensor dz = y * (g - sum(g * y, {1}, true));
    Tensor dx = dz / t;
    Tensor dt = reshape(-sum(dz * x), {1}) / t;
    return {dx, dt};
  }
};
mistakes::Case make() {
  Generator gen(8119);
  Tensor x = randn({3, 4}, DType::Float64, &gen);
  Tensor t = tensor({1.5}, {1}, DType::Float64);
  x.requires_grad_();
  t.requires_grad_();
  std::vector<Tensor> inputs{x, t};
  return {"u8-learned-temperature-grad-t-power-one",
          "softmax with a learned temperature, y = softmax(x / T) over each row of x (3, 4), T (1) = 1.5: the temperature's gradient differentiates 1 / T as -1 / T instead of -1 / T^2, dT = -sum(dz * x) / T, where dT = -sum(dz * x) / T^2 belongs (dz = y * (g - rowsum(g * y)), the softmax's own backward; 1.5 times the truth); dx = dz / T is right",
          inputs, [](const std::vector<Tensor>& in) { return TempSoftmax::apply(in[0], in[1]); }};
}
const mistakes::Register reg(make);
}  // namespace
