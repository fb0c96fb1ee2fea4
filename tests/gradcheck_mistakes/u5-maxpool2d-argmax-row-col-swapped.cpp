// Mistake: 2-d max pooling with 2x2 windows and stride 2, x (4, 6) -> y (2, 3): the backward decodes the argmax's flat index a = 2 r + c inside the window with row and column swapped (r = a % 2, c = a / 2), so g[i, j] goes to x[2i + c, 2j + r], the max's mirror across the window's diagonal, instead of to x[2i + r, 2j + c]; right only for window (0, 2), whose max sits on the diagonal
// Origin: written without sight of the checker (issue 27's fifth set; worked from)
#include "case.h"
#include <vector>
namespace {
using namespace ropegrad;
struct MaxPool2x2 : Function<MaxPool2x2> {
  static constexpr const char* name = "max_pool_2x2";
  static Tensor forward(FunctionCtx& ctx, const Tensor& x) {
    const int64_t h = x.size(0), w = x.size(1), oh = h / 2, ow = w / 2;
    const std::vector<double> xv = x.to_vector<double>();
    std::vector<double> yv(static_cast<size_t>(oh * ow));
    std::vector<int64_t> arg(static_cast<size_t>(oh * ow));
    for (int64_t i = 0; i < oh; ++i) {
      for (int64_t j = 0; j < ow; ++j) {
        int64_t best = 0;
        for (int64_t a = 1; a < 4; ++a) {
          if (xv[(2 * i + a / 2) * w + 2 * j + a % 2] > xv[(2 * i + best / 2) * w + 2 * j + best % 2])
            best = a;
        }
        arg[i * ow + j] = best;  // flat index in the window: a = 2 r + c
        yv[i * ow + j] = xv[(2 * i + best / 2) * w + 2 * j + best % 2];
      }
    }
    ctx.saved_data["argmax"] = arg;
    ctx.saved_data["h"] = h;
    ctx.saved_data["w"] = w;
    return tensor(yv, {oh, ow}, DType::Float64);
  }
  static Grads backward(FunctionCtx& ctx, const Tensor& g) {
    const auto arg = std::any_cast<std::vector<int64_t>>(ctx.saved_data.at("argmax"));
    const auto h = std::any_cast<int64_t>(ctx.saved_data.at("h"));
    const auto w = std::any_cast<int64_t>(ctx.saved_data.at("w"));
    const int64_t oh = h / 2, ow = w / 2;
    const std::vector<double> gv = g.to_vector<double>();
    std::vector<double> dx(static_cast<size_t>(h * w), 0.0);
    for (int64_t i = 0; i < oh; ++i) {
      for (int64_t j = 0; j < ow; ++j) {
        const int64_t a = arg[i * ow + j];
        const int64_t r = a % 2, c = a / 2;
        dx[(2 * i + r) * w + 2 * j + c] += gv[i * ow + j];
      }
    }
    return {tensor(dx, {h, w}, DType::Float64)};
  }
};
mistakes::Case make() {
  Generator gen(5120);
  Tensor x = tensor({0.1, 0.9, -0.3, 0.2, 1.4, -0.8,
                     -0.5, 0.4, 1.1, -0.6, 0.3, 0.7,
                     0.6, -1.2, 0.5, 0.8, -0.4, 1.3,
                     1.5, -0.2, -0.9, 0.0, 0.25, -1.0},
                    {4, 6}, DType::Float64);
  x.requires_grad_();
  std::vector<Tensor> inputs{x};
  return {"u5-maxpool2d-argmax-row-col-swapped", "2-d max pooling with 2x2 windows and stride 2, x (4, 6) -> y (2, 3): the backward decodes the argmax's flat index a = 2 r + c inside the window with row and column swapped (r = a % 2, c = a / 2), so g[i, j] goes to x[2i + c, 2j + r], the max's mirror across the window's diagonal, instead of to x[2i + r, 2j + c]; right only for window (0, 2), whose max sits on the diagonal", inputs,
          [](const std::vector<Tensor>& in) { return MaxPool2x2::apply(in[0]); }};
}
const mistakes::Register reg(make);
}  // namespace
