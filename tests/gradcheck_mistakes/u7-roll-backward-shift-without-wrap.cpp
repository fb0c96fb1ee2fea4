// Mistake: circular shift (roll) by 2 along the last dim, x (2, 5) -> y (2, 5), y[:, j] = x[:, (j - 2) mod 5]: the backward shifts g back by 2 without wrapping around, dx[:, i] = g[:, i + 2] for i < 3 and 0 for i = 3, 4, instead of dx[:, i] = g[:, (i + 2) mod 5] (the last two columns must get g[:, 0] and g[:, 1]); the first three columns are right
// Origin: written without sight of the checker (issue 27's seventh set; the held-out half: judged once)
#include "case.h"
#include <vector>
namespace {
using namespace ropegrad;
constexpr int64_t kShift = 2;
struct Roll : Function<Roll> {
  static constexpr const char* name = "roll";
  static Tensor forward(FunctionCtx&, const Tensor& x) {
    const int64_t n = x.size(1);
    return cat({narrow(x, 1, n - kShift, kShift), narrow(x, 1, 0, n - kShift)}, 1);
  }
  static Grads backward(FunctionCtx&, const Tensor& g) {
    const int64_t rows = g.size(0), n = g.size(1);
    Tensor dx = cat({narrow(g, 1, kShift, n - kShift), zeros({rows, kShift}, DType::Float64)}, 1);
    return {dx};
  }
};
mistakes::Case make() {
  Generator gen(7113);
  Tensor x = randn({2, 5}, DType::Float64, &gen);
  x.requires_grad_();
  std::vector<Tensor> inputs{x};
  return {"u7-roll-backward-shift-without-wrap",
          "circular shift (roll) by 2 along the last dim, x (2, 5) -> y (2, 5), y[:, j] = x[:, (j - 2) mod 5]: the backward shifts g back by 2 without wrapping around, dx[:, i] = g[:, i + 2] for i < 3 and 0 for i = 3, 4, instead of dx[:, i] = g[:, (i + 2) mod 5] (the last two columns must get g[:, 0] and g[:, 1]); the first three columns are right",
          inputs, [](const std::vector<Tensor>& in) { return Roll::apply(in[0]); }};
}
const mistakes::Register reg(make);
}  // namespace
