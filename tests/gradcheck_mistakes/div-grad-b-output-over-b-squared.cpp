// Mistake: y = a / b elementwise with a (2, 3) and b (2, 3) in [0.8, 2]: the gradient for b mixes the two forms of the quotient rule, db = -g y / b^2 with the saved output y = a / b, one factor 1 / b too many (correct: db = -g a / b^2 = -g y / b); da = g / b is right
// Origin: written without sight of the checker (issue 27's fourth set; held out, judged once on gradcheck as it was then)
#include "case.h"
#include <vector>
namespace {
using namespace ropegrad;
struct Div : Function<Div> {
  static constexpr const char* name = "div_ab";
  static Tensor forward(FunctionCtx& ctx, const Tensor& a, const Tensor& b) {
    const Tensor y = a / b;
    ctx.save_for_backward({b, y});
    return y;
  }
  static Grads backward(FunctionCtx& ctx, const Tensor& g) {
    const auto saved = ctx.saved_tensors();
    const Tensor b = saved[0], y = saved[1];
    const Tensor da = g / b;
    const Tensor db = -g * y / (b * b);
    return {da, db};
  }
};
mistakes::Case make() {
  Generator gen(401);
  Tensor a = randn({2, 3}, DType::Float64, &gen);
  Tensor b = rand({2, 3}, DType::Float64, &gen) * 1.2 + 0.8;
  a.requires_grad_();
  b.requires_grad_();
  std::vector<Tensor> inputs{a, b};
  return {"div-grad-b-output-over-b-squared",
          "y = a / b elementwise with a (2, 3) and b (2, 3) in [0.8, 2]: the gradient for b mixes the two forms of the quotient rule, db = -g y / b^2 with the saved output y = a / b, one factor 1 / b too many (correct: db = -g a / b^2 = -g y / b); da = g / b is right",
          inputs,
          [](const std::vector<Tensor>& in) { return Div::apply(in[0], in[1]); },
          std::vector<std::string>{"off by a varying factor", "analytical = numerical / input1[j0, j1]"}};
}
const mistakes::Register reg(make);
}  // namespace
