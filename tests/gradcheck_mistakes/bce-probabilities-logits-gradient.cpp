// Mistake: binary cross-entropy on probabilities, L = -(t log p + (1 - t) log(1 - p)) elementwise with p (2, 3) in (0.2, 0.8) and fixed 0/1 targets t (not checked): the backward returns the with-logits gradient dp = g (p - t), forgetting that here p is the input and not sigmoid of it (correct: dp = g (p - t) / (p (1 - p)))
// Origin: written without sight of the checker (issue 27's third set; held out, judged once on gradcheck as it was then)
#include "case.h"
#include <vector>
namespace {
using namespace ropegrad;
struct BceProb : Function<BceProb> {
  static constexpr const char* name = "bce_prob";
  static Tensor forward(FunctionCtx& ctx, const Tensor& p, const Tensor& t) {
    ctx.save_for_backward({p, t});
    return -(t * log(p) + (1.0 - t) * log(1.0 - p));
  }
  static Grads backward(FunctionCtx& ctx, const Tensor& g) {
    const auto saved = ctx.saved_tensors();
    const Tensor p = saved[0], t = saved[1];
    const Tensor dp = g * (p - t);
    return {dp, Tensor()};
  }
};
mistakes::Case make() {
  Generator gen(311);
  Tensor p = rand({2, 3}, DType::Float64, &gen) * 0.6 + 0.2;
  Tensor t = tensor(std::vector<double>{1.0, 0.0, 0.0, 1.0, 1.0, 0.0}, {2, 3}, DType::Float64);
  p.requires_grad_();
  std::vector<Tensor> inputs{p, t};
  return {"bce-probabilities-logits-gradient",
          "binary cross-entropy on probabilities, L = -(t log p + (1 - t) log(1 - p)) elementwise with p (2, 3) in (0.2, 0.8) and fixed 0/1 targets t (not checked): the backward returns the with-logits gradient dp = g (p - t), forgetting that here p is the input and not sigmoid of it (correct: dp = g (p - t) / (p (1 - p)))",
          inputs,
          [](const std::vector<Tensor>& in) { return BceProb::apply(in[0], in[1]); },
          std::vector<std::string>{"the elementwise derivative is wrong", "the analytical derivative is input0[i] - input1[i] at every element"}};
}
const mistakes::Register reg(make);
}  // namespace
