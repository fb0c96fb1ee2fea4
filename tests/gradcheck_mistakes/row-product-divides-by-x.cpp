// Mistake: product over the last dim: the backward computes the product of the other entries as y / x_j, which is 0/0 = NaN for the row that contains an exact zero (correct: the product of the other entries, finite there)
#include "case.h"
#include <any>
#include <cmath>
#include <limits>
namespace {
using namespace ropegrad;
struct RowProduct : Function<RowProduct> {
  static constexpr const char* name = "row_product";
  static Tensor forward(FunctionCtx& ctx, const Tensor& x) {
    Tensor y = select(x, -1, 0);
    for (int64_t j = 1; j < x.size(-1); ++j) y = y * select(x, -1, j);
    ctx.save_for_backward({x, y});
    return y;
  }
  static Grads backward(FunctionCtx& ctx, const Tensor& g) {
    const auto saved = ctx.saved_tensors();
    const Tensor x = saved[0], y = saved[1];
    return {unsqueeze(g * y, -1) / x};
  }
};
mistakes::Case make() {
  Tensor x = tensor(std::vector<double>{0.7, -1.3, 0.45, 1.9,
                                        -0.6, 0.0, 1.15, -0.85,
                                        1.25, 0.35, -1.05, 0.8},
                    Shape{3, 4}, DType::Float64);
  x.requires_grad_();
  std::vector<Tensor> inputs{x};
  return {"row-product-divides-by-x",
          "product over the last dim: the backward computes the product of the other entries as y / x_j, which is 0/0 = NaN for the row that contains an exact zero (correct: the product of the other entries, finite there)",
          inputs,
          [](const std::vector<Tensor>& in) { return RowProduct::apply(in[0]); },
          std::vector<std::string>{"a non-finite entry", "nan", "input0[1, 1] = 0"}};
}
const mistakes::Register reg(make);
}  // namespace
