// Mistake: smooth max tau * logsumexp(x / tau) with tau = 0.5: the backward divides softmax(x / tau) by tau once more (chain rule of the inner x / tau applied, the outer factor tau forgotten), so the gradient is 1/tau = 2 times too large
#include "case.h"
#include <any>
#include <cmath>
#include <limits>
namespace {
using namespace ropegrad;
struct SmoothMax : Function<SmoothMax> {
  static constexpr const char* name = "smooth_max";
  static Tensor forward(FunctionCtx& ctx, const Tensor& x) {
    const double tau = 0.5;
    ctx.save_for_backward({x});
    ctx.saved_data["tau"] = tau;
    return tau * logsumexp(x / tau, {-1});
  }
  static Grads backward(FunctionCtx& ctx, const Tensor& g) {
    const Tensor x = ctx.saved_tensors()[0];
    const double tau = std::any_cast<double>(ctx.saved_data["tau"]);
    const Tensor p = softmax(x / tau, -1);
    return {unsqueeze(g, -1) * p / tau};
  }
};
mistakes::Case make() {
  Generator gen(113);
  Tensor x = randn({3, 4}, DType::Float64, &gen);
  x.requires_grad_();
  std::vector<Tensor> inputs{x};
  return {"smooth-max-extra-temperature-factor",
          "smooth max tau * logsumexp(x / tau) with tau = 0.5: the backward divides softmax(x / tau) by tau once more (chain rule of the inner x / tau applied, the outer factor tau forgotten), so the gradient is 1/tau = 2 times too large",
          inputs,
          [](const std::vector<Tensor>& in) { return SmoothMax::apply(in[0]); },
          std::vector<std::string>{"a factor of two", "the analytical gradient is 2 x the numerical one"}};
}
const mistakes::Register reg(make);
}  // namespace
