// Mistake: a function with two outputs per row, out (3, 2) = [mean, std] of each row of x (3, 4) (population std over n = 4): the backward's std term reads the mean's column of the incoming gradient, dx = g[:, 0] / n + g[:, 0] (x - mean) / (n std), instead of the std's own column, dx = g[:, 0] / n + g[:, 1] (x - mean) / (n std)
// Origin: written without sight of the checker (issue 27's fourth set; worked from)
#include "case.h"
#include <vector>
namespace {
using namespace ropegrad;
struct MeanStd : Function<MeanStd> {
  static constexpr const char* name = "mean_std_rows";
  static Tensor forward(FunctionCtx& ctx, const Tensor& x) {
    const Tensor mu = mean(x, {1}, true);  // (3, 1)
    const Tensor c = x - mu;
    const Tensor s = sqrt(mean(c * c, {1}, true));
    ctx.save_for_backward({c, s});
    return cat({mu, s}, 1);  // (3, 2)
  }
  static Grads backward(FunctionCtx& ctx, const Tensor& g) {
    const auto saved = ctx.saved_tensors();
    const Tensor c = saved[0], s = saved[1];
    const Tensor g_mean = narrow(g, 1, 0, 1);
    const Tensor g_std = narrow(g, 1, 1, 1);
    (void)g_std;
    const Tensor dx = g_mean / 4.0 + g_mean * c / (4.0 * s);
    return {dx};
  }
};
mistakes::Case make() {
  Generator gen(408);
  Tensor x = randn({3, 4}, DType::Float64, &gen);
  x.requires_grad_();
  std::vector<Tensor> inputs{x};
  return {"mean-std-pair-std-term-reads-mean-grad",
          "a function with two outputs per row, out (3, 2) = [mean, std] of each row of x (3, 4) (population std over n = 4): the backward's std term reads the mean's column of the incoming gradient, dx = g[:, 0] / n + g[:, 0] (x - mean) / (n std), instead of the std's own column, dx = g[:, 0] / n + g[:, 1] (x - mean) / (n std)",
          inputs,
          [](const std::vector<Tensor>& in) { return MeanStd::apply(in[0]); },
          std::vector<std::string>{},
          std::vector<std::string>{"observed: input 0's gradient is wrong at 24 of its 72 entries"}};
}
const mistakes::Register reg(make);
}  // namespace
