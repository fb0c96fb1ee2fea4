// Mistake: y = W x for a fixed W: the gradient for x uses the total of the output gradient for every output, dx = W^T (sum(g) 1) instead of W^T g
#include "case.h"
namespace {
using namespace ropegrad;
struct MatVec : Function<MatVec> {
  static constexpr const char* name = "matvec";
  static Tensor forward(FunctionCtx& ctx, const Tensor& w, const Tensor& x) {
    ctx.save_for_backward({w});
    return matmul(w, x);
  }
  static Grads backward(FunctionCtx& ctx, const Tensor& g) {
    const Tensor w = ctx.saved_tensors()[0];
    const Tensor total = sum(g) * ones(g.shape(), DType::Float64);
    return {Tensor(), matmul(transpose(w, 0, 1), total)};
  }
};
mistakes::Case make() {
  Generator gen(209);
  Tensor w = randn({4, 3}, DType::Float64, &gen);
  Tensor x = randn({3}, DType::Float64, &gen);
  x.requires_grad_();
  std::vector<Tensor> inputs{w, x};
  GradcheckFn f = [](const std::vector<Tensor>& in) { return MatVec::apply(in[0], in[1]); };
  return {"matvec-grad-x-uses-total",
          "y = W x for a fixed W: the gradient for x uses the total of the output gradient for every output, dx = W^T (sum(g) 1) instead of W^T g",
          inputs,
          f,
          std::vector<std::string>{"one gradient for every output", "sum(g)"}};
}
const mistakes::Register reg(make);
}  // namespace
