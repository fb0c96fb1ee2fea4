// Mistake: group norm without affine, x (2, 6) split into 2 groups of 3 features per row, xhat = (x - mean_grp) / sqrt(var_grp + 1e-5) with each group's own statistics: the backward's two means run over the whole row of 6 (layer norm's rule reused), dx = rstd_grp (g - mean_row(g) - xhat mean_row(g xhat)), instead of over the group of 3 the statistics came from, dx = rstd_grp (g - mean_grp(g) - xhat mean_grp(g xhat))
// Origin: written without sight of the checker (issue 27's fifth set; worked from)
#include "case.h"
#include <vector>
namespace {
using namespace ropegrad;
struct GroupNorm : Function<GroupNorm> {
  static constexpr const char* name = "group_norm";
  static constexpr int64_t kGroups = 2;
  static Tensor forward(FunctionCtx& ctx, const Tensor& x) {
    const int64_t n = x.size(0), c = x.size(1);
    Tensor xg = reshape(x, {n, kGroups, c / kGroups});
    Tensor centred = xg - mean(xg, {2}, true);
    Tensor rstd = rsqrt(mean(centred * centred, {2}, true) + 1e-5);  // (n, groups, 1)
    Tensor xhat = reshape(centred * rstd, {n, c});
    ctx.save_for_backward({xhat, rstd});
    return xhat;
  }
  static Grads backward(FunctionCtx& ctx, const Tensor& g) {
    const std::vector<Tensor> saved = ctx.saved_tensors();
    const Tensor& xhat = saved[0];
    const Tensor& rstd = saved[1];
    const int64_t n = xhat.size(0), c = xhat.size(1);
    Tensor mean_g = mean(g, {1}, true);
    Tensor mean_gx = mean(g * xhat, {1}, true);
    Tensor inner = reshape(g - mean_g - xhat * mean_gx, {n, kGroups, c / kGroups});
    return {reshape(inner * rstd, {n, c})};
  }
};
mistakes::Case make() {
  Generator gen(5101);
  Tensor x = randn({2, 6}, DType::Float64, &gen);
  x.requires_grad_();
  std::vector<Tensor> inputs{x};
  return {"u5-groupnorm-backward-means-over-whole-row",
          "group norm without affine, x (2, 6) split into 2 groups of 3 features per row, xhat = (x - mean_grp) / sqrt(var_grp + 1e-5) with each group's own statistics: the backward's two means run over the whole row of 6 (layer norm's rule reused), dx = rstd_grp (g - mean_row(g) - xhat mean_row(g xhat)), instead of over the group of 3 the statistics came from, dx = rstd_grp (g - mean_grp(g) - xhat mean_grp(g xhat))",
          inputs, [](const std::vector<Tensor>& in) { return GroupNorm::apply(in[0]); }};
}
const mistakes::Register reg(make);
}  // namespace
