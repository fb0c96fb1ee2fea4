// Mistake: determinant of 2x2 matrices, each row (a, b, c, d) of x (3, 4) read as [[a, b], [c, d]], y = a d - b c: the backward returns g times the adjugate [[d, -b], [-c, a]] where its transpose, the cofactor matrix [[d, -c], [-b, a]], belongs: db = -g b and dc = -g c instead of db = -g c and dc = -g b; da = g d and dd = g a are right
// Origin: written without sight of the checker (issue 27's fourth set; held out, judged once on gradcheck as it was then)
#include "case.h"
#include <vector>
namespace {
using namespace ropegrad;
struct Det2 : Function<Det2> {
  static constexpr const char* name = "det2x2_rows";
  static Tensor forward(FunctionCtx& ctx, const Tensor& x) {
    ctx.save_for_backward({x});
    const Tensor a = select(x, 1, 0), b = select(x, 1, 1);
    const Tensor c = select(x, 1, 2), d = select(x, 1, 3);
    return a * d - b * c;  // (3)
  }
  static Grads backward(FunctionCtx& ctx, const Tensor& g) {
    const Tensor x = ctx.saved_tensors()[0];
    const Tensor a = select(x, 1, 0), b = select(x, 1, 1);
    const Tensor c = select(x, 1, 2), d = select(x, 1, 3);
    // g * adj(X), flattened row-major: [[d, -b], [-c, a]]
    const Tensor dx = stack({g * d, -(g * b), -(g * c), g * a}, 1);
    return {dx};
  }
};
mistakes::Case make() {
  Generator gen(410);
  Tensor x = randn({3, 4}, DType::Float64, &gen);
  x.requires_grad_();
  std::vector<Tensor> inputs{x};
  return {"det2x2-adjugate-not-transposed",
          "determinant of 2x2 matrices, each row (a, b, c, d) of x (3, 4) read as [[a, b], [c, d]], y = a d - b c: the backward returns g times the adjugate [[d, -b], [-c, a]] where its transpose, the cofactor matrix [[d, -c], [-b, a]], belongs: db = -g b and dc = -g c instead of db = -g c and dc = -g b; da = g d and dd = g a are right",
          inputs,
          [](const std::vector<Tensor>& in) { return Det2::apply(in[0]); },
          std::vector<std::string>{"the right values at the wrong inputs"}};
}
const mistakes::Register reg(make);
}  // namespace
