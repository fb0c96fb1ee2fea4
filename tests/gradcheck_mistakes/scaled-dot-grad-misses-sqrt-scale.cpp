// Mistake: scores q . k / sqrt(d) per row with d = 8: the backward for q returns g k and leaves out the 1/sqrt(d) scale, so the gradient is sqrt(8) times the truth
#include "case.h"
namespace {
using namespace ropegrad;
struct ScaledDot : Function<ScaledDot> {
  static constexpr const char* name = "scaled_dot";
  static Tensor forward(FunctionCtx& ctx, const Tensor& q, const Tensor& k) {
    ctx.save_for_backward({k});
    return sum(q * k, {1}) / std::sqrt(static_cast<double>(q.size(1)));
  }
  static Grads backward(FunctionCtx& ctx, const Tensor& g) {
    return {unsqueeze(g, 1) * ctx.saved_tensors()[0], Tensor()};
  }
};
mistakes::Case make() {
  Generator gen(226);
  Tensor q = randn({2, 8}, DType::Float64, &gen);
  Tensor k = randn({2, 8}, DType::Float64, &gen);
  q.requires_grad_();
  std::vector<Tensor> inputs{q, k};
  GradcheckFn f = [](const std::vector<Tensor>& in) { return ScaledDot::apply(in[0], in[1]); };
  return {"scaled-dot-grad-misses-sqrt-scale",
          "scores q . k / sqrt(d) per row with d = 8: the backward for q returns g k and leaves out the 1/sqrt(d) scale, so the gradient is sqrt(8) times the truth",
          inputs,
          f,
          std::vector<std::string>{"off by a constant factor", "sqrt(8)", "8 is the size of input 0's dim 1"}};
}
const mistakes::Register reg(make);
}  // namespace
