// Mistake: Matrix product C = A @ B with A of shape [3, 3] (square) and B of shape [3, 2]. The gradient of B is right (A^T @ g), but the gradient of A is computed as B @ g^T, which is the transpose of the right answer; because A is square the shape still matches, so nothing complains. The correct rule is dA = g @ B^T and dB = A^T @ g.
// Origin: written without sight of the checker (issue 27's ninth set; the half worked from)
#include "case.h"
#include <algorithm>
#include <any>
#include <cmath>
#include <vector>
namespace {
using namespace ropegrad;
struct MatMul : Function<MatMul> {
  static constexpr const char* name = "my_matmul";
  static Tensor forward(FunctionCtx& ctx, const Tensor& a, const Tensor& b) {
    ctx.save_for_backward({a, b});
    return matmul(a, b);
  }
  static Grads backward(FunctionCtx& ctx, const Tensor& g) {
    const Tensor a = ctx.saved_tensors()[0], b = ctx.saved_tensors()[1];
    Tensor da = matmul(b, transpose(g, 0, 1));
    Tensor db = matmul(transpose(a, 0, 1), g);
    return {da, db};
  }
};
mistakes::Case make() {
  Generator gen(9104);
  Tensor a = randn({3, 3}, DType::Float64, &gen), b = randn({3, 2}, DType::Float64, &gen);
  a.requires_grad_();
  b.requires_grad_();
  std::vector<Tensor> inputs{a, b};
  return {"u9-matmul-square-left-grad-transposed", "Matrix product C = A @ B with A of shape [3, 3] (square) and B of shape [3, 2]. The gradient of B is right (A^T @ g), but the gradient of A is computed as B @ g^T, which is the transpose of the right answer; because A is square the shape still matches, so nothing complains. The correct rule is dA = g @ B^T and dB = A^T @ g.", inputs, [](const std::vector<Tensor>& in) { return MatMul::apply(in[0], in[1]); }};
}
const mistakes::Register reg(make);
}  // namespace
