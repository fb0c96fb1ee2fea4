// Mistake: y = sin(a) * b elementwise, a and b (2, 3): the gradient for b is written db = sin(a), the local derivative without the chain rule's factor of the incoming gradient (correct: db = g * sin(a)); da = g * cos(a) * b is right
// Origin: written without sight of the checker (issue 27's third set; held out, judged once on gradcheck as it was then)
#include "case.h"
#include <vector>
namespace {
using namespace ropegrad;
struct SinTimes : Function<SinTimes> {
  static constexpr const char* name = "sin_times";
  static Tensor forward(FunctionCtx& ctx, const Tensor& a, const Tensor& b) {
    ctx.save_for_backward({a, b});
    return sin(a) * b;
  }
  static Grads backward(FunctionCtx& ctx, const Tensor& g) {
    const auto saved = ctx.saved_tensors();
    const Tensor a = saved[0], b = saved[1];
    const Tensor da = g * cos(a) * b;
    const Tensor db = sin(a);
    return {da, db};
  }
};
mistakes::Case make() {
  Generator gen(312);
  Tensor a = randn({2, 3}, DType::Float64, &gen);
  Tensor b = randn({2, 3}, DType::Float64, &gen);
  a.requires_grad_();
  b.requires_grad_();
  std::vector<Tensor> inputs{a, b};
  return {"sin-times-b-grad-b-missing-g",
          "y = sin(a) * b elementwise, a and b (2, 3): the gradient for b is written db = sin(a), the local derivative without the chain rule's factor of the incoming gradient (correct: db = g * sin(a)); da = g * cos(a) * b is right",
          inputs,
          [](const std::vector<Tensor>& in) { return SinTimes::apply(in[0], in[1]); },
          std::vector<std::string>{"one gradient for every output"}};
}
const mistakes::Register reg(make);
}  // namespace
