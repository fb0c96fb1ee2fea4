// tensor/'s ops that have a fast form (tensor/fast_forms.def): each op's
// plain form (its exercise region, in its own file) and its fast form side
// by side, and the one place that chooses between them (tensor/fast_forms.h).
// Internal to tensor/: only the files of these ops include it.
#pragma once

#include <cstdint>
#include <vector>

#include "tensor/fast_forms.h"
#include "tensor/kernels.h"
#include "fast_forms_present.h"  // ROPEGRAD_HAS_<Name>, generated from tensor/fast_forms.def
#if ROPEGRAD_HAS_Softmax
#include "tensor/fast/softmax_fast.h"
#endif

namespace ropegrad::kernels {

// Runs rows(in_rows, out_rows, lo, hi, n) over every row along `dim` of the
// inputs, in parts across the thread pool (defined in tensor/softmax.cpp).
template <typename T, typename Rows>
Tensor along_rows(const std::vector<Tensor>& inputs, int64_t dim, Rows rows_fn);

// ---- softmax and log_softmax, forward and backward: tensor/softmax.cpp (ex12-softmax),
// fast rows tensor/fast/softmax_fast.h. `dim` is normalised by the caller.
namespace plain {
Tensor softmax(const Tensor& t, int64_t dim);
Tensor log_softmax(const Tensor& t, int64_t dim);
Tensor softmax_backward(const Tensor& y, const Tensor& grad, int64_t dim);
Tensor log_softmax_backward(const Tensor& y, const Tensor& grad, int64_t dim);
}  // namespace plain

namespace forms {

#if ROPEGRAD_HAS_Softmax
// The fast rows fast_rows(tag) gives, along `dim` of the inputs, counted.
template <typename FastRows>
Tensor softmax_fast_rows(const std::vector<Tensor>& inputs, int64_t dim, const char* op, FastRows fast_rows) {
  return dispatch_floating(inputs[0].dtype(), op, [&](auto tag) -> Tensor {
    using T = decltype(tag);
    note_fast_form(FastForm::Softmax);
    return along_rows<T>(inputs, dim, fast_rows(tag));
  });
}
#endif

inline Tensor softmax(const Tensor& t, int64_t dim) {
#if ROPEGRAD_HAS_Softmax
  if (fast_forms_enabled()) {
    return softmax_fast_rows({t}, dim, "softmax", [](auto tag) {
      using T = decltype(tag);
      return [](const std::vector<const T*>& in, T* o, int64_t lo, int64_t hi, int64_t n) {
        fast::softmax_rows<T>(in[0], o, lo, hi, n);
      };
    });
  }
#endif
  return plain::softmax(t, dim);
}

inline Tensor log_softmax(const Tensor& t, int64_t dim) {
#if ROPEGRAD_HAS_Softmax
  if (fast_forms_enabled()) {
    return softmax_fast_rows({t}, dim, "log_softmax", [](auto tag) {
      using T = decltype(tag);
      return [](const std::vector<const T*>& in, T* o, int64_t lo, int64_t hi, int64_t n) {
        fast::log_softmax_rows<T>(in[0], o, lo, hi, n);
      };
    });
  }
#endif
  return plain::log_softmax(t, dim);
}

inline Tensor softmax_backward(const Tensor& y, const Tensor& grad, int64_t dim) {
#if ROPEGRAD_HAS_Softmax
  if (fast_forms_enabled()) {
    return softmax_fast_rows({y, grad}, dim, "softmax_backward", [](auto tag) {
      using T = decltype(tag);
      return [](const std::vector<const T*>& in, T* o, int64_t lo, int64_t hi, int64_t n) {
        fast::softmax_backward_rows<T>(in[0], in[1], o, lo, hi, n);
      };
    });
  }
#endif
  return plain::softmax_backward(y, grad, dim);
}

inline Tensor log_softmax_backward(const Tensor& y, const Tensor& grad, int64_t dim) {
#if ROPEGRAD_HAS_Softmax
  if (fast_forms_enabled()) {
    return softmax_fast_rows({y, grad}, dim, "log_softmax_backward", [](auto tag) {
      using T = decltype(tag);
      return [](const std::vector<const T*>& in, T* o, int64_t lo, int64_t hi, int64_t n) {
        fast::log_softmax_backward_rows<T>(in[0], in[1], o, lo, hi, n);
      };
    });
  }
#endif
  return plain::log_softmax_backward(y, grad, dim);
}

}  // namespace forms
}  // namespace ropegrad::kernels
