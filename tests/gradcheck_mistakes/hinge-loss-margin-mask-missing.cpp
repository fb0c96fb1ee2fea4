// Mistake: hinge loss L = max(0, 1 - y z) elementwise with scores z (2, 4) and fixed labels y = +-1 (not checked): the backward returns dz = -g y everywhere and forgets the mask of the active margins (correct: dz = -g y where 1 - y z > 0, and 0 where the margin is met, here z[0, 1], z[0, 2] and z[1, 2])
// Origin: written without sight of the checker (issue 27's third set; worked from)
#include "case.h"
#include <vector>
namespace {
using namespace ropegrad;
struct Hinge : Function<Hinge> {
  static constexpr const char* name = "hinge";
  static Tensor forward(FunctionCtx& ctx, const Tensor& z, const Tensor& y) {
    ctx.save_for_backward({z, y});
    return relu(1.0 - y * z);
  }
  static Grads backward(FunctionCtx& ctx, const Tensor& g) {
    const auto saved = ctx.saved_tensors();
    const Tensor z = saved[0], y = saved[1];
    const Tensor dz = -(g * y);
    return {dz, Tensor()};
  }
};
mistakes::Case make() {
  // Margins 1 - y z: 0.7, -0.7, -1.2, 1.4 / 2.6, 0.5, -1.5, 1.9 (none near the kink at 0).
  Tensor z = tensor(std::vector<double>{0.3, -1.7, 2.2, -0.4, 1.6, 0.5, -2.5, 0.9}, {2, 4},
                    DType::Float64);
  Tensor y = tensor(std::vector<double>{1.0, -1.0, 1.0, 1.0, -1.0, 1.0, -1.0, -1.0}, {2, 4},
                    DType::Float64);
  z.requires_grad_();
  std::vector<Tensor> inputs{z, y};
  return {"hinge-loss-margin-mask-missing",
          "hinge loss L = max(0, 1 - y z) elementwise with scores z (2, 4) and fixed labels y = +-1 (not checked): the backward returns dz = -g y everywhere and forgets the mask of the active margins (correct: dz = -g y where 1 - y z > 0, and 0 where the margin is met, here z[0, 1], z[0, 2] and z[1, 2])",
          inputs,
          [](const std::vector<Tensor>& in) { return Hinge::apply(in[0], in[1]); },
          std::vector<std::string>{"only some entries wrong", "no output depends on"}};
}
const mistakes::Register reg(make);
}  // namespace
