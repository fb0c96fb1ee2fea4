// Mistake: the max of each row: the backward routes g to the first entry of the row instead of to the argmax (no row has its max first here), so the gradient lands on the wrong element
#include "case.h"
#include <any>
namespace {
using namespace ropegrad;
struct RowMax : Function<RowMax> {
  static constexpr const char* name = "row_max";
  static Tensor forward(FunctionCtx& ctx, const Tensor& x) {
    ctx.saved_data["shape"] = x.shape();
    return amax(x, {1});
  }
  static Grads backward(FunctionCtx& ctx, const Tensor& g) {
    const Shape shape = std::any_cast<Shape>(ctx.saved_data["shape"]);
    std::vector<Tensor> columns{unsqueeze(g, 1)};  // the first entry of each row, where the argmax belongs
    columns.push_back(zeros({shape[0], shape[1] - 1}, DType::Float64));
    return {cat(columns, 1)};
  }
};
mistakes::Case make() {
  Tensor x = tensor(std::vector<double>{0.1, 0.9, -0.3, 0.4, -0.5, 0.2, 1.3, 0.7, 0.0, -0.6, 0.5, 0.8},
                    Shape{3, 4}, DType::Float64);
  x.requires_grad_();
  std::vector<Tensor> inputs{x};
  GradcheckFn f = [](const std::vector<Tensor>& in) { return RowMax::apply(in[0]); };
  return {"row-max-grad-to-first-entry",
          "the max of each row: the backward routes g to the first entry of the row instead of to the argmax (no row has its max first here), so the gradient lands on the wrong element",
          inputs,
          f,
          std::vector<std::string>{"the gradient on the wrong entries", "the right total"}};
}
const mistakes::Register reg(make);
}  // namespace
