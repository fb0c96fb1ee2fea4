// Mistake: y = x * w per batch row (w [3] fixed): the backward sums g over the batch before scaling, dx = sum(g, 0) * w for every row, where each row's own g * w belongs
#include "case.h"
namespace {
using namespace ropegrad;
struct RowScale : Function<RowScale> {
  static constexpr const char* name = "row_scale";
  static Tensor forward(FunctionCtx& ctx, const Tensor& x, const Tensor& w) {
    ctx.save_for_backward({w});
    return x * w;
  }
  static Grads backward(FunctionCtx& ctx, const Tensor& g) {
    const Tensor w = ctx.saved_tensors()[0];
    return {expand(sum(g, {0}, true) * w, g.shape()), Tensor()};
  }
};
mistakes::Case make() {
  Generator gen(222);
  Tensor x = randn({2, 3}, DType::Float64, &gen);
  Tensor w = randn({3}, DType::Float64, &gen);
  x.requires_grad_();
  std::vector<Tensor> inputs{x, w};
  GradcheckFn f = [](const std::vector<Tensor>& in) { return RowScale::apply(in[0], in[1]); };
  return {"row-scale-grad-summed-over-batch",
          "y = x * w per batch row (w [3] fixed): the backward sums g over the batch before scaling, dx = sum(g, 0) * w for every row, where each row's own g * w belongs",
          inputs,
          f,
          std::vector<std::string>{"one gradient for every output", "sum(g, 0)"}};
}
const mistakes::Register reg(make);
}  // namespace
