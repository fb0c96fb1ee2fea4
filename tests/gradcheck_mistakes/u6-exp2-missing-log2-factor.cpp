// Mistake: y = 2^x elementwise on x (2, 3): the backward reuses exp's rule, dx = g y, and forgets the factor ln 2 of d(2^x)/dx = 2^x ln 2 (correct: dx = g y ln 2; the rule is 1 / ln 2 = 1.4427 times the truth everywhere)
// Origin: written without sight of the checker (issue 27's sixth set; held out, judged once)
#include "case.h"
#include <cmath>
#include <vector>
namespace {
using namespace ropegrad;
struct Exp2 : Function<Exp2> {
  static constexpr const char* name = "exp2";
  static Tensor forward(FunctionCtx& ctx, const Tensor& x) {
    std::vector<double> v = x.to_vector<double>();
    for (double& e : v) e = std::exp2(e);
    Tensor y = tensor(v, x.shape(), DType::Float64);
    ctx.save_for_backward({y});
    return y;
  }
  static Grads backward(FunctionCtx& ctx, const Tensor& g) {
    const Tensor y = ctx.saved_tensors()[0];
    return {g * y};  // exp's rule: the factor ln 2 is missing
  }
};
mistakes::Case make() {
  Generator gen(6117);
  Tensor x = randn({2, 3}, DType::Float64, &gen);
  x.requires_grad_();
  std::vector<Tensor> inputs{x};
  return {"u6-exp2-missing-log2-factor",
          "Mistake: y = 2^x elementwise on x (2, 3): the backward reuses exp's rule, dx = g y, and forgets the factor "
          "ln 2 of d(2^x)/dx = 2^x ln 2 (correct: dx = g y ln 2; the rule is 1 / ln 2 = 1.4427 times the truth "
          "everywhere)",
          inputs, [](const std::vector<Tensor>& in) { return Exp2::apply(in[0]); }};
}
const mistakes::Register reg(make);
}  // namespace
