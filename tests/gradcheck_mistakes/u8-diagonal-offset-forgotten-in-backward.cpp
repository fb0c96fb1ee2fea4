// Mistake: the first superdiagonal of X (3, 4), y_i = X[i, i + 1] -> y (3): the backward writes g_i on the main diagonal, dX[i, i] = g_i, the offset forgotten, instead of where the entry was read, dX[i, i + 1] = g_i (every other entry 0)
// Origin: written without sight of the checker (issue 27's eighth set; the held-out half: judged once)
#include "case.h"
#include <vector>
namespace {
using namespace ropegrad;
struct SuperDiag : Function<SuperDiag> {
  static constexpr const char* name = "superdiag";
  static Tensor forward(FunctionCtx& ctx, const Tensor& x) {
    ctx.saved_data["rows"] = x.size(0);
    ctx.saved_data["cols"] = x.size(1);
    std::vector<double> y;
    for (int64_t i = 0; i < x.size(0); ++i) y.push_back(x.at<double>({i, i + 1}));
    return tensor(y, {x.size(0)}, DType::Float64);
  }
  static Grads backward(FunctionCtx& ctx, const Tensor& g) {
    const int64_t rows = std::any_cast<int64_t>(ctx.saved_data["rows"]);
    const int64_t cols = std::any_cast<int64_t>(ctx.saved_data["cols"]);
    const std::vector<double> gv = g.to_vector<double>();
    std::vector<double> dx(rows * cols, 0.0);
    for (int64_t i = 0; i < rows; ++i) dx[i * cols + i] = gv[i];
    return {tensor(dx, {rows, cols}, DType::Float64)};
  }
};
mistakes::Case make() {
  Generator gen(8113);
  Tensor x = randn({3, 4}, DType::Float64, &gen);
  x.requires_grad_();
  std::vector<Tensor> inputs{x};
  return {"u8-diagonal-offset-forgotten-in-backward",
          "the first superdiagonal of X (3, 4), y_i = X[i, i + 1] -> y (3): the backward writes g_i on the main diagonal, dX[i, i] = g_i, the offset forgotten, instead of where the entry was read, dX[i, i + 1] = g_i (every other entry 0)",
          inputs, [](const std::vector<Tensor>& in) { return SuperDiag::apply(in[0]); }};
}
const mistakes::Register reg(make);
}  // namespace
