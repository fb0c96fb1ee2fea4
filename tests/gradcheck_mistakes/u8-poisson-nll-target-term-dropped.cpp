// Mistake: Poisson negative log-likelihood on log-rates, L = exp(z) - t z elementwise with z (2, 3) and fixed counts t = (1, 2, 0, 3, 1, 4) (not checked): the backward drops the target's term, dz = g exp(z), where dz = g (exp(z) - t) belongs (only the entry with t = 0, z[0, 2], is right)
// Origin: written without sight of the checker (issue 27's eighth set; the half worked from)
#include "case.h"
#include <vector>
namespace {
using namespace ropegrad;
struct PoissonNll : Function<PoissonNll> {
  static constexpr const char* name = "poisson_nll";
  static Tensor forward(FunctionCtx& ctx, const Tensor& z, const Tensor& t) {
    ctx.save_for_backward({z, t});
    return exp(z) - t * z;
  }
  static Grads backward(FunctionCtx& ctx, const Tensor& g) {
    const Tensor z = ctx.saved_tensors()[0];
    return {g * exp(z), Tensor()};
  }
};
mistakes::Case make() {
  Generator gen(8109);
  Tensor z = randn({2, 3}, DType::Float64, &gen);
  z.requires_grad_();
  Tensor t = tensor({1.0, 2.0, 0.0, 3.0, 1.0, 4.0}, {2, 3}, DType::Float64);
  std::vector<Tensor> inputs{z, t};
  return {"u8-poisson-nll-target-term-dropped",
          "Poisson negative log-likelihood on log-rates, L = exp(z) - t z elementwise with z (2, 3) and fixed counts t = (1, 2, 0, 3, 1, 4) (not checked): the backward drops the target's term, dz = g exp(z), where dz = g (exp(z) - t) belongs (only the entry with t = 0, z[0, 2], is right)",
          inputs, [](const std::vector<Tensor>& in) { return PoissonNll::apply(in[0], in[1]); }};
}
const mistakes::Register reg(make);
}  // namespace
