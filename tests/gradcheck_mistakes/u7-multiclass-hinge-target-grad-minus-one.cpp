// Mistake: multi-class SVM (Weston-Watkins) hinge loss per row, L_i = sum_{j != t_i} max(0, z_ij - z_{i t_i} + 1) with z (3, 4) and fixed targets t = (2, 0, 3) (not checked): the backward gives the target class -g_i once, as in a binary hinge, dz_{i t_i} = -g_i, instead of -g_i times the number of active margins of the row, dz_{i t_i} = -g_i sum_{j != t_i} [z_ij - z_{i t_i} + 1 > 0] (2, 3 and 1 here); the other classes' g_i [margin > 0] are right, and so is row 2, with one active margin
// Origin: written without sight of the checker (issue 27's seventh set; the held-out half: judged once)
#include "case.h"
#include <vector>
namespace {
using namespace ropegrad;
const std::vector<int64_t> kTargets{2, 0, 3};
struct MulticlassHinge : Function<MulticlassHinge> {
  static constexpr const char* name = "multiclass_hinge";
  static Tensor forward(FunctionCtx& ctx, const Tensor& z) {
    ctx.save_for_backward({z});
    const int64_t rows = z.size(0), k = z.size(1);
    std::vector<double> zv = z.to_vector<double>();
    std::vector<double> loss(rows, 0.0);
    for (int64_t i = 0; i < rows; ++i) {
      const double zt = zv[i * k + kTargets[i]];
      for (int64_t j = 0; j < k; ++j) {
        if (j == kTargets[i]) continue;
        const double m = zv[i * k + j] - zt + 1.0;
        if (m > 0) loss[i] += m;
      }
    }
    return tensor(loss, {rows}, DType::Float64);
  }
  static Grads backward(FunctionCtx& ctx, const Tensor& g) {
    const Tensor z = ctx.saved_tensors()[0];
    const int64_t rows = z.size(0), k = z.size(1);
    std::vector<double> zv = z.to_vector<double>();
    std::vector<double> gv = g.to_vector<double>();
    std::vector<double> dz(zv.size(), 0.0);
    for (int64_t i = 0; i < rows; ++i) {
      const double zt = zv[i * k + kTargets[i]];
      bool any = false;
      for (int64_t j = 0; j < k; ++j) {
        if (j == kTargets[i]) continue;
        if (zv[i * k + j] - zt + 1.0 > 0) {
          dz[i * k + j] = gv[i];
          any = true;
        }
      }
      if (any) dz[i * k + kTargets[i]] = -gv[i];
    }
    return {tensor(dz, z.shape(), DType::Float64)};
  }
};
mistakes::Case make() {
  Tensor z = tensor(std::vector<double>{0.5, -0.8, 0.9, 0.7,    //
                                        1.2, 0.6, 0.9, 0.5,     //
                                        -0.6, 1.1, -0.5, 0.8},
                    {3, 4}, DType::Float64);
  z.requires_grad_();
  std::vector<Tensor> inputs{z};
  return {"u7-multiclass-hinge-target-grad-minus-one",
          "multi-class SVM (Weston-Watkins) hinge loss per row, L_i = sum_{j != t_i} max(0, z_ij - z_{i t_i} + 1) with z (3, 4) and fixed targets t = (2, 0, 3) (not checked): the backward gives the target class -g_i once, as in a binary hinge, dz_{i t_i} = -g_i, instead of -g_i times the number of active margins of the row, dz_{i t_i} = -g_i sum_{j != t_i} [z_ij - z_{i t_i} + 1 > 0] (2, 3 and 1 here); the other classes' g_i [margin > 0] are right, and so is row 2, with one active margin",
          inputs, [](const std::vector<Tensor>& in) { return MulticlassHinge::apply(in[0]); }};
}
const mistakes::Register reg(make);
}  // namespace
