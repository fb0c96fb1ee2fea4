// Mistake: Cross-entropy loss averaged over the batch, L = mean_b(-log softmax(z_b)[t_b]), for logits z of shape [4, 5] and the fixed int64 targets t = [1, 4, 0, 2] passed as a second Tensor argument without gradient. The backward returns g * (softmax(z, 1) - onehot(t)), the per-example gradient, and forgets the 1 / B of the batch mean. The correct rule is dz = g * (softmax(z, 1) - onehot(t)) / B with B = 4.
// Origin: written without sight of the checker (issue 27's ninth set; the held-out half: judged once)
#include "case.h"
#include <algorithm>
#include <any>
#include <cmath>
#include <vector>
namespace {
using namespace ropegrad;
struct CrossEntropy : Function<CrossEntropy> {
  static constexpr const char* name = "cross_entropy_custom";
  static Tensor forward(FunctionCtx& ctx, const Tensor& z, const Tensor& t) {
    Tensor ls = log_softmax(z, 1);
    ctx.save_for_backward({z});
    ctx.saved_data["t"] = t.to_vector<int64_t>();
    Tensor picked = gather(ls, 1, unsqueeze(t, 1));
    return neg(mean(picked));
  }
  static Grads backward(FunctionCtx& ctx, const Tensor& g) {
    const Tensor z = ctx.saved_tensors()[0];
    const auto t = std::any_cast<std::vector<int64_t>>(ctx.saved_data["t"]);
    const int64_t b = z.size(0), c = z.size(1);
    std::vector<double> oh(b * c, 0.0);
    for (int64_t i = 0; i < b; ++i) oh[i * c + t[i]] = 1.0;
    Tensor onehot = tensor(oh, {b, c}, DType::Float64);
    return {g * (softmax(z, 1) - onehot), Tensor()};
  }
};
mistakes::Case make() {
  Generator gen(9111);
  Tensor z = randn({4, 5}, DType::Float64, &gen);
  z.requires_grad_();
  std::vector<Tensor> inputs{z};
  return {"u9-cross-entropy-grad-not-divided-by-batch", "Cross-entropy loss averaged over the batch, L = mean_b(-log softmax(z_b)[t_b]), for logits z of shape [4, 5] and the fixed int64 targets t = [1, 4, 0, 2] passed as a second Tensor argument without gradient. The backward returns g * (softmax(z, 1) - onehot(t)), the per-example gradient, and forgets the 1 / B of the batch mean. The correct rule is dz = g * (softmax(z, 1) - onehot(t)) / B with B = 4.", inputs,
          [](const std::vector<Tensor>& in) { return CrossEntropy::apply(in[0], tensor_i64({1, 4, 0, 2})); }};
}
const mistakes::Register reg(make);
}  // namespace
