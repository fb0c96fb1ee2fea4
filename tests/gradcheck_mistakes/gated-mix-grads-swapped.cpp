// Mistake: y = a * sigmoid(b): the backward returns the two gradients in the wrong order, {db, da} = {g a s (1 - s), g s} instead of {g s, g a s (1 - s)} (s = sigmoid(b))
#include "case.h"
#include <any>
#include <cmath>
#include <limits>
namespace {
using namespace ropegrad;
struct GatedMix : Function<GatedMix> {
  static constexpr const char* name = "gated_mix";
  static Tensor forward(FunctionCtx& ctx, const Tensor& a, const Tensor& b) {
    ctx.save_for_backward({a, b});
    return a * sigmoid(b);
  }
  static Grads backward(FunctionCtx& ctx, const Tensor& g) {
    const auto saved = ctx.saved_tensors();
    const Tensor a = saved[0], b = saved[1];
    const Tensor s = sigmoid(b);
    Tensor da = g * s;
    Tensor db = g * a * s * (1.0 - s);
    return {db, da};
  }
};
mistakes::Case make() {
  Generator gen(123);
  Tensor a = randn({3, 4}, DType::Float64, &gen);
  Tensor b = randn({3, 4}, DType::Float64, &gen);
  a.requires_grad_();
  b.requires_grad_();
  std::vector<Tensor> inputs{a, b};
  return {"gated-mix-grads-swapped",
          "y = a * sigmoid(b): the backward returns the two gradients in the wrong order, {db, da} = {g a s (1 - s), g s} instead of {g s, g a s (1 - s)} (s = sigmoid(b))",
          inputs,
          [](const std::vector<Tensor>& in) { return GatedMix::apply(in[0], in[1]); },
          std::vector<std::string>{"gradients exchanged", "inputs 0 and 1"}};
}
const mistakes::Register reg(make);
}  // namespace
