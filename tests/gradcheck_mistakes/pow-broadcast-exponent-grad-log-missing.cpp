// Mistake: y = x^w with x (3, 4) in [0.5, 2] and an exponent w (1, 4) broadcast over the rows: the exponent's gradient drops the log from d(x^w)/dw = x^w log x, dw = sum over rows of g x^w, instead of dw = sum over rows of g x^w log x; dx = g w x^(w - 1) is right
// Origin: written without sight of the checker (issue 27's fourth set; held out, judged once on gradcheck as it was then)
#include "case.h"
#include <vector>
namespace {
using namespace ropegrad;
struct PowBroadcast : Function<PowBroadcast> {
  static constexpr const char* name = "pow_row_exponent";
  static Tensor forward(FunctionCtx& ctx, const Tensor& x, const Tensor& w) {
    const Tensor y = exp(w * log(x));  // (3, 4)
    ctx.save_for_backward({x, w, y});
    return y;
  }
  static Grads backward(FunctionCtx& ctx, const Tensor& g) {
    const auto saved = ctx.saved_tensors();
    const Tensor x = saved[0], w = saved[1], y = saved[2];
    const Tensor dx = g * w * y / x;
    const Tensor dw = sum_to(g * y, w.shape());
    return {dx, dw};
  }
};
mistakes::Case make() {
  Generator gen(418);
  Tensor x = rand({3, 4}, DType::Float64, &gen) * 1.5 + 0.5;
  Tensor w = tensor(std::vector<double>{0.6, 1.7, 2.3, 1.1}, {1, 4}, DType::Float64) +
             randn({1, 4}, DType::Float64, &gen) * 0.05;
  x.requires_grad_();
  w.requires_grad_();
  std::vector<Tensor> inputs{x, w};
  return {"pow-broadcast-exponent-grad-log-missing",
          "y = x^w with x (3, 4) in [0.5, 2] and an exponent w (1, 4) broadcast over the rows: the exponent's gradient drops the log from d(x^w)/dw = x^w log x, dw = sum over rows of g x^w, instead of dw = sum over rows of g x^w log x; dx = g w x^(w - 1) is right",
          inputs,
          [](const std::vector<Tensor>& in) { return PowBroadcast::apply(in[0], in[1]); },
          std::vector<std::string>{"off by a varying factor", "a factor log(input0[i0, i1]) that the rule leaves out"}};
}
const mistakes::Register reg(make);
}  // namespace
