// Mistake: centring each row, y = x - mean(x) over the last dim of x (3, 4): the backward passes g through unchanged, dx = g, as if the subtracted mean did not depend on x (correct: dx = g - mean(g) per row, the same centring applied to g)
// Origin: written without sight of the checker (issue 27's eighth set; the held-out half: judged once)
#include "case.h"
#include <vector>
namespace {
using namespace ropegrad;
struct CenterRows : Function<CenterRows> {
  static constexpr const char* name = "center_rows";
  static Tensor forward(FunctionCtx&, const Tensor& x) { return x - mean(x, {1}, true); }
  static Grads backward(FunctionCtx&, const Tensor& g) { return {clone(g)}; }
};
mistakes::Case make() {
  Generator gen(8104);
  Tensor x = randn({3, 4}, DType::Float64, &gen);
  x.requires_grad_();
  std::vector<Tensor> inputs{x};
  return {"u8-row-centering-grad-not-centred",
          "centring each row, y = x - mean(x) over the last dim of x (3, 4): the backward passes g through unchanged, dx = g, as if the subtracted mean did not depend on x (correct: dx = g - mean(g) per row, the same centring applied to g)",
          inputs, [](const std::vector<Tensor>& in) { return CenterRows::apply(in[0]); }};
}
const mistakes::Register reg(make);
}  // namespace
