// Mistake: InfoNCE / contrastive loss, S = a b^T / 0.5 with a (3, 4) and b (3, 4), L = mean over rows i of -log softmax(S_i)_i (the matching pair on the diagonal, softmax over each row): the backward recomputes the probabilities with the softmax over dim 0, the columns of S, P = softmax(S, 0), where the forward normalised over dim 1 (correct: dS = g (softmax(S, 1) - I) / 3); da = dS b / 0.5 and db = dS^T a / 0.5 inherit the error (the square 3x3 S hides the wrong axis)
// Origin: written without sight of the checker (issue 27's fifth set; held out, judged once)
#include "case.h"
#include <vector>
namespace {
using namespace ropegrad;
struct InfoNce : Function<InfoNce> {
  static constexpr const char* name = "info_nce";
  static constexpr double kTau = 0.5;
  static Tensor forward(FunctionCtx& ctx, const Tensor& a, const Tensor& b) {
    const int64_t n = a.size(0);
    Tensor s = matmul(a, transpose(b, 0, 1)) / kTau;
    Tensor eye_n = eye(n, n, DType::Float64);
    ctx.save_for_backward({a, b, s});
    return -sum(log_softmax(s, 1) * eye_n) / n;
  }
  static Grads backward(FunctionCtx& ctx, const Tensor& g) {
    const std::vector<Tensor> saved = ctx.saved_tensors();
    const Tensor& a = saved[0];
    const Tensor& b = saved[1];
    const Tensor& s = saved[2];
    const int64_t n = a.size(0);
    Tensor p = softmax(s, 0);
    Tensor ds = (p - eye(n, n, DType::Float64)) * g / n;
    Tensor da = matmul(ds, b) / kTau;
    Tensor db = matmul(transpose(ds, 0, 1), a) / kTau;
    return {da, db};
  }
};
mistakes::Case make() {
  Generator gen(5111);
  Tensor a = randn({3, 4}, DType::Float64, &gen);
  Tensor b = randn({3, 4}, DType::Float64, &gen);
  a.requires_grad_();
  b.requires_grad_();
  std::vector<Tensor> inputs{a, b};
  return {"u5-infonce-backward-softmax-over-columns", "InfoNCE / contrastive loss, S = a b^T / 0.5 with a (3, 4) and b (3, 4), L = mean over rows i of -log softmax(S_i)_i (the matching pair on the diagonal, softmax over each row): the backward recomputes the probabilities with the softmax over dim 0, the columns of S, P = softmax(S, 0), where the forward normalised over dim 1 (correct: dS = g (softmax(S, 1) - I) / 3); da = dS b / 0.5 and db = dS^T a / 0.5 inherit the error (the square 3x3 S hides the wrong axis)", inputs,
          [](const std::vector<Tensor>& in) { return InfoNce::apply(in[0], in[1]); }};
}
const mistakes::Register reg(make);
}  // namespace
