// Mistake: a prefix sum along the last dim, y_i = sum over j <= i of x_j: the backward is a prefix sum of g too, dx_j = sum over i <= j of g_i, where the suffix sum, over i >= j, belongs (the Jacobian J applied where J^T belongs)
#include "case.h"
namespace {
using namespace ropegrad;
struct PrefixSumForward : Function<PrefixSumForward> {
  static constexpr const char* name = "prefix_sum_twice";
  static Tensor prefix(const Tensor& t) {
    std::vector<Tensor> out;
    for (int64_t i = 0; i < t.size(-1); ++i) out.push_back(sum(narrow(t, -1, 0, i + 1), {-1}));
    return stack(out, -1);
  }
  static Tensor forward(FunctionCtx&, const Tensor& x) { return prefix(x); }
  static Grads backward(FunctionCtx&, const Tensor& g) { return {prefix(g)}; }
};
mistakes::Case make() {
  Generator gen(230);
  Tensor x = randn({2, 4}, DType::Float64, &gen);
  x.requires_grad_();
  std::vector<Tensor> inputs{x};
  GradcheckFn f = [](const std::vector<Tensor>& in) { return PrefixSumForward::apply(in[0]); };
  return {"prefix-sum-backward-as-prefix-sum",
          "a prefix sum along the last dim, y_i = sum over j <= i of x_j: the backward is a prefix sum of g too, dx_j = sum over i <= j of g_i, where the suffix sum, over i >= j, belongs (the Jacobian J applied where J^T belongs)",
          inputs,
          f,
          std::vector<std::string>{"the Jacobian transposed", "J^T"}};
}
const mistakes::Register reg(make);
}  // namespace
