// Mistake: y = a * exp(c) + b: the backward returns {dc, db, da} = {g a exp(c), g, g exp(c)}, the gradients of the first and the last input in each other's place
#include "case.h"
namespace {
using namespace ropegrad;
struct ScaleShift : Function<ScaleShift> {
  static constexpr const char* name = "scale_shift";
  static Tensor forward(FunctionCtx& ctx, const Tensor& a, const Tensor& b, const Tensor& c) {
    ctx.save_for_backward({a, c});
    return a * exp(c) + b;
  }
  static Grads backward(FunctionCtx& ctx, const Tensor& g) {
    const Tensor a = ctx.saved_tensors()[0], c = ctx.saved_tensors()[1];
    Tensor da = g * exp(c);
    Tensor dc = g * a * exp(c);
    return {dc, g, da};
  }
};
mistakes::Case make() {
  Generator gen(208);
  Tensor a = randn({2, 3}, DType::Float64, &gen);
  Tensor b = randn({2, 3}, DType::Float64, &gen);
  Tensor c = randn({2, 3}, DType::Float64, &gen);
  a.requires_grad_();
  b.requires_grad_();
  c.requires_grad_();
  std::vector<Tensor> inputs{a, b, c};
  GradcheckFn f = [](const std::vector<Tensor>& in) { return ScaleShift::apply(in[0], in[1], in[2]); };
  return {"three-inputs-first-and-last-swapped",
          "y = a * exp(c) + b: the backward returns {dc, db, da} = {g a exp(c), g, g exp(c)}, the gradients of the first and the last input in each other's place",
          inputs,
          f,
          std::vector<std::string>{"gradients exchanged", "inputs 0 and 2"}};
}
const mistakes::Register reg(make);
}  // namespace
