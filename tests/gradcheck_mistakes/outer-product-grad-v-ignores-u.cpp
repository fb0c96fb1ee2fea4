// Mistake: the outer product u v^T: the gradient for v sums G over its rows without weighting them by u (dv = sum_i G_ij instead of sum_i u_i G_ij); du is right
#include "case.h"
#include <any>
#include <cmath>
#include <limits>
namespace {
using namespace ropegrad;
struct Outer : Function<Outer> {
  static constexpr const char* name = "outer";
  static Tensor forward(FunctionCtx& ctx, const Tensor& u, const Tensor& v) {
    ctx.save_for_backward({u, v});
    return unsqueeze(u, 1) * unsqueeze(v, 0);
  }
  static Grads backward(FunctionCtx& ctx, const Tensor& g) {
    const auto saved = ctx.saved_tensors();
    const Tensor u = saved[0], v = saved[1];
    Tensor du = sum(g * unsqueeze(v, 0), {1});
    Tensor dv = sum(g, {0});
    return {du, dv};
  }
};
mistakes::Case make() {
  Generator gen(110);
  Tensor u = randn({3}, DType::Float64, &gen);
  Tensor v = randn({5}, DType::Float64, &gen);
  u.requires_grad_();
  v.requires_grad_();
  std::vector<Tensor> inputs{u, v};
  return {"outer-product-grad-v-ignores-u",
          "the outer product u v^T: the gradient for v sums G over its rows without weighting them by u (dv = sum_i G_ij instead of sum_i u_i G_ij); du is right",
          inputs,
          [](const std::vector<Tensor>& in) { return Outer::apply(in[0], in[1]); },
          std::vector<std::string>{"off by a varying factor", "input0[i0]"}};
}
const mistakes::Register reg(make);
}  // namespace
