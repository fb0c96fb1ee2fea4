// Mistake: linear interpolation y = a + w (b - a) = (1 - w) a + w b with w (2, 1) broadcast over the columns: the backward gives a the weight of b and b the weight of a, da = g w and db = g (1 - w), instead of da = g (1 - w) and db = g w; dw = sum over columns of g (b - a) is right
#include "case.h"
#include <vector>
namespace {
using namespace ropegrad;
struct Lerp : Function<Lerp> {
  static constexpr const char* name = "lerp";
  static Tensor forward(FunctionCtx& ctx, const Tensor& a, const Tensor& b, const Tensor& w) {
    ctx.save_for_backward({a, b, w});
    return a + w * (b - a);
  }
  static Grads backward(FunctionCtx& ctx, const Tensor& g) {
    const auto saved = ctx.saved_tensors();
    const Tensor a = saved[0], b = saved[1], w = saved[2];
    const Tensor da = g * w;
    const Tensor db = g * (1.0 - w);
    const Tensor dw = sum_to(g * (b - a), w.shape());
    return {da, db, dw};
  }
};
mistakes::Case make() {
  Generator gen(88);
  Tensor a = randn({2, 3}, DType::Float64, &gen);
  Tensor b = randn({2, 3}, DType::Float64, &gen);
  Tensor w = tensor(std::vector<double>{0.2, -0.7}, {2, 1}, DType::Float64);
  a.requires_grad_();
  b.requires_grad_();
  w.requires_grad_();
  std::vector<Tensor> inputs{a, b, w};
  return {"lerp-weights-exchanged",
          "linear interpolation y = a + w (b - a) = (1 - w) a + w b with w (2, 1) broadcast over the columns: the backward gives a the weight of b and b the weight of a, da = g w and db = g (1 - w), instead of da = g (1 - w) and db = g w; dw = sum over columns of g (b - a) is right",
          inputs,
          [](const std::vector<Tensor>& in) { return Lerp::apply(in[0], in[1], in[2]); }};
}
const mistakes::Register reg(make);
}  // namespace
