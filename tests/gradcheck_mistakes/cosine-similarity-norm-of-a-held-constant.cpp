// Mistake: row-wise cosine similarity: the gradient for a treats ||a|| as a constant, da = g * b / (||a|| ||b||), missing the term - g * cos * a / ||a||^2; the gradient for b is right
#include "case.h"
#include <any>
#include <cmath>
#include <limits>
namespace {
using namespace ropegrad;
struct RowCosine : Function<RowCosine> {
  static constexpr const char* name = "row_cosine";
  static Tensor forward(FunctionCtx& ctx, const Tensor& a, const Tensor& b) {
    ctx.save_for_backward({a, b});
    Tensor na = sqrt(sum(a * a, {1}, true)), nb = sqrt(sum(b * b, {1}, true));
    return sum(a * b, {1}) / squeeze(na * nb, 1);
  }
  static Grads backward(FunctionCtx& ctx, const Tensor& g) {
    const auto saved = ctx.saved_tensors();
    const Tensor a = saved[0], b = saved[1];
    const Tensor na = sqrt(sum(a * a, {1}, true)), nb = sqrt(sum(b * b, {1}, true));
    const Tensor cosv = sum(a * b, {1}, true) / (na * nb);
    const Tensor gk = unsqueeze(g, 1);
    Tensor da = gk * b / (na * nb);
    Tensor db = gk * (a / (na * nb) - cosv * b / (nb * nb));
    return {da, db};
  }
};
mistakes::Case make() {
  Generator gen(108);
  Tensor a = randn({3, 4}, DType::Float64, &gen);
  Tensor b = randn({3, 4}, DType::Float64, &gen);
  a.requires_grad_();
  b.requires_grad_();
  std::vector<Tensor> inputs{a, b};
  return {"cosine-similarity-norm-of-a-held-constant",
          "row-wise cosine similarity: the gradient for a treats ||a|| as a constant, da = g * b / (||a|| ||b||), missing the term - g * cos * a / ||a||^2; the gradient for b is right",
          inputs,
          [](const std::vector<Tensor>& in) { return RowCosine::apply(in[0], in[1]); },
          std::vector<std::string>{"off by an added term", "c x input0[j0, j1]", "one constant c per output element", "too many in the rule, or its opposite missing"},
          std::vector<std::string>{"gradcheck failed for input 0"}};
}
const mistakes::Register reg(make);
}  // namespace
