// Mistake: segment sum, y[s] = sum of the rows x[i] with seg[i] = s, x (5, 3), seg = (0, 2, 0, 1, 2) -> y (3, 3): the backward divides each row's gradient by the size of its segment, dx[i] = g[seg[i]] / count(seg[i]), the rule of a segment mean, instead of dx[i] = g[seg[i]] (each row was added once); row 3, alone in segment 1, is right, the rows of segments 0 and 2 get half the truth
// Origin: written without sight of the checker (issue 27's sixth set; worked from)
#include "case.h"
#include <vector>
namespace {
using namespace ropegrad;
const int kSeg[5] = {0, 2, 0, 1, 2};
struct SegmentSum : Function<SegmentSum> {
  static constexpr const char* name = "segment_sum";
  static Tensor forward(FunctionCtx&, const Tensor& x) {
    const std::vector<double> xv = x.to_vector<double>();
    std::vector<double> y(3 * 3, 0.0);
    for (int i = 0; i < 5; ++i)
      for (int c = 0; c < 3; ++c) y[kSeg[i] * 3 + c] += xv[i * 3 + c];
    return tensor(y, {3, 3}, DType::Float64);
  }
  static Grads backward(FunctionCtx&, const Tensor& g) {
    const std::vector<double> gv = g.to_vector<double>();
    int count[3] = {0, 0, 0};
    for (int i = 0; i < 5; ++i) ++count[kSeg[i]];
    std::vector<double> dx(5 * 3);
    for (int i = 0; i < 5; ++i)
      for (int c = 0; c < 3; ++c) dx[i * 3 + c] = gv[kSeg[i] * 3 + c] / count[kSeg[i]];  // a mean's rule
    return {tensor(dx, {5, 3}, DType::Float64)};
  }
};
mistakes::Case make() {
  Generator gen(6106);
  Tensor x = randn({5, 3}, DType::Float64, &gen);
  x.requires_grad_();
  std::vector<Tensor> inputs{x};
  return {"u6-segment-sum-grad-divided-by-count",
          "Mistake: segment sum, y[s] = sum of the rows x[i] with seg[i] = s, x (5, 3), seg = (0, 2, 0, 1, 2) -> y "
          "(3, 3): the backward divides each row's gradient by the size of its segment, dx[i] = g[seg[i]] / "
          "count(seg[i]), the rule of a segment mean, instead of dx[i] = g[seg[i]] (each row was added once); row 3, "
          "alone in segment 1, is right, the rows of segments 0 and 2 get half the truth",
          inputs, [](const std::vector<Tensor>& in) { return SegmentSum::apply(in[0]); }};
}
const mistakes::Register reg(make);
}  // namespace
