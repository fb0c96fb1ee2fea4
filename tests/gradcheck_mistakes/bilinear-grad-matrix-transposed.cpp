// Mistake: the backward of the bilinear form x^T A y returns dA = g * y x^T, the transpose of the right g * x y^T (dx and dy are right)
#include "case.h"
#include <any>
#include <cmath>
#include <limits>
namespace {
using namespace ropegrad;
struct Bilinear : Function<Bilinear> {
  static constexpr const char* name = "bilinear";
  static Tensor forward(FunctionCtx& ctx, const Tensor& x, const Tensor& A, const Tensor& y) {
    ctx.save_for_backward({x, A, y});
    return sum(unsqueeze(x, 1) * A * unsqueeze(y, 0));
  }
  static Grads backward(FunctionCtx& ctx, const Tensor& g) {
    const auto saved = ctx.saved_tensors();
    const Tensor x = saved[0], A = saved[1], y = saved[2];
    Tensor dx = g * matmul(A, y);
    Tensor dA = g * (unsqueeze(y, 1) * unsqueeze(x, 0));
    Tensor dy = g * matmul(transpose(A, 0, 1), x);
    return {dx, dA, dy};
  }
};
mistakes::Case make() {
  Generator gen(109);
  Tensor x = randn({4}, DType::Float64, &gen);
  Tensor A = randn({4, 4}, DType::Float64, &gen);
  Tensor y = randn({4}, DType::Float64, &gen);
  x.requires_grad_();
  A.requires_grad_();
  y.requires_grad_();
  std::vector<Tensor> inputs{x, A, y};
  return {"bilinear-grad-matrix-transposed",
          "the backward of the bilinear form x^T A y returns dA = g * y x^T, the transpose of the right g * x y^T (dx and dy are right)",
          inputs,
          [](const std::vector<Tensor>& in) { return Bilinear::apply(in[0], in[1], in[2]); },
          std::vector<std::string>{"a transposed gradient", "last two dims swapped"},
          std::vector<std::string>{"gradcheck failed for input 1 (shape [4, 4])"}};
}
const mistakes::Register reg(make);
}  // namespace
