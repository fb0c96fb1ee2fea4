// Mistake: embedding lookup with padding_idx 0, out[i] = W[ids[i]] for ids[i] != 0 and 0 for the padding id, ids = (2, 0, 3, 0, 1), W (4, 3): the backward scatters every row of g, padding included, dW[ids[i]] += g[i], so the padding row W[0], which the output never read, gets g[1] + g[3] (correct: dW[0] = 0); rows 1, 2 and 3 are right
// Origin: written without sight of the checker (issue 27's sixth set; worked from)
#include "case.h"
#include <vector>
namespace {
using namespace ropegrad;
const int kIds[5] = {2, 0, 3, 0, 1};
struct PaddedEmbedding : Function<PaddedEmbedding> {
  static constexpr const char* name = "padded_embedding";
  static Tensor forward(FunctionCtx&, const Tensor& w) {
    const std::vector<double> wv = w.to_vector<double>();
    std::vector<double> out(5 * 3, 0.0);
    for (int i = 0; i < 5; ++i)
      if (kIds[i] != 0)
        for (int c = 0; c < 3; ++c) out[i * 3 + c] = wv[kIds[i] * 3 + c];
    return tensor(out, {5, 3}, DType::Float64);
  }
  static Grads backward(FunctionCtx&, const Tensor& g) {
    const std::vector<double> gv = g.to_vector<double>();
    std::vector<double> dw(4 * 3, 0.0);
    for (int i = 0; i < 5; ++i)  // the padding id (0) must be skipped
      for (int c = 0; c < 3; ++c) dw[kIds[i] * 3 + c] += gv[i * 3 + c];
    return {tensor(dw, {4, 3}, DType::Float64)};
  }
};
mistakes::Case make() {
  Generator gen(6121);
  Tensor w = randn({4, 3}, DType::Float64, &gen);
  w.requires_grad_();
  std::vector<Tensor> inputs{w};
  return {"u6-embedding-padding-idx-gets-grad",
          "Mistake: embedding lookup with padding_idx 0, out[i] = W[ids[i]] for ids[i] != 0 and 0 for the padding id, "
          "ids = (2, 0, 3, 0, 1), W (4, 3): the backward scatters every row of g, padding included, dW[ids[i]] += "
          "g[i], so the padding row W[0], which the output never read, gets g[1] + g[3] (correct: dW[0] = 0); rows 1, "
          "2 and 3 are right",
          inputs, [](const std::vector<Tensor>& in) { return PaddedEmbedding::apply(in[0]); }};
}
const mistakes::Register reg(make);
}  // namespace
