// Mistake: clamp(x, -0.5, 0.8): the backward passes g wherever x >= -0.5 and forgets the upper bound, so elements clamped at the maximum 0.8 get g instead of 0 (correct: g where -0.5 <= x <= 0.8, 0 elsewhere)
#include "case.h"
#include <vector>
namespace {
using namespace ropegrad;
struct Clip : Function<Clip> {
  static constexpr const char* name = "clip";
  static Tensor forward(FunctionCtx& ctx, const Tensor& x) {
    ctx.save_for_backward({x});
    return clamp(x, -0.5, 0.8);
  }
  static Grads backward(FunctionCtx& ctx, const Tensor& g) {
    const Tensor x = ctx.saved_tensors()[0];
    return {where(ge(x, -0.5), g, zeros_like(g))};
  }
};
mistakes::Case make() {
  // Values below, inside and above [-0.5, 0.8], none within 0.1 of a bound.
  Tensor x = tensor(std::vector<double>{-1.3, 0.2, 1.45, -0.1, 0.95, 0.6, -0.75, 2.1, 0.35, -0.25}, {2, 5},
                    DType::Float64);
  x.requires_grad_();
  std::vector<Tensor> inputs{x};
  return {"clamp-upper-bound-not-masked",
          "clamp(x, -0.5, 0.8): the backward passes g wherever x >= -0.5 and forgets the upper bound, so elements clamped at the maximum 0.8 get g instead of 0 (correct: g where -0.5 <= x <= 0.8, 0 elsewhere)",
          inputs,
          [](const std::vector<Tensor>& in) { return Clip::apply(in[0]); }};
}
const mistakes::Register reg(make);
}  // namespace
