// Mistake: log_softmax's backward returns g - exp(z) (softmax): it drops the factor sum(g) of the row, as if the incoming gradient always summed to 1 (correct: g - exp(z) * sum(g) per row)
#include "case.h"
#include <any>
#include <cmath>
#include <limits>
namespace {
using namespace ropegrad;
struct RowLogSoftmax : Function<RowLogSoftmax> {
  static constexpr const char* name = "row_log_softmax";
  static Tensor forward(FunctionCtx& ctx, const Tensor& x) {
    Tensor z = log_softmax(x, -1);
    ctx.save_for_backward({z});
    return z;
  }
  static Grads backward(FunctionCtx& ctx, const Tensor& g) {
    const Tensor z = ctx.saved_tensors()[0];
    return {g - exp(z)};
  }
};
mistakes::Case make() {
  Generator gen(102);
  Tensor x = randn({4, 3}, DType::Float64, &gen);
  x.requires_grad_();
  std::vector<Tensor> inputs{x};
  return {"log-softmax-assumes-unit-grad-sum",
          "log_softmax's backward returns g - exp(z) (softmax): it drops the factor sum(g) of the row, as if the incoming gradient always summed to 1 (correct: g - exp(z) * sum(g) per row)",
          inputs,
          [](const std::vector<Tensor>& in) { return RowLogSoftmax::apply(in[0]); },
          std::vector<std::string>{"only some entries wrong", "where j0 != i0", "the output does not depend on the input"}};
}
const mistakes::Register reg(make);
}  // namespace
