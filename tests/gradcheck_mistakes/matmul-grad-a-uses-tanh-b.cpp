// Mistake: A @ B: the gradient for A multiplies g by tanh(B)^T instead of B^T (a stray activation); dB is right, and no simple form relates the two
#include "case.h"
namespace {
using namespace ropegrad;
struct MatmulTanh : Function<MatmulTanh> {
  static constexpr const char* name = "matmul_tanh";
  static Tensor forward(FunctionCtx& ctx, const Tensor& a, const Tensor& b) {
    ctx.save_for_backward({a, b});
    return matmul(a, b);
  }
  static Grads backward(FunctionCtx& ctx, const Tensor& g) {
    const Tensor a = ctx.saved_tensors()[0], b = ctx.saved_tensors()[1];
    return {matmul(g, transpose(tanh(b), 0, 1)), matmul(transpose(a, 0, 1), g)};
  }
};
mistakes::Case make() {
  Generator gen(218);
  Tensor a = randn({2, 3}, DType::Float64, &gen);
  Tensor b = randn({3, 4}, DType::Float64, &gen);
  a.requires_grad_();
  b.requires_grad_();
  std::vector<Tensor> inputs{a, b};
  GradcheckFn f = [](const std::vector<Tensor>& in) { return MatmulTanh::apply(in[0], in[1]); };
  return {"matmul-grad-a-uses-tanh-b",
          "A @ B: the gradient for A multiplies g by tanh(B)^T instead of B^T (a stray activation); dB is right, and no simple form relates the two",
          inputs,
          f,
          std::vector<std::string>{},
          std::vector<std::string>{"observed: ", "gradcheck failed for input 0", "input 0's gradient is wrong at 22 of its 48 entries", "input 1's is right"}};
}
const mistakes::Register reg(make);
}  // namespace
