// Mistake: class-weighted mean cross-entropy, L = sum_i w_{t_i} CE_i / sum_i w_{t_i} with logits z (3, 4), targets (2, 0, 3) and class weights w = (0.5, 1, 2, 1.5): the backward normalises by the number of rows, dz_i = g w_{t_i} (softmax(z_i) - onehot(t_i)) / 3, where the forward divided by the total weight of the targets, sum_i w_{t_i} = 4 (correct: dz_i = g w_{t_i} (softmax(z_i) - onehot(t_i)) / 4; the rule is 4/3 of the truth)
// Origin: written without sight of the checker (issue 27's sixth set; held out, judged once)
#include "case.h"
#include <cmath>
#include <vector>
namespace {
using namespace ropegrad;
const int kTarget[3] = {2, 0, 3};
const double kWeight[4] = {0.5, 1.0, 2.0, 1.5};
std::vector<double> row_softmax(const std::vector<double>& zv, int r) {
  double m = zv[r * 4];
  for (int j = 1; j < 4; ++j) m = zv[r * 4 + j] > m ? zv[r * 4 + j] : m;
  std::vector<double> p(4);
  double s = 0.0;
  for (int j = 0; j < 4; ++j) s += (p[j] = std::exp(zv[r * 4 + j] - m));
  for (double& e : p) e /= s;
  return p;
}
struct WeightedCE : Function<WeightedCE> {
  static constexpr const char* name = "weighted_cross_entropy";
  static Tensor forward(FunctionCtx& ctx, const Tensor& z) {
    ctx.save_for_backward({z});
    const std::vector<double> zv = z.to_vector<double>();
    double loss = 0.0, total = 0.0;
    for (int r = 0; r < 3; ++r) {
      const double w = kWeight[kTarget[r]];
      loss -= w * std::log(row_softmax(zv, r)[kTarget[r]]);
      total += w;
    }
    return scalar_tensor(loss / total, DType::Float64);
  }
  static Grads backward(FunctionCtx& ctx, const Tensor& g) {
    const std::vector<double> zv = ctx.saved_tensors()[0].to_vector<double>();
    const double gg = g.item<double>();
    std::vector<double> dz(3 * 4);
    for (int r = 0; r < 3; ++r) {
      const std::vector<double> p = row_softmax(zv, r);
      const double w = kWeight[kTarget[r]];
      for (int j = 0; j < 4; ++j)
        dz[r * 4 + j] = gg * w * (p[j] - (j == kTarget[r] ? 1.0 : 0.0)) / 3.0;  // / sum of the weights, 4
    }
    return {tensor(dz, {3, 4}, DType::Float64)};
  }
};
mistakes::Case make() {
  Generator gen(6120);
  Tensor z = randn({3, 4}, DType::Float64, &gen);
  z.requires_grad_();
  std::vector<Tensor> inputs{z};
  return {"u6-weighted-ce-divides-by-count",
          "Mistake: class-weighted mean cross-entropy, L = sum_i w_{t_i} CE_i / sum_i w_{t_i} with logits z (3, 4), "
          "targets (2, 0, 3) and class weights w = (0.5, 1, 2, 1.5): the backward normalises by the number of rows, "
          "dz_i = g w_{t_i} (softmax(z_i) - onehot(t_i)) / 3, where the forward divided by the total weight of the "
          "targets, sum_i w_{t_i} = 4 (correct: dz_i = g w_{t_i} (softmax(z_i) - onehot(t_i)) / 4; the rule is 4/3 of "
          "the truth)",
          inputs, [](const std::vector<Tensor>& in) { return WeightedCE::apply(in[0]); }};
}
const mistakes::Register reg(make);
}  // namespace
