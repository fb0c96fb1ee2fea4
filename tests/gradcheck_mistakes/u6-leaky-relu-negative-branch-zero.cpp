// Mistake: leaky ReLU with negative slope 0.1, y = x for x > 0 and 0.1 x otherwise, x (2, 4): the backward copies ReLU's rule and returns 0 on the negative branch, dx = g [x > 0], instead of dx = g for x > 0 and 0.1 g for x <= 0; the positive entries are right
// Origin: written without sight of the checker (issue 27's sixth set; held out, judged once)
#include "case.h"
#include <vector>
namespace {
using namespace ropegrad;
struct LeakyRelu : Function<LeakyRelu> {
  static constexpr const char* name = "leaky_relu";
  static Tensor forward(FunctionCtx& ctx, const Tensor& x) {
    ctx.save_for_backward({x});
    std::vector<double> v = x.to_vector<double>();
    for (double& e : v) e = e > 0 ? e : 0.1 * e;
    return tensor(v, x.shape(), DType::Float64);
  }
  static Grads backward(FunctionCtx& ctx, const Tensor& g) {
    const Tensor x = ctx.saved_tensors()[0];
    const std::vector<double> xv = x.to_vector<double>(), gv = g.to_vector<double>();
    std::vector<double> dx(xv.size());
    for (size_t i = 0; i < xv.size(); ++i) dx[i] = xv[i] > 0 ? gv[i] : 0.0;  // ReLU's mask: the 0.1 slope is lost
    return {tensor(dx, x.shape(), DType::Float64)};
  }
};
mistakes::Case make() {
  const std::vector<double> xs{0.7, -1.3, 0.4, -0.2, -0.9, 1.6, -2.1, 0.3};
  Tensor x = tensor(xs, {2, 4}, DType::Float64);
  x.requires_grad_();
  std::vector<Tensor> inputs{x};
  return {"u6-leaky-relu-negative-branch-zero",
          "Mistake: leaky ReLU with negative slope 0.1, y = x for x > 0 and 0.1 x otherwise, x (2, 4): the backward "
          "copies ReLU's rule and returns 0 on the negative branch, dx = g [x > 0], instead of dx = g for x > 0 and "
          "0.1 g for x <= 0; the positive entries are right",
          inputs, [](const std::vector<Tensor>& in) { return LeakyRelu::apply(in[0]); }};
}
const mistakes::Register reg(make);
}  // namespace
