// Mistake: the mean of each row over the entries its mask keeps, y_i = sum_j m_ij x_ij / count_i: the backward divides by the row's full length 4 instead of the row's count of kept entries (2, 3 and 2 here), so row i's gradient is count_i / 4 of the truth
#include "case.h"
namespace {
using namespace ropegrad;
struct MaskedMean : Function<MaskedMean> {
  static constexpr const char* name = "masked_mean";
  static Tensor forward(FunctionCtx& ctx, const Tensor& x, const Tensor& mask) {
    const Tensor kept = to(mask, DType::Float64);
    ctx.save_for_backward({kept});
    return sum(x * kept, {1}) / sum(kept, {1});
  }
  static Grads backward(FunctionCtx& ctx, const Tensor& g) {
    const Tensor kept = ctx.saved_tensors()[0];
    const double length = static_cast<double>(kept.size(1));
    return {unsqueeze(g, 1) * kept / length, Tensor()};
  }
};
mistakes::Case make() {
  Generator gen(220);
  Tensor x = randn({3, 4}, DType::Float64, &gen);
  Tensor mask = tensor(std::vector<double>{0, 1, 0, 1, 1, 0, 1, 1, 1, 0, 0, 1}, Shape{3, 4}, DType::Bool);
  x.requires_grad_();
  std::vector<Tensor> inputs{x, mask};
  GradcheckFn f = [](const std::vector<Tensor>& in) { return MaskedMean::apply(in[0], in[1]); };
  return {"masked-mean-divides-by-row-length",
          "the mean of each row over the entries its mask keeps, y_i = sum_j m_ij x_ij / count_i: the backward divides by the row's full length 4 instead of the row's count of kept entries (2, 3 and 2 here), so row i's gradient is count_i / 4 of the truth",
          inputs,
          f,
          std::vector<std::string>{"off by a varying factor", "one constant c per output element", "c = 0.5, 0.75, 0.5"}};
}
const mistakes::Register reg(make);
}  // namespace
