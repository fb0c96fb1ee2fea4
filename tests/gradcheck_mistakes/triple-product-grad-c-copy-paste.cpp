// Mistake: elementwise product a * b * c of three inputs: the gradient for c is g * a * c (copied from b's line with one letter changed) instead of g * a * b; da and db are right
#include "case.h"
#include <any>
#include <cmath>
#include <limits>
namespace {
using namespace ropegrad;
struct TripleProduct : Function<TripleProduct> {
  static constexpr const char* name = "triple_product";
  static Tensor forward(FunctionCtx& ctx, const Tensor& a, const Tensor& b, const Tensor& c) {
    ctx.save_for_backward({a, b, c});
    return a * b * c;
  }
  static Grads backward(FunctionCtx& ctx, const Tensor& g) {
    const auto saved = ctx.saved_tensors();
    const Tensor a = saved[0], b = saved[1], c = saved[2];
    return {g * b * c, g * a * c, g * a * c};
  }
};
mistakes::Case make() {
  Generator gen(121);
  Tensor a = randn({2, 3}, DType::Float64, &gen);
  Tensor b = randn({2, 3}, DType::Float64, &gen);
  Tensor c = randn({2, 3}, DType::Float64, &gen);
  a.requires_grad_();
  b.requires_grad_();
  c.requires_grad_();
  std::vector<Tensor> inputs{a, b, c};
  return {"triple-product-grad-c-copy-paste",
          "elementwise product a * b * c of three inputs: the gradient for c is g * a * c (copied from b's line with one letter changed) instead of g * a * b; da and db are right",
          inputs,
          [](const std::vector<Tensor>& in) { return TripleProduct::apply(in[0], in[1], in[2]); },
          std::vector<std::string>{"the elementwise derivative is wrong", "d output[i] / d input2[i]",
                                   "the analytical derivative is input0[i] x input2[i] at every element, the "
                                   "numerical one input0[i] x input1[i]"},
          std::vector<std::string>{"gradcheck failed for input 2"}};
}
const mistakes::Register reg(make);
}  // namespace
