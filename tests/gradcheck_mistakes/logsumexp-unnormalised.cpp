// Mistake: logsumexp's backward returns g * exp(x) without dividing by sum(exp(x)) (missing the normalisation; correct: g * exp(x - lse), the softmax)
#include "case.h"
#include <any>
#include <cmath>
#include <limits>
namespace {
using namespace ropegrad;
struct RowLogSumExp : Function<RowLogSumExp> {
  static constexpr const char* name = "row_logsumexp";
  static Tensor forward(FunctionCtx& ctx, const Tensor& x) {
    ctx.save_for_backward({x});
    return logsumexp(x, {1});
  }
  static Grads backward(FunctionCtx& ctx, const Tensor& g) {
    const Tensor x = ctx.saved_tensors()[0];
    return {unsqueeze(g, 1) * exp(x)};
  }
};
mistakes::Case make() {
  Generator gen(107);
  Tensor x = randn({3, 4}, DType::Float64, &gen);
  x.requires_grad_();
  std::vector<Tensor> inputs{x};
  return {"logsumexp-unnormalised",
          "logsumexp's backward returns g * exp(x) without dividing by sum(exp(x)) (missing the normalisation; correct: g * exp(x - lse), the softmax)",
          inputs,
          [](const std::vector<Tensor>& in) { return RowLogSumExp::apply(in[0]); },
          std::vector<std::string>{"off by a varying factor", "per output element"}};
}
const mistakes::Register reg(make);
}  // namespace
