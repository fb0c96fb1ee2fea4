// Mistake: index_add along dim 0, y = base with the rows of src added at idx = (4, 1, 3), base (5, 3), src (3, 3): the gradient for src takes the first three rows of g, dsrc = g[0:3], instead of the rows src was added into, dsrc[k] = g[idx[k]] = g[(4, 1, 3)]; dbase = g is right
// Origin: written without sight of the checker (issue 27's eighth set; the half worked from)
#include "case.h"
#include <vector>
namespace {
using namespace ropegrad;
const std::vector<int64_t> kIdx{4, 1, 3};
struct IndexAddRows : Function<IndexAddRows> {
  static constexpr const char* name = "index_add_rows";
  static Tensor forward(FunctionCtx& ctx, const Tensor& base, const Tensor& src) {
    ctx.saved_data["src_rows"] = src.size(0);
    const int64_t cols = base.size(1);
    std::vector<double> y = base.to_vector<double>();
    const std::vector<double> sv = src.to_vector<double>();
    for (size_t k = 0; k < kIdx.size(); ++k)
      for (int64_t c = 0; c < cols; ++c) y[kIdx[k] * cols + c] += sv[k * cols + c];
    return tensor(y, base.shape(), DType::Float64);
  }
  static Grads backward(FunctionCtx& ctx, const Tensor& g) {
    const int64_t src_rows = std::any_cast<int64_t>(ctx.saved_data["src_rows"]);
    Tensor dbase = clone(g);
    Tensor dsrc = contiguous(narrow(g, 0, 0, src_rows));
    return {dbase, dsrc};
  }
};
mistakes::Case make() {
  Generator gen(8114);
  Tensor base = randn({5, 3}, DType::Float64, &gen);
  Tensor src = randn({3, 3}, DType::Float64, &gen);
  base.requires_grad_();
  src.requires_grad_();
  std::vector<Tensor> inputs{base, src};
  return {"u8-index-add-src-grad-not-gathered",
          "index_add along dim 0, y = base with the rows of src added at idx = (4, 1, 3), base (5, 3), src (3, 3): the gradient for src takes the first three rows of g, dsrc = g[0:3], instead of the rows src was added into, dsrc[k] = g[idx[k]] = g[(4, 1, 3)]; dbase = g is right",
          inputs, [](const std::vector<Tensor>& in) { return IndexAddRows::apply(in[0], in[1]); }};
}
const mistakes::Register reg(make);
}  // namespace
