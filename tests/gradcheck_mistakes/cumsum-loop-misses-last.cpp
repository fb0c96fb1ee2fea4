// Mistake: a cumulative sum along the last dim: the backward's loop over input positions stops one short (j < n - 1), so the last position gets no gradient (correct: dx_j = sum over i >= j of g_i for every j)
#include "case.h"
namespace {
using namespace ropegrad;
struct Cumsum : Function<Cumsum> {
  static constexpr const char* name = "cumsum_last";
  static Tensor forward(FunctionCtx&, const Tensor& x) {
    const int64_t n = x.size(-1);
    std::vector<Tensor> prefix;
    for (int64_t i = 0; i < n; ++i) prefix.push_back(sum(narrow(x, -1, 0, i + 1), {-1}));
    return stack(prefix, -1);
  }
  static Grads backward(FunctionCtx&, const Tensor& g) {
    const int64_t n = g.size(-1);
    std::vector<Tensor> dx;
    for (int64_t j = 0; j < n - 1; ++j) dx.push_back(sum(narrow(g, -1, j, n - j), {-1}));
    dx.push_back(zeros_like(select(g, -1, 0)));  // the last position: never reached by the loop
    return {stack(dx, -1)};
  }
};
mistakes::Case make() {
  Generator gen(213);
  Tensor x = randn({2, 4}, DType::Float64, &gen);
  x.requires_grad_();
  std::vector<Tensor> inputs{x};
  GradcheckFn f = [](const std::vector<Tensor>& in) { return Cumsum::apply(in[0]); };
  return {"cumsum-loop-misses-last",
          "a cumulative sum along the last dim: the backward's loop over input positions stops one short (j < n - 1), so the last position gets no gradient (correct: dx_j = sum over i >= j of g_i for every j)",
          inputs,
          f,
          std::vector<std::string>{"only some entries wrong", "[.., 3]", "the last of 4"}};
}
const mistakes::Register reg(make);
}  // namespace
