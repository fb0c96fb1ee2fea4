// Mistake: mean squared error over every element, L = mean((p - t)^2) with p (3, 4) and fixed targets t (not checked): the backward divides by the batch size 3 instead of the number of elements averaged, 12, dp = 2 g (p - t) / 3 instead of dp = 2 g (p - t) / 12 (4 times too large)
// Origin: written without sight of the checker (issue 27's sixth set; held out, judged once)
#include "case.h"
#include <vector>
namespace {
using namespace ropegrad;
struct MseLoss : Function<MseLoss> {
  static constexpr const char* name = "mse_loss";
  static Tensor forward(FunctionCtx& ctx, const Tensor& p, const Tensor& t) {
    ctx.save_for_backward({p, t});
    Tensor d = p - t;
    return mean(d * d);
  }
  static Grads backward(FunctionCtx& ctx, const Tensor& g) {
    const auto s = ctx.saved_tensors();
    const double gg = g.item<double>();
    const double rows = static_cast<double>(s[0].size(0));  // the batch, where numel() = 12 belongs
    Tensor dp = (s[0] - s[1]) * (2.0 * gg / rows);
    return {dp, Tensor()};
  }
};
mistakes::Case make() {
  Generator gen(6105);
  Tensor p = randn({3, 4}, DType::Float64, &gen);
  Tensor t = randn({3, 4}, DType::Float64, &gen);
  p.requires_grad_();
  std::vector<Tensor> inputs{p, t};
  return {"u6-mse-mean-divided-by-batch-not-numel",
          "Mistake: mean squared error over every element, L = mean((p - t)^2) with p (3, 4) and fixed targets t (not "
          "checked): the backward divides by the batch size 3 instead of the number of elements averaged, 12, dp = 2 g "
          "(p - t) / 3 instead of dp = 2 g (p - t) / 12 (4 times too large)",
          inputs, [](const std::vector<Tensor>& in) { return MseLoss::apply(in[0], in[1]); }};
}
const mistakes::Register reg(make);
}  // namespace
