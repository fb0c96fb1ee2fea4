// Cross-entropy with ignore_index (chapter 13; exercise ex13-cross-entropy).
// Declared in nn/functional.h.
#include "nn/functional.h"

#include <algorithm>
#include <cmath>

#include "nn/forms.h"
#include "tensor/elementwise.h"
#include "tensor/exercise.h"

namespace ropegrad::nn {

// ---- cross-entropy (chapter 13 derives it and its gradient) ---------------------------------

// The backward's rows: dz (n, v) from logp (n, v), the targets and scale = g / N.
template <typename T>
void plain::cross_entropy_grad(const T* lp, const int64_t* tgt, T* d, int64_t n, int64_t v, T scale,
                               int64_t ignore_index) {
  // BEGIN EXERCISE ex13-cross-entropy
  for (int64_t r = 0; r < n; ++r) {
    T* row = d + r * v;
    if (tgt[r] == ignore_index) {
      std::fill(row, row + v, T(0));
      continue;
    }
    for (int64_t j = 0; j < v; ++j) row[j] = std::exp(lp[r * v + j]) * scale;
    row[tgt[r]] -= scale;
  }
  // END EXERCISE ex13-cross-entropy
}

Tensor cross_entropy(const Tensor& logits, const Tensor& targets, int64_t ignore_index) {
  RG_CHECK(logits.dim() >= 1 && logits.is_floating_point(), "cross_entropy",
           "logits must be a float tensor (..., V), got shape {} of {}", shape_str(logits.shape()),
           dtype_name(logits.dtype()));
  RG_CHECK(targets.dtype() == DType::Int64, "cross_entropy", "targets must be int64, got {}",
           dtype_name(targets.dtype()));
  Shape expected(logits.shape().begin(), logits.shape().end() - 1);
  RG_CHECK(targets.shape() == expected, "cross_entropy", "targets of shape {} do not match logits {} (expected {})",
           shape_str(targets.shape()), shape_str(logits.shape()), shape_str(expected));
  const int64_t vocab = logits.size(-1);
  const Tensor z = kernels::contiguous(kernels::reshape(logits, {-1, vocab}));
  const Tensor t = kernels::contiguous(kernels::reshape(targets, {-1}));
  const int64_t rows = t.numel();
  const int64_t* tp = t.data_ptr<int64_t>();
  int64_t counted = 0;
  for (int64_t r = 0; r < rows; ++r) {
    if (tp[r] == ignore_index) continue;
    RG_CHECK(tp[r] >= 0 && tp[r] < vocab, "cross_entropy",
             "target {} (at flat position {}) is out of range for {} classes", tp[r], r, vocab);
    ++counted;
  }
  RG_CHECK(counted > 0, "cross_entropy", "every one of the {} targets equals ignore_index {}: the mean is undefined",
           rows, ignore_index);
  // BEGIN EXERCISE ex13-cross-entropy
  const Tensor logp = kernels::log_softmax(z, -1);  // (N, V), stable
  double total = 0;
  dispatch_floating(z.dtype(), "cross_entropy", [&](auto tag) {
    using T = decltype(tag);
    const T* lp = logp.data_ptr<T>();
    for (int64_t r = 0; r < rows; ++r) {
      if (tp[r] != ignore_index) total -= lp[r * vocab + tp[r]];
    }
  });
  Tensor loss = scalar_tensor(total / static_cast<double>(counted), z.dtype());
  if (needs_grad({&logits})) {
    attach_node(loss, "cross_entropy", {logits},
                [slp = SavedTensor(logp, "cross_entropy"), st = SavedTensor(t, "cross_entropy"), counted, ignore_index,
                 shape = logits.shape()](const Tensor& g, const NeedsGrad&) -> Grads {
                  const Tensor lp_t = slp.unpack();
                  const Tensor tt = st.unpack();
                  const int64_t* tgt = tt.data_ptr<int64_t>();
                  const int64_t n = lp_t.size(0), v = lp_t.size(1);
                  Tensor dz = Tensor::empty(lp_t.shape(), lp_t.dtype());
                  dispatch_floating(lp_t.dtype(), "cross_entropy", [&](auto tag) {
                    using T = decltype(tag);
                    const T scale = static_cast<T>(g.item<double>() / static_cast<double>(counted));
                    const T* lp = lp_t.data_ptr<T>();
                    T* d = dz.data_ptr<T>();
                    cross_entropy_grad<T>(lp, tgt, d, n, v, scale, ignore_index);
                  });
                  return {kernels::view(dz, shape)};
                });
  }
  return loss;
  // END EXERCISE ex13-cross-entropy
}

}  // namespace ropegrad::nn
