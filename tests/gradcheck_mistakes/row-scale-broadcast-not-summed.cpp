// Mistake: y = x * c with x (3, 4) and a per-row scale c (3, 1) broadcast over the columns: the backward returns dc = g * x, shape (3, 4), without summing the broadcast back (correct: dc = sum over the columns of g * x, keepdim, shape (3, 1), i.e. sum_to(g * x, c.shape())); dx = g * c is right
// Origin: written without sight of the checker (issue 27's third set; held out, judged once on gradcheck as it was then)
#include "case.h"
#include <vector>
namespace {
using namespace ropegrad;
struct RowScale : Function<RowScale> {
  static constexpr const char* name = "row_scale";
  static Tensor forward(FunctionCtx& ctx, const Tensor& x, const Tensor& c) {
    ctx.save_for_backward({x, c});
    return x * c;
  }
  static Grads backward(FunctionCtx& ctx, const Tensor& g) {
    const auto saved = ctx.saved_tensors();
    const Tensor x = saved[0], c = saved[1];
    const Tensor dx = g * c;
    const Tensor dc = g * x;
    return {dx, dc};
  }
};
mistakes::Case make() {
  Generator gen(306);
  Tensor x = randn({3, 4}, DType::Float64, &gen);
  Tensor c = tensor(std::vector<double>{0.7, -1.3, 0.4}, {3, 1}, DType::Float64);
  x.requires_grad_();
  c.requires_grad_();
  std::vector<Tensor> inputs{x, c};
  return {"row-scale-broadcast-not-summed",
          "y = x * c with x (3, 4) and a per-row scale c (3, 1) broadcast over the columns: the backward returns dc = g * x, shape (3, 4), without summing the broadcast back (correct: dc = sum over the columns of g * x, keepdim, shape (3, 1), i.e. sum_to(g * x, c.shape())); dx = g * c is right",
          inputs,
          [](const std::vector<Tensor>& in) { return RowScale::apply(in[0], in[1]); },
          std::nullopt,
          std::vector<std::string>{"returned a gradient of shape [3, 4] for input 1 of shape [3, 1]"}};
}
const mistakes::Register reg(make);
}  // namespace
