// Mistake: x + b with b broadcast over the rows: the bias gradient averages g over the rows (mean over dim 0) instead of summing them, so it is 1/rows too small; dx is right
#include "case.h"
#include <any>
#include <cmath>
#include <limits>
namespace {
using namespace ropegrad;
struct BiasAdd : Function<BiasAdd> {
  static constexpr const char* name = "bias_add";
  static Tensor forward(FunctionCtx&, const Tensor& x, const Tensor& b) {
    return x + b;
  }
  static Grads backward(FunctionCtx&, const Tensor& g) {
    return {g, mean(g, {0})};
  }
};
mistakes::Case make() {
  Generator gen(116);
  Tensor x = randn({4, 3}, DType::Float64, &gen);
  Tensor b = randn({3}, DType::Float64, &gen);
  x.requires_grad_();
  b.requires_grad_();
  std::vector<Tensor> inputs{x, b};
  return {"bias-add-grad-mean-not-sum",
          "x + b with b broadcast over the rows: the bias gradient averages g over the rows (mean over dim 0) instead of summing them, so it is 1/rows too small; dx is right",
          inputs,
          [](const std::vector<Tensor>& in) { return BiasAdd::apply(in[0], in[1]); },
          std::vector<std::string>{"off by a constant factor", "1/4", "broadcast"}};
}
const mistakes::Register reg(make);
}  // namespace
