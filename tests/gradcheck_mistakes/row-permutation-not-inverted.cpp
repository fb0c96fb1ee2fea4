// Mistake: row permutation y = x[perm] with perm = (2, 0, 3, 1): the backward applies the same permutation to the gradient again, g[perm], instead of its inverse (each row of g goes back to the row it came from: dx[perm[i]] = g[i], i.e. g[(1, 3, 0, 2)])
#include "case.h"
#include <vector>
namespace {
using namespace ropegrad;
struct PermuteRows : Function<PermuteRows> {
  static constexpr const char* name = "permute_rows";
  static Tensor forward(FunctionCtx&, const Tensor& x) {
    return index_select(x, 0, tensor_i64({2, 0, 3, 1}));
  }
  static Grads backward(FunctionCtx&, const Tensor& g) {
    return {index_select(g, 0, tensor_i64({2, 0, 3, 1}))};
  }
};
mistakes::Case make() {
  Generator gen(5);
  Tensor x = randn({4, 3}, DType::Float64, &gen);
  x.requires_grad_();
  std::vector<Tensor> inputs{x};
  return {"row-permutation-not-inverted",
          "row permutation y = x[perm] with perm = (2, 0, 3, 1): the backward applies the same permutation to the gradient again, g[perm], instead of its inverse (each row of g goes back to the row it came from: dx[perm[i]] = g[i], i.e. g[(1, 3, 0, 2)])",
          inputs,
          [](const std::vector<Tensor>& in) { return PermuteRows::apply(in[0]); }};
}
const mistakes::Register reg(make);
}  // namespace
