// Mistake: cumulative sum along the last dim: the backward's loop starts at k = j + 1, so dx_j = sum_{k > j} g_k (an exclusive reverse cumsum) instead of sum_{k >= j} g_k (off by one: each position's own g_j is missing)
#include "case.h"
#include <any>
#include <cmath>
#include <limits>
namespace {
using namespace ropegrad;
struct CumSum : Function<CumSum> {
  static constexpr const char* name = "cumsum_last";
  static Tensor forward(FunctionCtx& ctx, const Tensor& x) {
    const int64_t n = x.size(-1);
    ctx.saved_data["n"] = n;
    std::vector<Tensor> pieces;
    for (int64_t j = 0; j < n; ++j) pieces.push_back(sum(narrow(x, -1, 0, j + 1), {-1}, true));
    return cat(pieces, -1);
  }
  static Grads backward(FunctionCtx& ctx, const Tensor& g) {
    const int64_t n = std::any_cast<int64_t>(ctx.saved_data["n"]);
    std::vector<Tensor> pieces;
    for (int64_t j = 0; j < n; ++j) {
      Tensor acc = zeros_like(select(g, -1, 0));
      for (int64_t k = j + 1; k < n; ++k) acc = acc + select(g, -1, k);
      pieces.push_back(unsqueeze(acc, -1));
    }
    return {cat(pieces, -1)};
  }
};
mistakes::Case make() {
  Generator gen(112);
  Tensor x = randn({3, 5}, DType::Float64, &gen);
  x.requires_grad_();
  std::vector<Tensor> inputs{x};
  return {"cumsum-backward-exclusive",
          "cumulative sum along the last dim: the backward's loop starts at k = j + 1, so dx_j = sum_{k > j} g_k (an exclusive reverse cumsum) instead of sum_{k >= j} g_k (off by one: each position's own g_j is missing)",
          inputs,
          [](const std::vector<Tensor>& in) { return CumSum::apply(in[0]); },
          std::vector<std::string>{"off by an added term", "the diagonal", "c = -1", "each element's own g[i] is missing"}};
}
const mistakes::Register reg(make);
}  // namespace
