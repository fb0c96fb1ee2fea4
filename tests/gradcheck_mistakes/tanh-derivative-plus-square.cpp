// Mistake: tanh's backward returns g * (1 + y^2), tan's derivative written in tanh's output y, instead of g * (1 - y^2)
#include "case.h"
namespace {
using namespace ropegrad;
struct MyTanh : Function<MyTanh> {
  static constexpr const char* name = "my_tanh";
  static Tensor forward(FunctionCtx& ctx, const Tensor& x) {
    Tensor y = tanh(x);
    ctx.save_for_backward({y});
    return y;
  }
  static Grads backward(FunctionCtx& ctx, const Tensor& g) {
    const Tensor y = ctx.saved_tensors()[0];
    return {g * (1.0 + y * y)};
  }
};
mistakes::Case make() {
  Generator gen(131);
  Tensor x = randn({3, 4}, DType::Float64, &gen);
  x.requires_grad_();
  std::vector<Tensor> inputs{x};
  return {"tanh-derivative-plus-square",
          "tanh's backward returns g * (1 + y^2), tan's derivative written in tanh's output y, instead of g * (1 - y^2)",
          inputs,
          [](const std::vector<Tensor>& in) { return MyTanh::apply(in[0]); },
          // A polynomial in the output, found by least squares and seen on every element.
          std::vector<std::string>{"the elementwise derivative is wrong",
                                   "the analytical derivative is 1 + output[i]^2 at every element, the numerical "
                                   "one 1 - output[i]^2"}};
}
const mistakes::Register reg(make);
}  // namespace
