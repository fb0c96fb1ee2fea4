// Mistake: mean over the middle dim of a [2, 3, 4] tensor: the backward divides by the size of the last dim (4) instead of the size of the reduced middle dim (3)
#include "case.h"
#include <any>
#include <cmath>
#include <limits>
namespace {
using namespace ropegrad;
struct MeanMiddle : Function<MeanMiddle> {
  static constexpr const char* name = "mean_middle";
  static Tensor forward(FunctionCtx& ctx, const Tensor& x) {
    ctx.saved_data["shape"] = x.shape();
    return mean(x, {1});
  }
  static Grads backward(FunctionCtx& ctx, const Tensor& g) {
    const Shape shape = std::any_cast<Shape>(ctx.saved_data["shape"]);
    const double count = static_cast<double>(shape.back());
    return {expand(unsqueeze(g, 1), shape) / count};
  }
};
mistakes::Case make() {
  Generator gen(117);
  Tensor x = randn({2, 3, 4}, DType::Float64, &gen);
  x.requires_grad_();
  std::vector<Tensor> inputs{x};
  return {"mean-middle-dim-wrong-count",
          "mean over the middle dim of a [2, 3, 4] tensor: the backward divides by the size of the last dim (4) instead of the size of the reduced middle dim (3)",
          inputs,
          [](const std::vector<Tensor>& in) { return MeanMiddle::apply(in[0]); },
          std::vector<std::string>{"off by a constant factor", "3/4", "dim 1", "dim 2"}};
}
const mistakes::Register reg(make);
}  // namespace
