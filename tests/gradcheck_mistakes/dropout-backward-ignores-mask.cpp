// Mistake: dropout with a fixed 0/1 mask (a float64 input) and p = 0.5, y = x * m / (1 - p): the backward returns g / (1 - p) everywhere and forgets to multiply by the mask, so the dropped elements get a gradient
#include "case.h"
namespace {
using namespace ropegrad;
struct Dropout : Function<Dropout> {
  static constexpr const char* name = "dropout";
  static Tensor forward(FunctionCtx&, const Tensor& x, const Tensor& keep) { return x * keep / 0.5; }
  static Grads backward(FunctionCtx&, const Tensor& g) { return {g / 0.5, Tensor()}; }
};
mistakes::Case make() {
  Generator gen(229);
  Tensor x = randn({2, 5}, DType::Float64, &gen);
  Tensor keep = tensor(std::vector<double>{1, 0, 1, 1, 0, 0, 1, 1, 0, 1}, Shape{2, 5}, DType::Float64);
  x.requires_grad_();
  std::vector<Tensor> inputs{x, keep};
  GradcheckFn f = [](const std::vector<Tensor>& in) { return Dropout::apply(in[0], in[1]); };
  return {"dropout-backward-ignores-mask",
          "dropout with a fixed 0/1 mask (a float64 input) and p = 0.5, y = x * m / (1 - p): the backward returns g / (1 - p) everywhere and forgets to multiply by the mask, so the dropped elements get a gradient",
          inputs,
          f,
          std::vector<std::string>{"only some entries wrong", "where input 1", "is 0"}};
}
const mistakes::Register reg(make);
}  // namespace
