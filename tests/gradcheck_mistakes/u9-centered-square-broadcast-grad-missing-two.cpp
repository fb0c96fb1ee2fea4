// Mistake: Elementwise squared deviation y = (x - m)^2 where x has shape [3, 4] and the centre m has shape [4] and is broadcast over the rows. The gradient of x, 2 * g * (x - m), is right; for m the learner remembers the minus sign and the sum over the broadcast rows but drops the factor 2 of the square: dm = -sum_over_rows(g * (x - m)). The correct rule is dm = -2 * sum_over_rows(g * (x - m)), shape [4].
// Origin: written without sight of the checker (issue 27's ninth set; the half worked from)
#include "case.h"
#include <algorithm>
#include <any>
#include <cmath>
#include <vector>
namespace {
using namespace ropegrad;
struct CenteredSquare : Function<CenteredSquare> {
  static constexpr const char* name = "centered_square";
  static Tensor forward(FunctionCtx& ctx, const Tensor& x, const Tensor& m) {
    ctx.save_for_backward({x, m});
    Tensor d = x - m;
    return d * d;
  }
  static Grads backward(FunctionCtx& ctx, const Tensor& g) {
    const Tensor x = ctx.saved_tensors()[0], m = ctx.saved_tensors()[1];
    Tensor d = x - m;
    Tensor dx = 2.0 * g * d;
    Tensor dm = neg(sum_to(g * d, m.shape()));
    return {dx, dm};
  }
};
mistakes::Case make() {
  Generator gen(9112);
  Tensor x = randn({3, 4}, DType::Float64, &gen), m = randn({4}, DType::Float64, &gen);
  x.requires_grad_();
  m.requires_grad_();
  std::vector<Tensor> inputs{x, m};
  return {"u9-centered-square-broadcast-grad-missing-two", "Elementwise squared deviation y = (x - m)^2 where x has shape [3, 4] and the centre m has shape [4] and is broadcast over the rows. The gradient of x, 2 * g * (x - m), is right; for m the learner remembers the minus sign and the sum over the broadcast rows but drops the factor 2 of the square: dm = -sum_over_rows(g * (x - m)). The correct rule is dm = -2 * sum_over_rows(g * (x - m)), shape [4].", inputs, [](const std::vector<Tensor>& in) { return CenteredSquare::apply(in[0], in[1]); }};
}
const mistakes::Register reg(make);
}  // namespace
