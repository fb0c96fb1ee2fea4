// Mistake: a 2-d rotation of each pair (x0, x1) by a fixed angle per row: the backward multiplies g by the rotation R where its transpose R^T belongs, so the cross terms (the coupling of the pair) have the wrong sign and the diagonal cos terms are right
#include "case.h"
namespace {
using namespace ropegrad;
struct RotatePairs : Function<RotatePairs> {
  static constexpr const char* name = "rotate_pairs";
  static Tensor forward(FunctionCtx& ctx, const Tensor& x, const Tensor& angle) {
    const Tensor c = cos(angle), s = sin(angle);
    ctx.save_for_backward({c, s});
    const Tensor x0 = narrow(x, 1, 0, 1), x1 = narrow(x, 1, 1, 1);
    return cat({c * x0 - s * x1, s * x0 + c * x1}, 1);
  }
  static Grads backward(FunctionCtx& ctx, const Tensor& g) {
    const Tensor c = ctx.saved_tensors()[0], s = ctx.saved_tensors()[1];
    const Tensor g0 = narrow(g, 1, 0, 1), g1 = narrow(g, 1, 1, 1);
    return {cat({c * g0 - s * g1, s * g0 + c * g1}, 1), Tensor()};  // R g, where R^T g belongs
  }
};
mistakes::Case make() {
  Generator gen(227);
  Tensor x = randn({3, 2}, DType::Float64, &gen);
  Tensor angle = tensor(std::vector<double>{0.4, 1.1, -0.7}, Shape{3, 1}, DType::Float64);
  x.requires_grad_();
  std::vector<Tensor> inputs{x, angle};
  GradcheckFn f = [](const std::vector<Tensor>& in) { return RotatePairs::apply(in[0], in[1]); };
  return {"rotation-grad-not-transposed",
          "a 2-d rotation of each pair (x0, x1) by a fixed angle per row: the backward multiplies g by the rotation R where its transpose R^T belongs, so the cross terms (the coupling of the pair) have the wrong sign and the diagonal cos terms are right",
          inputs,
          f,
          std::vector<std::string>{"the Jacobian transposed", "R^T"}};
}
const mistakes::Register reg(make);
}  // namespace
