// Mistake: embedding lookup out[i] = W[ids[i]] with ids = (1, 3, 1, 4) and W (5, 3): the backward assigns dW[ids[i]] = g[i] instead of accumulating dW[ids[i]] += g[i], so row 1, looked up twice, keeps only g[2] and loses g[0] (correct: dW[1] = g[0] + g[2]); rows 3 and 4 (g[1], g[3]) and the unused rows 0 and 2 (zero) are right
// Origin: written without sight of the checker (issue 27's third set; held out, judged once on gradcheck as it was then)
#include "case.h"
#include <cstdint>
#include <vector>
namespace {
using namespace ropegrad;
const std::vector<int64_t> kIds{1, 3, 1, 4};
struct Lookup : Function<Lookup> {
  static constexpr const char* name = "lookup";
  static Tensor forward(FunctionCtx& ctx, const Tensor& w) {
    ctx.save_for_backward({w});
    return embedding(tensor_i64(kIds, {4}), w);
  }
  static Grads backward(FunctionCtx& ctx, const Tensor& g) {
    const Tensor w = ctx.saved_tensors()[0];
    const int64_t vocab = w.size(0);
    const int64_t dim = w.size(1);
    const std::vector<double> gv = g.to_vector<double>();
    std::vector<double> dw(static_cast<size_t>(vocab * dim), 0.0);
    for (size_t i = 0; i < kIds.size(); ++i) {
      for (int64_t d = 0; d < dim; ++d) {
        dw[kIds[i] * dim + d] = gv[static_cast<int64_t>(i) * dim + d];
      }
    }
    return {tensor(dw, {vocab, dim}, DType::Float64)};
  }
};
mistakes::Case make() {
  Generator gen(303);
  Tensor w = randn({5, 3}, DType::Float64, &gen);
  w.requires_grad_();
  std::vector<Tensor> inputs{w};
  return {"embedding-repeated-id-overwritten",
          "embedding lookup out[i] = W[ids[i]] with ids = (1, 3, 1, 4) and W (5, 3): the backward assigns dW[ids[i]] = g[i] instead of accumulating dW[ids[i]] += g[i], so row 1, looked up twice, keeps only g[2] and loses g[0] (correct: dW[1] = g[0] + g[2]); rows 3 and 4 (g[1], g[3]) and the unused rows 0 and 2 (zero) are right",
          inputs,
          [](const std::vector<Tensor>& in) { return Lookup::apply(in[0]); },
          std::vector<std::string>{"only some entries wrong", "wrong only at output index [0, ..]"}};
}
const mistakes::Register reg(make);
}  // namespace
