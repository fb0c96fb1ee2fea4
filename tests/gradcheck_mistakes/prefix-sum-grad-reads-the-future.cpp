// Mistake: a prefix sum along the last dim, y_i = sum over j <= i of x_j: the backward gives every input the sum of all the row's g, dx_j = sum over every i of g_i, where only the outputs from j on (i >= j) depend on x_j; the entries with j > i, the future, are wrong
#include "case.h"
namespace {
using namespace ropegrad;
struct PrefixSum : Function<PrefixSum> {
  static constexpr const char* name = "prefix_sum";
  static Tensor forward(FunctionCtx&, const Tensor& x) {
    std::vector<Tensor> prefix;
    for (int64_t i = 0; i < x.size(-1); ++i) prefix.push_back(sum(narrow(x, -1, 0, i + 1), {-1}));
    return stack(prefix, -1);
  }
  static Grads backward(FunctionCtx&, const Tensor& g) { return {expand(sum(g, {-1}, true), g.shape())}; }
};
mistakes::Case make() {
  Generator gen(224);
  Tensor x = randn({2, 4}, DType::Float64, &gen);
  x.requires_grad_();
  std::vector<Tensor> inputs{x};
  GradcheckFn f = [](const std::vector<Tensor>& in) { return PrefixSum::apply(in[0]); };
  return {"prefix-sum-grad-reads-the-future",
          "a prefix sum along the last dim, y_i = sum over j <= i of x_j: the backward gives every input the sum of all the row's g, dx_j = sum over every i of g_i, where only the outputs from j on (i >= j) depend on x_j; the entries with j > i, the future, are wrong",
          inputs,
          f,
          std::vector<std::string>{"only some entries wrong", "j1 > i1", "the future"}};
}
const mistakes::Register reg(make);
}  // namespace
