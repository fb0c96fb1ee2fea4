// Mistake: x + b with b broadcast over the rows: the bias gradient takes only the first row of g, db = g[0, :], instead of summing all rows; dx is right
#include "case.h"
namespace {
using namespace ropegrad;
struct BiasAddFirstRow : Function<BiasAddFirstRow> {
  static constexpr const char* name = "bias_add_first_row";
  static Tensor forward(FunctionCtx&, const Tensor& x, const Tensor& b) { return x + b; }
  static Grads backward(FunctionCtx&, const Tensor& g) { return {g, select(g, 0, 0)}; }
};
mistakes::Case make() {
  Generator gen(216);
  Tensor x = randn({4, 3}, DType::Float64, &gen);
  Tensor b = randn({3}, DType::Float64, &gen);
  x.requires_grad_();
  b.requires_grad_();
  std::vector<Tensor> inputs{x, b};
  GradcheckFn f = [](const std::vector<Tensor>& in) { return BiasAddFirstRow::apply(in[0], in[1]); };
  return {"bias-grad-first-row-only",
          "x + b with b broadcast over the rows: the bias gradient takes only the first row of g, db = g[0, :], instead of summing all rows; dx is right",
          inputs,
          f,
          std::vector<std::string>{"only some entries wrong", "broadcast over", "but the first"}};
}
const mistakes::Register reg(make);
}  // namespace
