// Mistake: nearest-neighbour upsampling by 2 along the last dim, x (2, 3) -> y (2, 6), y[:, j] = x[:, j / 2] (integer division): the backward keeps only the first copy of each input, dx[:, i] = g[:, 2i] (a strided slice of g), instead of summing both copies, dx[:, i] = g[:, 2i] + g[:, 2i + 1]
// Origin: written without sight of the checker (issue 27's fourth set; worked from)
#include "case.h"
#include <vector>
namespace {
using namespace ropegrad;
struct Upsample2 : Function<Upsample2> {
  static constexpr const char* name = "upsample_nearest2";
  static Tensor forward(FunctionCtx& ctx, const Tensor& x) {
    (void)ctx;
    return reshape(stack({x, x}, 2), {x.size(0), 2 * x.size(1)});
  }
  static Grads backward(FunctionCtx& ctx, const Tensor& g) {
    (void)ctx;
    const Tensor dx = contiguous(slice(g, 1, 0, g.size(1), 2));
    return {dx};
  }
};
mistakes::Case make() {
  Generator gen(414);
  Tensor x = randn({2, 3}, DType::Float64, &gen);
  x.requires_grad_();
  std::vector<Tensor> inputs{x};
  return {"nearest-upsample-grad-first-copy-only",
          "nearest-neighbour upsampling by 2 along the last dim, x (2, 3) -> y (2, 6), y[:, j] = x[:, j / 2] (integer division): the backward keeps only the first copy of each input, dx[:, i] = g[:, 2i] (a strided slice of g), instead of summing both copies, dx[:, i] = g[:, 2i] + g[:, 2i + 1]",
          inputs,
          [](const std::vector<Tensor>& in) { return Upsample2::apply(in[0]); },
          std::vector<std::string>{"one reader's share kept", "(the first)"}};
}
const mistakes::Register reg(make);
}  // namespace
