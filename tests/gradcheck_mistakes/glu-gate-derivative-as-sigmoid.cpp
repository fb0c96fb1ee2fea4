// Mistake: GLU over the last dim, x (2, 6) split into a = x[:, :3] and b = x[:, 3:], y = a * sigmoid(b): the gate half's gradient uses sigmoid itself as sigmoid's derivative, db = g * a * s, instead of db = g * a * s * (1 - s) (s = sigmoid(b)); the value half da = g * s is right
// Origin: written without sight of the checker (issue 27's third set; worked from)
#include "case.h"
#include <vector>
namespace {
using namespace ropegrad;
struct Glu : Function<Glu> {
  static constexpr const char* name = "glu_custom";
  static Tensor forward(FunctionCtx& ctx, const Tensor& x) {
    ctx.save_for_backward({x});
    const int64_t h = x.size(1) / 2;
    return narrow(x, 1, 0, h) * sigmoid(narrow(x, 1, h, h));
  }
  static Grads backward(FunctionCtx& ctx, const Tensor& g) {
    const Tensor x = ctx.saved_tensors()[0];
    const int64_t h = x.size(1) / 2;
    const Tensor a = narrow(x, 1, 0, h);
    const Tensor s = sigmoid(narrow(x, 1, h, h));
    const Tensor da = g * s;
    const Tensor db = g * a * s;
    return {cat({da, db}, 1)};
  }
};
mistakes::Case make() {
  Generator gen(314);
  Tensor x = randn({2, 6}, DType::Float64, &gen);
  x.requires_grad_();
  std::vector<Tensor> inputs{x};
  return {"glu-gate-derivative-as-sigmoid",
          "GLU over the last dim, x (2, 6) split into a = x[:, :3] and b = x[:, 3:], y = a * sigmoid(b): the gate half's gradient uses sigmoid itself as sigmoid's derivative, db = g * a * s, instead of db = g * a * s * (1 - s) (s = sigmoid(b)); the value half da = g * s is right",
          inputs,
          [](const std::vector<Tensor>& in) { return Glu::apply(in[0]); },
          std::vector<std::string>{"wrong entries of a simple form", "the analytical one is output[i0, i1]"}};
}
const mistakes::Register reg(make);
}  // namespace
