// Mistake: matrix square Y = A A with a non-symmetric A (3, 3): the backward applies the scalar rule d(a^2) = 2 a da to the matrix and doubles the right factor's term, dA = 2 A^T G, instead of summing the two factors' terms, dA = G A^T + A^T G (matrices do not commute)
// Origin: written without sight of the checker (issue 27's fifth set; worked from)
#include "case.h"
#include <vector>
namespace {
using namespace ropegrad;
struct MatrixSquare : Function<MatrixSquare> {
  static constexpr const char* name = "matrix_square";
  static Tensor forward(FunctionCtx& ctx, const Tensor& a) {
    ctx.save_for_backward({a});
    return matmul(a, a);
  }
  static Grads backward(FunctionCtx& ctx, const Tensor& g) {
    const Tensor a = ctx.saved_tensors()[0];
    return {2.0 * matmul(transpose(a, 0, 1), g)};
  }
};
mistakes::Case make() {
  Generator gen(5118);
  Tensor a = randn({3, 3}, DType::Float64, &gen);
  a.requires_grad_();
  std::vector<Tensor> inputs{a};
  return {"u5-matrix-square-grad-doubled-one-side", "matrix square Y = A A with a non-symmetric A (3, 3): the backward applies the scalar rule d(a^2) = 2 a da to the matrix and doubles the right factor's term, dA = 2 A^T G, instead of summing the two factors' terms, dA = G A^T + A^T G (matrices do not commute)", inputs,
          [](const std::vector<Tensor>& in) { return MatrixSquare::apply(in[0]); }};
}
const mistakes::Register reg(make);
}  // namespace
