// Mistake: Log-sum-exp down the columns, y[j] = log(sum_i exp(x[i, j])), reducing dim 0 of x of shape [4, 3] to shape [3]. The backward broadcasts g back over the rows correctly but multiplies by softmax(x, 1), normalising across each row instead of down each column. The correct rule is dx[i, j] = g[j] * softmax(x, 0)[i, j] (the softmax over the reduced dim 0).
// Origin: written without sight of the checker (issue 27's ninth set; the half worked from)
#include "case.h"
#include <algorithm>
#include <any>
#include <cmath>
#include <vector>
namespace {
using namespace ropegrad;
struct LogSumExp0 : Function<LogSumExp0> {
  static constexpr const char* name = "logsumexp_dim0";
  static Tensor forward(FunctionCtx& ctx, const Tensor& x) {
    ctx.save_for_backward({x});
    return logsumexp(x, {0});
  }
  static Grads backward(FunctionCtx& ctx, const Tensor& g) {
    const Tensor x = ctx.saved_tensors()[0];
    return {unsqueeze(g, 0) * softmax(x, 1)};
  }
};
mistakes::Case make() {
  Generator gen(9116);
  Tensor x = randn({4, 3}, DType::Float64, &gen);
  x.requires_grad_();
  std::vector<Tensor> inputs{x};
  return {"u9-logsumexp-dim0-softmax-over-wrong-dim", "Log-sum-exp down the columns, y[j] = log(sum_i exp(x[i, j])), reducing dim 0 of x of shape [4, 3] to shape [3]. The backward broadcasts g back over the rows correctly but multiplies by softmax(x, 1), normalising across each row instead of down each column. The correct rule is dx[i, j] = g[j] * softmax(x, 0)[i, j] (the softmax over the reduced dim 0).", inputs, [](const std::vector<Tensor>& in) { return LogSumExp0::apply(in[0]); }};
}
const mistakes::Register reg(make);
}  // namespace
