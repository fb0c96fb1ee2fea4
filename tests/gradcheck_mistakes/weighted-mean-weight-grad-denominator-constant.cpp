// Mistake: weighted mean of each row, y = sum_j w_j x_j / sum_j w_j with x and positive w (2, 4): the weight gradient treats the denominator W = sum_j w_j as a constant, dw = g x / W, missing the term - g y / W from W's dependence on w (correct: dw = g (x - y) / W); dx = g w / W is right
// Origin: written without sight of the checker (issue 27's third set; held out, judged once on gradcheck as it was then)
#include "case.h"
#include <vector>
namespace {
using namespace ropegrad;
struct WeightedMean : Function<WeightedMean> {
  static constexpr const char* name = "weighted_mean";
  static Tensor forward(FunctionCtx& ctx, const Tensor& x, const Tensor& w) {
    ctx.save_for_backward({x, w});
    return sum(w * x, {1}) / sum(w, {1});
  }
  static Grads backward(FunctionCtx& ctx, const Tensor& g) {
    const auto saved = ctx.saved_tensors();
    const Tensor x = saved[0], w = saved[1];
    const Tensor total = sum(w, {1}, true);  // (2, 1)
    const Tensor gc = unsqueeze(g, 1);       // (2, 1)
    const Tensor dx = gc * w / total;
    const Tensor dw = gc * x / total;
    return {dx, dw};
  }
};
mistakes::Case make() {
  Generator gen(318);
  Tensor x = randn({2, 4}, DType::Float64, &gen);
  Tensor w = rand({2, 4}, DType::Float64, &gen) + 0.5;
  x.requires_grad_();
  w.requires_grad_();
  std::vector<Tensor> inputs{x, w};
  return {"weighted-mean-weight-grad-denominator-constant",
          "weighted mean of each row, y = sum_j w_j x_j / sum_j w_j with x and positive w (2, 4): the weight gradient treats the denominator W = sum_j w_j as a constant, dw = g x / W, missing the term - g y / W from W's dependence on w (correct: dw = g (x - y) / W); dx = g w / W is right",
          inputs,
          [](const std::vector<Tensor>& in) { return WeightedMean::apply(in[0], in[1]); },
          std::vector<std::string>{"off by an added term", "one constant c per output element"}};
}
const mistakes::Register reg(make);
}  // namespace
