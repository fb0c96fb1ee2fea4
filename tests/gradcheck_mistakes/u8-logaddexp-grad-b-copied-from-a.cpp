// Mistake: y = logaddexp(a, b) = log(exp(a) + exp(b)) elementwise with a, b (2, 3): the gradient for b copies a's weight, db = g sigmoid(a - b), where b's own weight belongs, db = g sigmoid(b - a) = g exp(b - y); da = g sigmoid(a - b) is right
// Origin: written without sight of the checker (issue 27's eighth set; the half worked from)
#include "case.h"
#include <vector>
namespace {
using namespace ropegrad;
struct LogAddExp : Function<LogAddExp> {
  static constexpr const char* name = "logaddexp";
  static Tensor forward(FunctionCtx& ctx, const Tensor& a, const Tensor& b) {
    ctx.save_for_backward({a, b});
    Tensor m = maximum(a, b);
    return m + log(exp(a - m) + exp(b - m));
  }
  static Grads backward(FunctionCtx& ctx, const Tensor& g) {
    const auto s = ctx.saved_tensors();
    const Tensor &a = s[0], &b = s[1];
    Tensor wa = sigmoid(a - b);
    return {g * wa, g * wa};
  }
};
mistakes::Case make() {
  Generator gen(8117);
  Tensor a = randn({2, 3}, DType::Float64, &gen);
  Tensor b = randn({2, 3}, DType::Float64, &gen);
  a.requires_grad_();
  b.requires_grad_();
  std::vector<Tensor> inputs{a, b};
  return {"u8-logaddexp-grad-b-copied-from-a",
          "y = logaddexp(a, b) = log(exp(a) + exp(b)) elementwise with a, b (2, 3): the gradient for b copies a's weight, db = g sigmoid(a - b), where b's own weight belongs, db = g sigmoid(b - a) = g exp(b - y); da = g sigmoid(a - b) is right",
          inputs, [](const std::vector<Tensor>& in) { return LogAddExp::apply(in[0], in[1]); }};
}
const mistakes::Register reg(make);
}  // namespace
