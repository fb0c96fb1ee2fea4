// Mistake: x^2 over a batch of rows: the backward's loop over the batch starts at row 1, so row 0 gets no gradient (dx[0, :] = 0)
#include "case.h"
namespace {
using namespace ropegrad;
struct SquareRows : Function<SquareRows> {
  static constexpr const char* name = "square_rows";
  static Tensor forward(FunctionCtx& ctx, const Tensor& x) {
    ctx.save_for_backward({x});
    return x * x;
  }
  static Grads backward(FunctionCtx& ctx, const Tensor& g) {
    const Tensor x = ctx.saved_tensors()[0];
    std::vector<Tensor> rows{zeros_like(select(x, 0, 0))};  // row 0: skipped by the loop
    for (int64_t b = 1; b < x.size(0); ++b) rows.push_back(2.0 * select(g, 0, b) * select(x, 0, b));
    return {stack(rows, 0)};
  }
};
mistakes::Case make() {
  Generator gen(215);
  Tensor x = randn({3, 4}, DType::Float64, &gen);
  x.requires_grad_();
  std::vector<Tensor> inputs{x};
  GradcheckFn f = [](const std::vector<Tensor>& in) { return SquareRows::apply(in[0]); };
  return {"batch-loop-skips-first-row",
          "x^2 over a batch of rows: the backward's loop over the batch starts at row 1, so row 0 gets no gradient (dx[0, :] = 0)",
          inputs,
          f,
          std::vector<std::string>{"only some entries wrong", "along dim 0", "the first of 3"}};
}
const mistakes::Register reg(make);
}  // namespace
