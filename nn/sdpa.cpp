// Dropout and scaled dot-product attention (chapter 12; exercise ex12-sdpa): the
// fused kernels of nn/attention_scores.cpp, or for long contexts the tiled
// ones that nn/attention_path.h chooses.
// Declared in nn/functional.h.
#include "nn/functional.h"

#include <cmath>
#include <limits>

#include "nn/attention_scores.h"
#include "nn/attention_path.h"
#include "tensor/elementwise.h"
#include "tensor/exercise.h"

namespace ropegrad::nn {

using kernels::map_into;

// ---- dropout -------------------------------------------------------------------------------------

Tensor dropout(const Tensor& x, double p, bool training, Generator* gen) {
  RG_CHECK(p >= 0 && p < 1, "dropout", "probability must be in [0, 1), got {}", p);
  if (!training || p == 0) return x;
  const Tensor keep = kernels::binary(kernels::Binary::Ge, rand(x.shape(), x.dtype(), gen), Scalar(p));
  return mul(x, kernels::binary(kernels::Binary::Mul, kernels::to(keep, x.dtype()), Scalar(1.0 / (1.0 - p))));
}

// ---- attention ------------------------------------------------------------------------------------

namespace {
// The scores' factor: options.scale, else 1 / sqrt(dh) (dh = the head size, q's last dim).
double attention_scale(const AttentionOptions& o, int64_t dh) {
  // BEGIN EXERCISE ex12-sdpa
  return o.scale.value_or(1.0 / std::sqrt(static_cast<double>(dh)));
  // END EXERCISE ex12-sdpa
}
}  // namespace

Tensor scaled_dot_product_attention(const Tensor& q, const Tensor& k, const Tensor& v, const AttentionOptions& o,
                                    Tensor* weights) {
  const char* op = "scaled_dot_product_attention";
  RG_CHECK(q.dim() >= 2 && k.dim() >= 2 && v.dim() >= 2, op, "q, k, v must be at least 2-D, got {}, {}, {}",
           shape_str(q.shape()), shape_str(k.shape()), shape_str(v.shape()));
  RG_CHECK(q.size(-1) == k.size(-1), op, "q and k head sizes differ: q {} vs k {}", shape_str(q.shape()),
           shape_str(k.shape()));
  RG_CHECK(k.size(-2) == v.size(-2), op, "k and v have different numbers of keys: k {} vs v {}", shape_str(k.shape()),
           shape_str(v.shape()));
  const int64_t nq = q.size(-2), nk = k.size(-2);
  const double scale = attention_scale(o, q.size(-1));
  if (o.mask.defined()) {
    Shape scores_shape = broadcast_shapes(Shape(q.shape().begin(), q.shape().end() - 2),
                                          Shape(k.shape().begin(), k.shape().end() - 2), op);
    scores_shape.insert(scores_shape.end(), {nq, nk});
    RG_CHECK(broadcast_shapes(scores_shape, o.mask.shape(), op) == scores_shape, op,
             "mask of shape {} does not broadcast to the scores' shape {} (B, H, Nq, Nk)", shape_str(o.mask.shape()),
             shape_str(scores_shape));
    RG_CHECK(o.mask.dtype() == DType::Bool || o.mask.is_floating_point(), op, "mask must be bool or float, got {}",
             dtype_name(o.mask.dtype()));
  }
  if (q.dim() == 4 && k.dim() == 4) {
    // The usual (B, H, N, dh) case: one fused kernel builds the scores in the
    // probabilities' buffer (nn/attention_scores.cpp); only P is kept for backward.
    // Long contexts: tiled, online softmax, no (B, H, Nq, Nk) tensor (nn/attention_path.h).
    const bool needs_probs = weights != nullptr || (o.training && o.dropout_p > 0);
    if (auto out = dot_attention_if_tiled(q, k, v, scale, {o.mask, o.causal, o.causal_offset}, needs_probs)) return *out;
    Tensor p = dot_attention_probs(q, k, scale, ScoreMask{o.mask, o.causal, o.causal_offset});
    p = dropout(p, o.dropout_p, o.training, o.generator);
    if (weights != nullptr) *weights = p;  // as torch 1.13: the weights that multiplied v
    return matmul(p, v);
  }
  // Any other rank: the same computation from separate ops.
  // scores (..., Nq, Nk); k^T is a view, passed to BLAS as a transpose flag.
  Tensor scores = mul(matmul(q, transpose(k, -2, -1)), scale);
  if (o.mask.defined()) {
    if (o.mask.dtype() == DType::Bool) {
      scores = masked_fill(scores, logical_not(o.mask), -std::numeric_limits<double>::infinity());
    } else {
      scores = add(scores, kernels::to(o.mask, scores.dtype()));
    }
  }
  if (o.causal) {
    const Tensor allowed = kernels::tril(ones({nq, nk}, DType::Bool), o.causal_offset);
    scores = masked_fill(scores, logical_not(allowed), -std::numeric_limits<double>::infinity());
  }
  Tensor p = dropout(softmax(scores, -1), o.dropout_p, o.training, o.generator);  // a row of all -inf gives zeros
  if (weights != nullptr) *weights = p;
  return matmul(p, v);
}

}  // namespace ropegrad::nn
