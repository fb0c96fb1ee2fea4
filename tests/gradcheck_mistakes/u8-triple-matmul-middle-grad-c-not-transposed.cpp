// Mistake: a chain of three matmuls Y = A B C with A (2, 3), B (3, 3), C (3, 3): the gradient for the middle factor multiplies by C without transposing it, dB = A^T G C, where dB = A^T G C^T belongs (the square C hides the shape error); dA = G C^T B^T and dC = (A B)^T G are right
// Origin: written without sight of the checker (issue 27's eighth set; the held-out half: judged once)
#include "case.h"
#include <vector>
namespace {
using namespace ropegrad;
struct Matmul3 : Function<Matmul3> {
  static constexpr const char* name = "matmul3";
  static Tensor forward(FunctionCtx& ctx, const Tensor& a, const Tensor& b, const Tensor& c) {
    ctx.save_for_backward({a, b, c});
    return matmul(matmul(a, b), c);
  }
  static Grads backward(FunctionCtx& ctx, const Tensor& g) {
    const auto s = ctx.saved_tensors();
    const Tensor &a = s[0], &b = s[1], &c = s[2];
    Tensor da = matmul(matmul(g, transpose(c, 0, 1)), transpose(b, 0, 1));
    Tensor db = matmul(matmul(transpose(a, 0, 1), g), c);
    Tensor dc = matmul(transpose(matmul(a, b), 0, 1), g);
    return {da, db, dc};
  }
};
mistakes::Case make() {
  Generator gen(8106);
  Tensor a = randn({2, 3}, DType::Float64, &gen);
  Tensor b = randn({3, 3}, DType::Float64, &gen);
  Tensor c = randn({3, 3}, DType::Float64, &gen);
  a.requires_grad_();
  b.requires_grad_();
  c.requires_grad_();
  std::vector<Tensor> inputs{a, b, c};
  return {"u8-triple-matmul-middle-grad-c-not-transposed",
          "a chain of three matmuls Y = A B C with A (2, 3), B (3, 3), C (3, 3): the gradient for the middle factor multiplies by C without transposing it, dB = A^T G C, where dB = A^T G C^T belongs (the square C hides the shape error); dA = G C^T B^T and dC = (A B)^T G are right",
          inputs, [](const std::vector<Tensor>& in) { return Matmul3::apply(in[0], in[1], in[2]); }};
}
const mistakes::Register reg(make);
}  // namespace
