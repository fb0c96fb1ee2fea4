// Mistake: batched matmul C_b = A_b B_b with both operands batched (2 batches): the backward treats B as a weight shared by the batch and gives every B_b the sum over the batch, sum_b' A_b'^T G_b', instead of its own A_b^T G_b; dA = G B^T is right
#include "case.h"
#include <vector>
namespace {
using namespace ropegrad;
struct BatchedMatmul : Function<BatchedMatmul> {
  static constexpr const char* name = "batched_matmul";
  static Tensor forward(FunctionCtx& ctx, const Tensor& a, const Tensor& b) {
    ctx.save_for_backward({a, b});
    return matmul(a, b);
  }
  static Grads backward(FunctionCtx& ctx, const Tensor& g) {
    const auto saved = ctx.saved_tensors();
    const Tensor a = saved[0], b = saved[1];
    const Tensor da = matmul(g, transpose(b, -1, -2));
    const Tensor per_batch = matmul(transpose(a, -1, -2), g);  // (2, 4, 5)
    const Tensor db = contiguous(expand(sum(per_batch, {0}, true), b.shape()));
    return {da, db};
  }
};
mistakes::Case make() {
  Generator gen(31);
  Tensor a = randn({2, 3, 4}, DType::Float64, &gen);
  Tensor b = randn({2, 4, 5}, DType::Float64, &gen);
  a.requires_grad_();
  b.requires_grad_();
  std::vector<Tensor> inputs{a, b};
  return {"bmm-grad-b-summed-over-batch",
          "batched matmul C_b = A_b B_b with both operands batched (2 batches): the backward treats B as a weight shared by the batch and gives every B_b the sum over the batch, sum_b' A_b'^T G_b', instead of its own A_b^T G_b; dA = G B^T is right",
          inputs,
          [](const std::vector<Tensor>& in) { return BatchedMatmul::apply(in[0], in[1]); }};
}
const mistakes::Register reg(make);
}  // namespace
