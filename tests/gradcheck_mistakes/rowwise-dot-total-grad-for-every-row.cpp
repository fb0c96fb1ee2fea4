// Mistake: row-wise dot product out_i = sum_j a_ij b_ij: the backward scales every row by the total sum(g) instead of that row's own g_i (da = sum(g) * b instead of g_i * b_i, same for db)
#include "case.h"
#include <any>
#include <cmath>
#include <limits>
namespace {
using namespace ropegrad;
struct RowDot : Function<RowDot> {
  static constexpr const char* name = "row_dot";
  static Tensor forward(FunctionCtx& ctx, const Tensor& a, const Tensor& b) {
    ctx.save_for_backward({a, b});
    return sum(a * b, {1});
  }
  static Grads backward(FunctionCtx& ctx, const Tensor& g) {
    const auto saved = ctx.saved_tensors();
    const Tensor a = saved[0], b = saved[1];
    const Tensor gs = sum(g);
    return {gs * b, gs * a};
  }
};
mistakes::Case make() {
  Generator gen(111);
  Tensor a = randn({3, 4}, DType::Float64, &gen);
  Tensor b = randn({3, 4}, DType::Float64, &gen);
  a.requires_grad_();
  b.requires_grad_();
  std::vector<Tensor> inputs{a, b};
  return {"rowwise-dot-total-grad-for-every-row",
          "row-wise dot product out_i = sum_j a_ij b_ij: the backward scales every row by the total sum(g) instead of that row's own g_i (da = sum(g) * b instead of g_i * b_i, same for db)",
          inputs,
          [](const std::vector<Tensor>& in) { return RowDot::apply(in[0], in[1]); },
          std::vector<std::string>{"one gradient for every output", "sum"}};
}
const mistakes::Register reg(make);
}  // namespace
