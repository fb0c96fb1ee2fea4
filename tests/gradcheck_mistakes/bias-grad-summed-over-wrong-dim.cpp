// Mistake: x + b with x [3, 3] and b [3] broadcast over the rows: the bias gradient sums g over dim 1, sum(g, 1), where it must sum over the rows, sum(g, 0); the square shape hides it
#include "case.h"
namespace {
using namespace ropegrad;
struct BiasAddWrongDim : Function<BiasAddWrongDim> {
  static constexpr const char* name = "bias_add_wrong_dim";
  static Tensor forward(FunctionCtx&, const Tensor& x, const Tensor& b) { return x + b; }
  static Grads backward(FunctionCtx&, const Tensor& g) { return {g, sum(g, {1})}; }
};
mistakes::Case make() {
  Generator gen(221);
  Tensor x = randn({3, 3}, DType::Float64, &gen);
  Tensor b = randn({3}, DType::Float64, &gen);
  x.requires_grad_();
  b.requires_grad_();
  std::vector<Tensor> inputs{x, b};
  GradcheckFn f = [](const std::vector<Tensor>& in) { return BiasAddWrongDim::apply(in[0], in[1]); };
  return {"bias-grad-summed-over-wrong-dim",
          "x + b with x [3, 3] and b [3] broadcast over the rows: the bias gradient sums g over dim 1, sum(g, 1), where it must sum over the rows, sum(g, 0); the square shape hides it",
          inputs,
          f,
          std::vector<std::string>{"dims swapped", "the output's dims 0 and 1"}};
}
const mistakes::Register reg(make);
}  // namespace
