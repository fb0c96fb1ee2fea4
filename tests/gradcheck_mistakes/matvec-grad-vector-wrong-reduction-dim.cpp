// Mistake: matrix-vector product A v with A [3, 4]: the gradient for v sums A * g[:, None] over dim 1 (giving shape [3]) instead of dim 0 (A^T g, shape [4]); dA = g v^T is right
#include "case.h"
#include <any>
#include <cmath>
#include <limits>
namespace {
using namespace ropegrad;
struct MatVec : Function<MatVec> {
  static constexpr const char* name = "matvec";
  static Tensor forward(FunctionCtx& ctx, const Tensor& A, const Tensor& v) {
    ctx.save_for_backward({A, v});
    return matmul(A, v);
  }
  static Grads backward(FunctionCtx& ctx, const Tensor& g) {
    const auto saved = ctx.saved_tensors();
    const Tensor A = saved[0], v = saved[1];
    Tensor dA = unsqueeze(g, 1) * unsqueeze(v, 0);
    Tensor dv = sum(A * unsqueeze(g, 1), {1});
    return {dA, dv};
  }
};
mistakes::Case make() {
  Generator gen(118);
  Tensor A = randn({3, 4}, DType::Float64, &gen);
  Tensor v = randn({4}, DType::Float64, &gen);
  A.requires_grad_();
  v.requires_grad_();
  std::vector<Tensor> inputs{A, v};
  return {"matvec-grad-vector-wrong-reduction-dim",
          "matrix-vector product A v with A [3, 4]: the gradient for v sums A * g[:, None] over dim 1 (giving shape [3]) instead of dim 0 (A^T g, shape [4]); dA = g v^T is right",
          inputs,
          [](const std::vector<Tensor>& in) { return MatVec::apply(in[0], in[1]); },
          std::vector<std::string>{"backward raised an error"},
          std::vector<std::string>{"returned a gradient of shape [3] for input 1 of shape [4]"}};
}
const mistakes::Register reg(make);
}  // namespace
