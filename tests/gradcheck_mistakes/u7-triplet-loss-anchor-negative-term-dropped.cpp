// Mistake: triplet margin loss with squared distances per row, L_i = max(0, ||a_i - p_i||^2 - ||a_i - n_i||^2 + 1) with anchor a, positive p and negative n (3, 4) (rows 0 and 1 active, row 2 not): the anchor's gradient keeps only the term of the positive distance, da = 2 g (a - p), and forgets that the anchor is also in the negative distance, - 2 g (a - n) (correct: da = 2 g ((a - p) - (a - n)) = 2 g (n - p) on active rows); dp = -2 g (a - p) and dn = 2 g (a - n) are right, and every gradient is 0 on the inactive row
// Origin: written without sight of the checker (issue 27's seventh set; the half worked from)
#include "case.h"
#include <vector>
namespace {
using namespace ropegrad;
struct TripletLoss : Function<TripletLoss> {
  static constexpr const char* name = "triplet_loss";
  static Tensor forward(FunctionCtx& ctx, const Tensor& a, const Tensor& p, const Tensor& n) {
    ctx.save_for_backward({a, p, n});
    Tensor dap = sum((a - p) * (a - p), {1});
    Tensor dan = sum((a - n) * (a - n), {1});
    return relu(dap - dan + 1.0);
  }
  static Grads backward(FunctionCtx& ctx, const Tensor& g) {
    const std::vector<Tensor> s = ctx.saved_tensors();
    const Tensor& a = s[0];
    const Tensor& p = s[1];
    const Tensor& n = s[2];
    Tensor dap = sum((a - p) * (a - p), {1});
    Tensor dan = sum((a - n) * (a - n), {1});
    Tensor active = where(gt(dap - dan + 1.0, 0.0), ones_like(dap), zeros_like(dap));
    Tensor ga = unsqueeze(g * active, 1);  // (3, 1)
    Tensor da = 2.0 * ga * (a - p);
    Tensor dp = -2.0 * ga * (a - p);
    Tensor dn = 2.0 * ga * (a - n);
    return {da, dp, dn};
  }
};
mistakes::Case make() {
  Tensor a = tensor(std::vector<double>{0.2, -0.5, 0.8, 0.1, -0.7, 0.3, 0.5, -0.2, 0.4, 0.6, -0.3, 0.9},
                    {3, 4}, DType::Float64);
  Tensor p = tensor(std::vector<double>{0.6, -0.1, 0.3, 0.4, -0.1, 0.9, 0.2, 0.3, 0.5, 0.4, -0.1, 0.8},
                    {3, 4}, DType::Float64);
  Tensor n = tensor(std::vector<double>{0.5, -0.2, 0.4, 0.6, -1.2, 0.1, 1.1, -0.6, -0.8, 1.5, 0.7, -0.4},
                    {3, 4}, DType::Float64);
  a.requires_grad_();
  p.requires_grad_();
  n.requires_grad_();
  std::vector<Tensor> inputs{a, p, n};
  return {"u7-triplet-loss-anchor-negative-term-dropped",
          "triplet margin loss with squared distances per row, L_i = max(0, ||a_i - p_i||^2 - ||a_i - n_i||^2 + 1) with anchor a, positive p and negative n (3, 4) (rows 0 and 1 active, row 2 not): the anchor's gradient keeps only the term of the positive distance, da = 2 g (a - p), and forgets that the anchor is also in the negative distance, - 2 g (a - n) (correct: da = 2 g ((a - p) - (a - n)) = 2 g (n - p) on active rows); dp = -2 g (a - p) and dn = 2 g (a - n) are right, and every gradient is 0 on the inactive row",
          inputs, [](const std::vector<Tensor>& in) { return TripletLoss::apply(in[0], in[1], in[2]); }};
}
const mistakes::Register reg(make);
}  // namespace
