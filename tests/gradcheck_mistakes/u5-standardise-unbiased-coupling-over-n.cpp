// Mistake: standardisation of each row with the unbiased standard deviation, y = (x - mean) / s, s = sqrt(sum((x - mean)^2) / (n - 1)) with x (3, 5), n = 5: the backward copies layer norm's rule and takes the coupling term over n, dx = (g - mean(g) - y sum(g y) / 5) / s, where the unbiased s needs n - 1 there, dx = (g - mean(g) - y sum(g y) / 4) / s; the mean(g) term is right
// Origin: written without sight of the checker (issue 27's fifth set; held out, judged once)
#include "case.h"
#include <vector>
namespace {
using namespace ropegrad;
struct StandardiseUnbiased : Function<StandardiseUnbiased> {
  static constexpr const char* name = "standardise_unbiased";
  static Tensor forward(FunctionCtx& ctx, const Tensor& x) {
    const int64_t n = x.size(1);
    Tensor centred = x - mean(x, {1}, true);
    Tensor s = sqrt(sum(centred * centred, {1}, true) / (n - 1));
    Tensor y = centred / s;
    ctx.save_for_backward({y, s});
    return y;
  }
  static Grads backward(FunctionCtx& ctx, const Tensor& g) {
    const std::vector<Tensor> saved = ctx.saved_tensors();
    const Tensor& y = saved[0];
    const Tensor& s = saved[1];
    return {(g - mean(g, {1}, true) - y * mean(g * y, {1}, true)) / s};
  }
};
mistakes::Case make() {
  Generator gen(5115);
  Tensor x = randn({3, 5}, DType::Float64, &gen);
  x.requires_grad_();
  std::vector<Tensor> inputs{x};
  return {"u5-standardise-unbiased-coupling-over-n", "standardisation of each row with the unbiased standard deviation, y = (x - mean) / s, s = sqrt(sum((x - mean)^2) / (n - 1)) with x (3, 5), n = 5: the backward copies layer norm's rule and takes the coupling term over n, dx = (g - mean(g) - y sum(g y) / 5) / s, where the unbiased s needs n - 1 there, dx = (g - mean(g) - y sum(g y) / 4) / s; the mean(g) term is right", inputs,
          [](const std::vector<Tensor>& in) { return StandardiseUnbiased::apply(in[0]); }};
}
const mistakes::Register reg(make);
}  // namespace
