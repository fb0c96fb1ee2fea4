// Mistake: mean cross-entropy over 3 rows with int64 targets: the backward returns softmax(z) / N and forgets to subtract the one-hot of the target, so only the entries of the target classes are wrong (by 1/N each)
#include "case.h"
namespace {
using namespace ropegrad;
struct CrossEntropy : Function<CrossEntropy> {
  static constexpr const char* name = "cross_entropy_no_one_hot";
  static Tensor forward(FunctionCtx& ctx, const Tensor& z, const Tensor& targets) {
    ctx.save_for_backward({z});
    const Tensor picked = squeeze(gather(z, 1, unsqueeze(targets, 1)), 1);
    return mean(logsumexp(z, {1}) - picked);
  }
  static Grads backward(FunctionCtx& ctx, const Tensor& g) {
    const Tensor z = ctx.saved_tensors()[0];
    return {g * softmax(z, 1) / static_cast<double>(z.size(0)), Tensor()};
  }
};
mistakes::Case make() {
  Generator gen(225);
  Tensor z = randn({3, 5}, DType::Float64, &gen);
  Tensor targets = tensor(std::vector<double>{1, 4, 0}, Shape{3}, DType::Int64);
  z.requires_grad_();
  std::vector<Tensor> inputs{z, targets};
  GradcheckFn f = [](const std::vector<Tensor>& in) { return CrossEntropy::apply(in[0], in[1]); };
  return {"cross-entropy-grad-without-one-hot",
          "mean cross-entropy over 3 rows with int64 targets: the backward returns softmax(z) / N and forgets to subtract the one-hot of the target, so only the entries of the target classes are wrong (by 1/N each)",
          inputs,
          f,
          std::vector<std::string>{"only some entries wrong", "the id input 1 holds"}};
}
const mistakes::Register reg(make);
}  // namespace
