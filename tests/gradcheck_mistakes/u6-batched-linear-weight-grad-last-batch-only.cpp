// Mistake: a weight shared by a batch, y_b = x_b W with x (2, 3, 4) and W (4, 2): the backward's loop over the batch assigns dW = x_b^T g_b at each step instead of accumulating it, so dW keeps only the last batch's x_1^T g_1 (correct: dW = sum_b x_b^T g_b); dx_b = g_b W^T is right
// Origin: written without sight of the checker (issue 27's sixth set; worked from)
#include "case.h"
#include <vector>
namespace {
using namespace ropegrad;
struct SharedLinear : Function<SharedLinear> {
  static constexpr const char* name = "shared_linear";
  static Tensor forward(FunctionCtx& ctx, const Tensor& x, const Tensor& w) {
    ctx.save_for_backward({x, w});
    const std::vector<double> xv = x.to_vector<double>(), wv = w.to_vector<double>();
    std::vector<double> y(2 * 3 * 2, 0.0);
    for (int b = 0; b < 2; ++b)
      for (int i = 0; i < 3; ++i)
        for (int o = 0; o < 2; ++o)
          for (int k = 0; k < 4; ++k) y[(b * 3 + i) * 2 + o] += xv[(b * 3 + i) * 4 + k] * wv[k * 2 + o];
    return tensor(y, {2, 3, 2}, DType::Float64);
  }
  static Grads backward(FunctionCtx& ctx, const Tensor& g) {
    const auto saved = ctx.saved_tensors();
    const std::vector<double> xv = saved[0].to_vector<double>(), wv = saved[1].to_vector<double>();
    const std::vector<double> gv = g.to_vector<double>();
    std::vector<double> dx(2 * 3 * 4, 0.0), dw(4 * 2, 0.0);
    for (int b = 0; b < 2; ++b) {
      for (int i = 0; i < 3; ++i)
        for (int k = 0; k < 4; ++k)
          for (int o = 0; o < 2; ++o) dx[(b * 3 + i) * 4 + k] += gv[(b * 3 + i) * 2 + o] * wv[k * 2 + o];
      for (int k = 0; k < 4; ++k)
        for (int o = 0; o < 2; ++o) {
          double s = 0.0;
          for (int i = 0; i < 3; ++i) s += xv[(b * 3 + i) * 4 + k] * gv[(b * 3 + i) * 2 + o];
          dw[k * 2 + o] = s;  // assigned, not accumulated: each batch overwrites the previous one
        }
    }
    return {tensor(dx, {2, 3, 4}, DType::Float64), tensor(dw, {4, 2}, DType::Float64)};
  }
};
mistakes::Case make() {
  Generator gen(6103);
  Tensor x = randn({2, 3, 4}, DType::Float64, &gen);
  Tensor w = randn({4, 2}, DType::Float64, &gen);
  x.requires_grad_();
  w.requires_grad_();
  std::vector<Tensor> inputs{x, w};
  return {"u6-batched-linear-weight-grad-last-batch-only",
          "Mistake: a weight shared by a batch, y_b = x_b W with x (2, 3, 4) and W (4, 2): the backward's loop over the "
          "batch assigns dW = x_b^T g_b at each step instead of accumulating it, so dW keeps only the last batch's "
          "x_1^T g_1 (correct: dW = sum_b x_b^T g_b); dx_b = g_b W^T is right",
          inputs, [](const std::vector<Tensor>& in) { return SharedLinear::apply(in[0], in[1]); }};
}
const mistakes::Register reg(make);
}  // namespace
