// Mistake: tiling 3 times along the last dim, x (2, 4) -> y (2, 12), y[:, j] = x[:, j mod 4] (the whole row repeated): the backward sums the gradient as for repeat_interleave, dx[:, i] = g[:, 3 i] + g[:, 3 i + 1] + g[:, 3 i + 2] (a reshape of g to (2, 4, 3) summed over the last dim), instead of over the copies of x[:, i], dx[:, i] = g[:, i] + g[:, i + 4] + g[:, i + 8] (a reshape to (2, 3, 4) summed over dim 1)
// Origin: written without sight of the checker (issue 27's seventh set; the half worked from)
#include "case.h"
#include <vector>
namespace {
using namespace ropegrad;
constexpr int64_t kReps = 3;
struct Tile : Function<Tile> {
  static constexpr const char* name = "tile";
  static Tensor forward(FunctionCtx&, const Tensor& x) { return cat({x, x, x}, 1); }
  static Grads backward(FunctionCtx&, const Tensor& g) {
    const int64_t rows = g.size(0), n = g.size(1) / kReps;
    Tensor dx = sum(reshape(g, {rows, n, kReps}), {2});
    return {dx};
  }
};
mistakes::Case make() {
  Generator gen(7127);
  Tensor x = randn({2, 4}, DType::Float64, &gen);
  x.requires_grad_();
  std::vector<Tensor> inputs{x};
  return {"u7-tile-backward-as-repeat-interleave",
          "tiling 3 times along the last dim, x (2, 4) -> y (2, 12), y[:, j] = x[:, j mod 4] (the whole row repeated): the backward sums the gradient as for repeat_interleave, dx[:, i] = g[:, 3 i] + g[:, 3 i + 1] + g[:, 3 i + 2] (a reshape of g to (2, 4, 3) summed over the last dim), instead of over the copies of x[:, i], dx[:, i] = g[:, i] + g[:, i + 4] + g[:, i + 8] (a reshape to (2, 3, 4) summed over dim 1)",
          inputs, [](const std::vector<Tensor>& in) { return Tile::apply(in[0]); }};
}
const mistakes::Register reg(make);
}  // namespace
