// Mistake: concatenation along dim 1 of a (2, 3) and b (2, 2) -> y (2, 5): the backward cuts b's slice of g at b's own width, db = g[:, 2:4] (narrow from column 2), instead of after a's 3 columns, db = g[:, 3:5]; da = g[:, 0:3] is right
// Origin: written without sight of the checker (issue 27's seventh set; the half worked from)
#include "case.h"
#include <vector>
namespace {
using namespace ropegrad;
struct Concat2 : Function<Concat2> {
  static constexpr const char* name = "concat2";
  static Tensor forward(FunctionCtx& ctx, const Tensor& a, const Tensor& b) {
    ctx.saved_data["wa"] = a.size(1);
    ctx.saved_data["wb"] = b.size(1);
    return cat({a, b}, 1);
  }
  static Grads backward(FunctionCtx& ctx, const Tensor& g) {
    const int64_t wa = std::any_cast<int64_t>(ctx.saved_data["wa"]);
    const int64_t wb = std::any_cast<int64_t>(ctx.saved_data["wb"]);
    Tensor da = narrow(g, 1, 0, wa);
    Tensor db = narrow(g, 1, wb, wb);
    return {da, db};
  }
};
mistakes::Case make() {
  Generator gen(7139);
  Tensor a = randn({2, 3}, DType::Float64, &gen);
  Tensor b = randn({2, 2}, DType::Float64, &gen);
  a.requires_grad_();
  b.requires_grad_();
  std::vector<Tensor> inputs{a, b};
  return {"u7-cat-second-slice-wrong-offset",
          "concatenation along dim 1 of a (2, 3) and b (2, 2) -> y (2, 5): the backward cuts b's slice of g at b's own width, db = g[:, 2:4] (narrow from column 2), instead of after a's 3 columns, db = g[:, 3:5]; da = g[:, 0:3] is right",
          inputs, [](const std::vector<Tensor>& in) { return Concat2::apply(in[0], in[1]); }};
}
const mistakes::Register reg(make);
}  // namespace
