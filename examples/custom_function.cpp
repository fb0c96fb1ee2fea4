// A differentiable op of your own, and its gradient checked.
//
// softsign(x) = x / (1 + |x|), with d softsign / dx = 1 / (1 + |x|)^2, written
// as a ropegrad::Function (autograd/function.h): forward computes the value,
// backward turns the upstream gradient into the input's. gradcheck compares
// that backward with finite differences in float64, element by element of the
// Jacobian. A second version with a deliberate mistake (the factor 2 of a
// wrongly applied chain rule) shows what gradcheck says when it is wrong.
//
// Exits 0 when the right backward passes and the wrong one is caught.
#include "autograd/function.h"
#include "autograd/gradcheck.h"
#include "autograd/ops.h"

using namespace ropegrad;

struct Softsign : Function<Softsign> {
  static constexpr const char* name = "softsign";
  static Tensor forward(FunctionCtx& ctx, const Tensor& x) {  // x (any shape)
    ctx.save_for_backward({x});
    return x / (1.0 + abs(x));
  }
  static Grads backward(FunctionCtx& ctx, const Tensor& grad) {
    const Tensor x = ctx.saved_tensors()[0];
    const Tensor d = 1.0 + abs(x);
    return {grad / (d * d)};  // one gradient per Tensor argument of forward
  }
};

struct SoftsignWrong : Function<SoftsignWrong> {
  static constexpr const char* name = "softsign_wrong";
  static Tensor forward(FunctionCtx& ctx, const Tensor& x) {
    ctx.save_for_backward({x});
    return x / (1.0 + abs(x));
  }
  static Grads backward(FunctionCtx& ctx, const Tensor& grad) {
    const Tensor x = ctx.saved_tensors()[0];
    const Tensor d = 1.0 + abs(x);
    return {2.0 * grad / (d * d)};  // wrong: a factor 2 too many
  }
};

int main() {
  Generator gen(3);
  const Tensor x = randn({3, 4}, DType::Float64, &gen).requires_grad_();  // gradcheck wants float64

  const GradcheckResult right = gradcheck([](const std::vector<Tensor>& in) { return Softsign::apply(in[0]); }, {x});
  fmt::print("softsign:       {}\n", right.passed ? "gradcheck passed" : "gradcheck FAILED\n" + right.report);

  const GradcheckResult wrong =
      gradcheck([](const std::vector<Tensor>& in) { return SoftsignWrong::apply(in[0]); }, {x});
  fmt::print("softsign_wrong: {}\n", wrong.passed ? "gradcheck passed (it should not)" : "gradcheck failed: " + wrong.diagnosis);

  // The op composes with the built-in ones like any other.
  const Tensor y = sum(Softsign::apply(x) * x);
  backward(y);
  fmt::print("d/dx sum(softsign(x) * x) at x[0, 0] = {:.6f}\n", x.grad().at<double>({0, 0}));
  return right.passed && !wrong.passed ? 0 : 1;
}
