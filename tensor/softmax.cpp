// Numerically stable softmax / log_softmax along one dim, and their fused
// backward kernels (docs/01-tensors.md derives the stable forms,
// docs/02-autograd.md the backward rules). Each works row by row: the dim is
// moved last and made contiguous, and a row function sees one row of n values.
#include <algorithm>
#include <cmath>
#include <limits>

#include "tensor/elementwise.h"
#include "tensor/exercise.h"
#include "tensor/forms.h"
#include "tensor/kernels.h"

namespace ropegrad::kernels {

namespace {

// Moves `dim` last and makes rows contiguous: (outer, n) with n = size(dim).
Tensor rows_last(const Tensor& t, int64_t dim) {
  return contiguous(transpose(t, dim, -1));
}
}  // namespace

// Runs rows(in_rows, out_rows, lo, hi, n) over every row along `dim`, in
// parts across the thread pool; in_rows and out_rows point at row 0.
template <typename T, typename Rows>
Tensor along_rows(const std::vector<Tensor>& inputs, int64_t dim, Rows rows_fn) {
  if (inputs[0].dim() == 0) {  // a 0-d tensor is one row of one element
    std::vector<Tensor> as_1d;
    for (const Tensor& in : inputs) as_1d.push_back(reshape(in, {1}));
    return reshape(along_rows<T>(as_1d, 0, rows_fn), {});
  }
  std::vector<Tensor> rows;
  for (const Tensor& in : inputs) rows.push_back(rows_last(in, dim));
  const int64_t n = rows[0].shape().back();
  Tensor out = Tensor::empty(rows[0].shape(), rows[0].dtype());
  const int64_t outer = n == 0 ? 0 : rows[0].numel() / n;
  std::vector<const T*> in_ptrs;
  for (const Tensor& r : rows) in_ptrs.push_back(r.data_ptr<T>());
  T* o = out.data_ptr<T>();
  parallel_for(0, outer, std::max<int64_t>(1, kernels::kParallelGrain / std::max<int64_t>(n, 1)),
               [&](int64_t lo, int64_t hi) { rows_fn(in_ptrs, o, lo, hi, n); });
  return transpose(out, dim, -1);
}

namespace {

// The plain form's rows: row(in, at, out_row, n) for each row, where in[k] + at
// is row r of input k.
template <typename T, typename Row>
auto each_row(Row row) {
  return [row](const std::vector<const T*>& in, T* out, int64_t lo, int64_t hi, int64_t n) {
    for (int64_t r = lo; r < hi; ++r) row(in, r * n, out + r * n, n);
  };
}

}  // namespace

// Each kernel's row function runs inside parallel_for: it must not throw.

Tensor softmax(const Tensor& t, int64_t dim) {
  dim = normalize_dim(dim, t.dim(), "softmax");
  return forms::softmax(t, dim);
}

Tensor plain::softmax(const Tensor& t, int64_t dim) {
  return dispatch_floating(t.dtype(), "softmax", [&](auto tag) -> Tensor {
    using T = decltype(tag);
    // BEGIN EXERCISE ex12-softmax
    return along_rows<T>({t}, dim, each_row<T>([](const std::vector<const T*>& in, int64_t at, T* y, int64_t n) {
      const T* x = in[0] + at;
      T m = -std::numeric_limits<T>::infinity();
      for (int64_t j = 0; j < n; ++j) m = std::max(m, x[j]);
      // A row of -inf (every key masked) has no finite max: give zeros, not NaN.
      if (m == -std::numeric_limits<T>::infinity()) {
        std::fill(y, y + n, T(0));
        return;
      }
      T total = 0;
      for (int64_t j = 0; j < n; ++j) {
        y[j] = std::exp(x[j] - m);
        total += y[j];
      }
      for (int64_t j = 0; j < n; ++j) y[j] /= total;
    }));
    // END EXERCISE ex12-softmax
  });
}

Tensor log_softmax(const Tensor& t, int64_t dim) {
  dim = normalize_dim(dim, t.dim(), "log_softmax");
  return forms::log_softmax(t, dim);
}

Tensor plain::log_softmax(const Tensor& t, int64_t dim) {
  return dispatch_floating(t.dtype(), "log_softmax", [&](auto tag) -> Tensor {
    using T = decltype(tag);
    // BEGIN EXERCISE ex12-softmax
    return along_rows<T>({t}, dim, each_row<T>([](const std::vector<const T*>& in, int64_t at, T* y, int64_t n) {
      const T* x = in[0] + at;
      T m = -std::numeric_limits<T>::infinity();
      for (int64_t j = 0; j < n; ++j) m = std::max(m, x[j]);
      if (m == -std::numeric_limits<T>::infinity()) {  // log of an empty distribution
        std::fill(y, y + n, -std::numeric_limits<T>::infinity());
        return;
      }
      T total = 0;
      for (int64_t j = 0; j < n; ++j) total += std::exp(x[j] - m);
      // (x - m) is exact; adding m back to log(total) first would round away
      // the low bits of large logits.
      const T log_total = std::log(total);
      for (int64_t j = 0; j < n; ++j) y[j] = (x[j] - m) - log_total;
    }));
    // END EXERCISE ex12-softmax
  });
}

// grad_in = y * (g - <g, y>) along dim.
Tensor softmax_backward(const Tensor& y, const Tensor& grad, int64_t dim) {
  dim = normalize_dim(dim, y.dim(), "softmax_backward");
  return forms::softmax_backward(y, grad, dim);
}

Tensor plain::softmax_backward(const Tensor& y, const Tensor& grad, int64_t dim) {
  return dispatch_floating(y.dtype(), "softmax_backward", [&](auto tag) -> Tensor {
    using T = decltype(tag);
    // BEGIN EXERCISE ex12-softmax
    return along_rows<T>({y, grad}, dim,
                         each_row<T>([](const std::vector<const T*>& in, int64_t at, T* gx, int64_t n) {
                           const T* yr = in[0] + at;
                           const T* g = in[1] + at;
                           T dot = 0;
                           for (int64_t j = 0; j < n; ++j) dot += g[j] * yr[j];
                           for (int64_t j = 0; j < n; ++j) gx[j] = yr[j] * (g[j] - dot);
                         }));
    // END EXERCISE ex12-softmax
  });
}

// grad_in = g - exp(y) * sum(g) along dim, for y = log_softmax(x).
Tensor log_softmax_backward(const Tensor& y, const Tensor& grad, int64_t dim) {
  dim = normalize_dim(dim, y.dim(), "log_softmax_backward");
  return forms::log_softmax_backward(y, grad, dim);
}

Tensor plain::log_softmax_backward(const Tensor& y, const Tensor& grad, int64_t dim) {
  return dispatch_floating(y.dtype(), "log_softmax_backward", [&](auto tag) -> Tensor {
    using T = decltype(tag);
    // BEGIN EXERCISE ex12-softmax
    return along_rows<T>({y, grad}, dim,
                         each_row<T>([](const std::vector<const T*>& in, int64_t at, T* gx, int64_t n) {
                           const T* yr = in[0] + at;
                           const T* g = in[1] + at;
                           T total = 0;
                           for (int64_t j = 0; j < n; ++j) total += g[j];
                           for (int64_t j = 0; j < n; ++j) gx[j] = g[j] - std::exp(yr[j]) * total;
                         }));
    // END EXERCISE ex12-softmax
  });
}

}  // namespace ropegrad::kernels
