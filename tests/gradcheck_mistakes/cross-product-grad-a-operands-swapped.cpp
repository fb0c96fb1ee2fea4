// Mistake: row-wise cross product c = a x b of a, b (2, 3): the gradient for a is computed as g x b, the cross product's operands in the wrong order, which flips its sign (correct: da = b x g, from g . (a x b) = a . (b x g)); db = g x a is right
// Origin: written without sight of the checker (issue 27's fourth set; worked from)
#include "case.h"
#include <vector>
namespace {
using namespace ropegrad;
Tensor cross_rows(const Tensor& u, const Tensor& v) {
  const Tensor u0 = select(u, 1, 0), u1 = select(u, 1, 1), u2 = select(u, 1, 2);
  const Tensor v0 = select(v, 1, 0), v1 = select(v, 1, 1), v2 = select(v, 1, 2);
  return stack({u1 * v2 - u2 * v1, u2 * v0 - u0 * v2, u0 * v1 - u1 * v0}, 1);
}
struct Cross : Function<Cross> {
  static constexpr const char* name = "cross_rows";
  static Tensor forward(FunctionCtx& ctx, const Tensor& a, const Tensor& b) {
    ctx.save_for_backward({a, b});
    return cross_rows(a, b);
  }
  static Grads backward(FunctionCtx& ctx, const Tensor& g) {
    const auto saved = ctx.saved_tensors();
    const Tensor a = saved[0], b = saved[1];
    const Tensor da = cross_rows(g, b);
    const Tensor db = cross_rows(g, a);
    return {da, db};
  }
};
mistakes::Case make() {
  Generator gen(412);
  Tensor a = randn({2, 3}, DType::Float64, &gen);
  Tensor b = randn({2, 3}, DType::Float64, &gen);
  a.requires_grad_();
  b.requires_grad_();
  std::vector<Tensor> inputs{a, b};
  return {"cross-product-grad-a-operands-swapped",
          "row-wise cross product c = a x b of a, b (2, 3): the gradient for a is computed as g x b, the cross product's operands in the wrong order, which flips its sign (correct: da = b x g, from g . (a x b) = a . (b x g)); db = g x a is right",
          inputs,
          [](const std::vector<Tensor>& in) { return Cross::apply(in[0], in[1]); },
          std::vector<std::string>{"wrong sign"}};
}
const mistakes::Register reg(make);
}  // namespace
