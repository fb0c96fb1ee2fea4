// RMSNorm: the fused forward and its hand-derived backward (chapter 7 derives
// both; exercise ex07-rmsnorm). Declared in nn/functional.h.
#include "nn/functional.h"

#include <cmath>

#include "nn/forms.h"
#include "tensor/elementwise.h"
#include "tensor/exercise.h"

namespace ropegrad::nn {

// ---- RMSNorm ------------------------------------------------------------------------------------

namespace plain {
// x, y: (rows, d); g: (d); inv_rms: (rows), the 1 / rms of each row (rms_norm saves it).
// The plain form: one row after another, the sums in double (why: the
// chapter's section "Why accumulate in double").
template <typename T>
void rms_norm_forward(const T* x, const T* g, T* y, T* inv_rms, int64_t rows, int64_t d, double eps) {
  // BEGIN EXERCISE ex07-rmsnorm
  for (int64_t r = 0; r < rows; ++r) {
    const T* xr = x + r * d;
    double sum_sq = 0;
    for (int64_t i = 0; i < d; ++i) sum_sq += static_cast<double>(xr[i]) * xr[i];
    const T inv = static_cast<T>(1.0 / std::sqrt(sum_sq / static_cast<double>(d) + eps));
    inv_rms[r] = inv;
    T* yr = y + r * d;
    for (int64_t i = 0; i < d; ++i) yr[i] = xr[i] * inv * g[i];
  }
  // END EXERCISE ex07-rmsnorm
}

// dx (rows, d) when not null; dg (d), accumulated in double, when not null.
template <typename T>
void rms_norm_backward(const T* x, const T* g, const T* inv_rms, const T* dy, T* dx, double* dg, int64_t rows,
                       int64_t d) {
  // BEGIN EXERCISE ex07-rmsnorm
  for (int64_t r = 0; r < rows; ++r) {
    const T* xr = x + r * d;
    const T* dyr = dy + r * d;
    const T inv = inv_rms[r];
    if (dx != nullptr) {
      double dot = 0;  // sum_j dy_j g_j x_j
      for (int64_t j = 0; j < d; ++j) dot += static_cast<double>(dyr[j]) * g[j] * xr[j];
      const T coef = static_cast<T>(dot * inv * inv * inv / static_cast<double>(d));
      T* dxr = dx + r * d;
      for (int64_t i = 0; i < d; ++i) dxr[i] = inv * g[i] * dyr[i] - xr[i] * coef;
    }
    if (dg != nullptr) {
      for (int64_t i = 0; i < d; ++i) dg[i] += static_cast<double>(dyr[i]) * xr[i] * inv;
    }
  }
  // END EXERCISE ex07-rmsnorm
}

}  // namespace plain

Tensor rms_norm(const Tensor& x_in, const Tensor& gain, double eps) {
  RG_CHECK(x_in.dim() >= 1, "rms_norm", "input must have at least 1 dim, got shape {}", shape_str(x_in.shape()));
  const int64_t d = x_in.size(-1);
  RG_CHECK(gain.dim() == 1 && gain.size(0) == d, "rms_norm", "gain of shape {} does not match the last dim {} of input {}",
           shape_str(gain.shape()), d, shape_str(x_in.shape()));
  RG_CHECK(x_in.dtype() == gain.dtype(), "rms_norm", "input dtype {} differs from gain dtype {}",
           dtype_name(x_in.dtype()), dtype_name(gain.dtype()));
  RG_CHECK(eps >= 0, "rms_norm", "eps must be non-negative, got {}", eps);
  const Tensor x = kernels::contiguous(x_in);
  const Tensor g = kernels::contiguous(gain);
  const int64_t rows = d == 0 ? 0 : x.numel() / d;
  Shape row_shape = x.shape();
  row_shape.back() = 1;
  Tensor y = Tensor::empty(x.shape(), x.dtype());
  Tensor inv_rms = Tensor::empty(row_shape, x.dtype());  // (..., 1): all backward needs besides x, g
  dispatch_floating(x.dtype(), "rms_norm", [&](auto tag) {
    using T = decltype(tag);
    rms_norm_forward<T>(x.data_ptr<T>(), g.data_ptr<T>(), y.data_ptr<T>(), inv_rms.data_ptr<T>(), rows, d, eps);
  });
  if (needs_grad({&x_in, &gain})) {
    attach_node(y, "rms_norm", {x_in, gain},
                [sx = SavedTensor(x, "rms_norm"), sg = SavedTensor(g, "rms_norm"),
                 sr = SavedTensor(inv_rms, "rms_norm"), rows, d](const Tensor& grad, const NeedsGrad& needs) -> Grads {
                  const Tensor xv = sx.unpack(), gv = sg.unpack(), rv = sr.unpack();
                  const Tensor dy = kernels::contiguous(grad);
                  Tensor dx = needs[0] ? Tensor::empty(xv.shape(), xv.dtype()) : Tensor();
                  Tensor dg = needs[1] ? Tensor::zeros_of({d}, DType::Float64) : Tensor();
                  dispatch_floating(xv.dtype(), "rms_norm", [&](auto tag) {
                    using T = decltype(tag);
                    rms_norm_backward<T>(xv.data_ptr<T>(), gv.data_ptr<T>(), rv.data_ptr<T>(), dy.data_ptr<T>(),
                                         needs[0] ? dx.data_ptr<T>() : nullptr,
                                         needs[1] ? dg.data_ptr<double>() : nullptr, rows, d);
                  });
                  return {dx, needs[1] ? kernels::to(dg, xv.dtype()) : Tensor()};
                });
  }
  return y;
}

}  // namespace ropegrad::nn
