#include "nn/functional.h"

#include <cmath>
#include <limits>

#include "nn/attention_scores.h"
#include "nn/attention_tiled.h"
#include "tensor/elementwise.h"
#include "tensor/exercise.h"
#include "tensor/fast_math.h"
#include "tensor/parallel.h"
#include "tensor/exercise.h"

namespace ropegrad::nn {

using kernels::map_into;

// ---- RMSNorm ------------------------------------------------------------------------------------
//
// Per row (length D):  ms = mean(x^2),  r = (ms + eps)^(-1/2),  y_i = x_i r g_i.
// Backward, with dy the incoming gradient:
//   dL/dg_i = sum over rows of dy_i x_i r
//   dL/dx_i = r g_i dy_i + sum_j dy_j g_j x_j * d r / d x_i
//           = r g_i dy_i - x_i r^3 / D * sum_j dy_j g_j x_j
// since d r / d x_i = -1/2 (ms + eps)^(-3/2) * 2 x_i / D = -r^3 x_i / D.

namespace {
template <typename T>
void rms_norm_forward(const T* x, const T* g, T* y, T* inv_rms, int64_t rows, int64_t d, double eps) {
  // BEGIN EXERCISE ex07-rmsnorm
  parallel_for(0, rows, std::max<int64_t>(1, 8192 / std::max<int64_t>(d, 1)), [&](int64_t lo, int64_t hi) {
  for (int64_t r = lo; r < hi; ++r) {
    const T* xr = x + r * d;
    double ss = 0;
    for (int64_t i = 0; i < d; ++i) ss += static_cast<double>(xr[i]) * xr[i];
    const T inv = static_cast<T>(1.0 / std::sqrt(ss / static_cast<double>(d) + eps));
    inv_rms[r] = inv;
    T* yr = y + r * d;
    for (int64_t i = 0; i < d; ++i) yr[i] = xr[i] * inv * g[i];
  }
  });
  // END EXERCISE ex07-rmsnorm
}

template <typename T>
void rms_norm_backward(const T* x, const T* g, const T* inv_rms, const T* dy, T* dx, double* dg, int64_t rows,
                       int64_t d) {
  // BEGIN EXERCISE ex07-rmsnorm
  if (dx != nullptr) {  // rows are independent: across the thread pool
    parallel_for(0, rows, std::max<int64_t>(1, 8192 / std::max<int64_t>(d, 1)), [&](int64_t lo, int64_t hi) {
      for (int64_t r = lo; r < hi; ++r) {
        const T* xr = x + r * d;
        const T* dyr = dy + r * d;
        const T inv = inv_rms[r];
        double dot = 0;  // sum_j dy_j g_j x_j
        for (int64_t i = 0; i < d; ++i) dot += static_cast<double>(dyr[i]) * g[i] * xr[i];
        const T coef = static_cast<T>(dot * inv * inv * inv / static_cast<double>(d));
        T* dxr = dx + r * d;
        for (int64_t i = 0; i < d; ++i) dxr[i] = inv * g[i] * dyr[i] - xr[i] * coef;
      }
    });
  }
  if (dg != nullptr) {  // sums over rows: one thread, a fixed order
    for (int64_t r = 0; r < rows; ++r) {
      const T* xr = x + r * d;
      const T* dyr = dy + r * d;
      const T inv = inv_rms[r];
      for (int64_t i = 0; i < d; ++i) dg[i] += static_cast<double>(dyr[i]) * xr[i] * inv;
    }
  }
  // END EXERCISE ex07-rmsnorm
}
}  // namespace

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

// ---- SwiGLU gate ----------------------------------------------------------------------------------
//
// out = a s b with s = sigmoid(a); fusing the SiLU and the product saves a
// (B, T, d_ff) tensor in the forward and two passes in the backward.

namespace {
template <typename T>
[[gnu::always_inline]] inline T sigmoid_fast(T x) {
  return T(1) / (T(1) + fast_exp(-x));
}
}  // namespace

Tensor silu_mul(const Tensor& a, const Tensor& b) {
  RG_CHECK(a.dtype() == b.dtype() && a.is_floating_point(), "silu_mul", "operands must share a float dtype, got {} and {}",
           dtype_name(a.dtype()), dtype_name(b.dtype()));
  broadcast_shapes(a.shape(), b.shape(), "silu_mul");  // an error naming the op, before any work
  // BEGIN EXERCISE ex08-swiglu
  Tensor out = kernels::map_float(a, b, [](auto x, auto y) { return x * sigmoid_fast(x) * y; });
  if (needs_grad({&a, &b})) {
    attach_node(out, "silu_mul", {a, b},
                [sa = SavedTensor(a, "silu_mul"), sb = SavedTensor(b, "silu_mul"), shape_a = a.shape(),
                 shape_b = b.shape()](const Tensor& g, const NeedsGrad& needs) -> Grads {
                  const Tensor av = sa.unpack(), bv = sb.unpack();
                  Grads grads(2);
                  if (needs[0]) {
                    grads[0] = kernels::sum_to(kernels::map_float(g, av, bv, [](auto gg, auto x, auto y) {
                                                 const auto s = sigmoid_fast(x);
                                                 return gg * y * s * (1 + x * (1 - s));
                                               }),
                                               shape_a);
                  }
                  if (needs[1]) {
                    grads[1] = kernels::sum_to(
                        kernels::map_float(g, av, [](auto gg, auto x) { return gg * x * sigmoid_fast(x); }), shape_b);
                  }
                  return grads;
                });
  }
  return out;
  // END EXERCISE ex08-swiglu
}

// ---- RoPE rotation ----------------------------------------------------------------------------
//
// For a pair (a, b) and angle t:  a' = a cos t - b sin t,  b' = a sin t + b cos t.
// A rotation's inverse is its transpose, so the backward is the same formula
// with sin negated: da = da' cos t + db' sin t,  db = -da' sin t + db' cos t.

namespace {
// (out_re, out_im) = (ar + i ai)(br + i sign bi), elementwise with
// broadcasting: the one kernel under both the RoPE rotation and complex_mul.
void complex_product_into(const Tensor& out_re, const Tensor& out_im, const Tensor& ar, const Tensor& ai,
                          const Tensor& br, const Tensor& bi, double sign, const char* op) {
  dispatch_floating(out_re.dtype(), op, [&](auto tag) {
    using T = decltype(tag);
    const T s = static_cast<T>(sign);
    // BEGIN EXERCISE ex09-rope
    map_into<T, T, T, T, T>(out_re, [s](T xr, T xi, T yr, T yi) { return xr * yr - xi * (s * yi); }, {ar, ai, br, bi});
    map_into<T, T, T, T, T>(out_im, [s](T xr, T xi, T yr, T yi) { return xr * (s * yi) + xi * yr; }, {ar, ai, br, bi});
    // END EXERCISE ex09-rope
  });
}

// The two halves of every pair, as strided views of the last dim.
std::pair<Tensor, Tensor> pair_views(const Tensor& t, RopePairing pairing) {
  const int64_t half = t.size(-1) / 2;
  if (pairing == RopePairing::HalfSplit) {
    return {kernels::narrow(t, -1, 0, half), kernels::narrow(t, -1, half, half)};
  }
  // BEGIN EXERCISE ex09-rope
  Shape pairs_shape = t.shape();
  pairs_shape.back() = half;
  pairs_shape.push_back(2);
  const Tensor pairs = kernels::view(t, pairs_shape);  // (..., dh/2, 2)
  return {kernels::select(pairs, -1, 0), kernels::select(pairs, -1, 1)};
  // END EXERCISE ex09-rope
}

// out = rotate(x) by (cos, sin * sign): sign = -1 gives the inverse rotation.
// A rotation of the pair (a, b) is the complex product (a + i b)(cos + i sin).
Tensor rotate(const Tensor& x, const Tensor& cos, const Tensor& sin, RopePairing pairing, double sign) {
  Tensor out = Tensor::empty(x.shape(), x.dtype());
  const auto [a, b] = pair_views(x, pairing);
  const auto [out_a, out_b] = pair_views(out, pairing);
  complex_product_into(out_a, out_b, a, b, cos, sin, sign, "rope");
  return out;
}
}  // namespace

Tensor rope_rotate(const Tensor& x_in, const Tensor& cos, const Tensor& sin, RopePairing pairing) {
  RG_CHECK(x_in.dim() >= 2, "rope", "input must be (..., T, dh), got shape {}", shape_str(x_in.shape()));
  const int64_t dh = x_in.size(-1);
  RG_CHECK(dh % 2 == 0, "rope", "the head size must be even to form pairs, got {} (input shape {})", dh,
           shape_str(x_in.shape()));
  Shape half_shape = x_in.shape();
  half_shape.back() = dh / 2;
  RG_CHECK(cos.shape() == sin.shape(), "rope", "cos {} and sin {} tables differ in shape", shape_str(cos.shape()),
           shape_str(sin.shape()));
  RG_CHECK(broadcast_shapes(half_shape, cos.shape(), "rope") == half_shape, "rope",
           "cos/sin of shape {} do not broadcast to the pairs' shape {}", shape_str(cos.shape()), shape_str(half_shape));
  const Tensor x = kernels::contiguous(x_in);
  const Tensor c = kernels::to(cos, x.dtype()), s = kernels::to(sin, x.dtype());
  // BEGIN EXERCISE ex09-rope
  Tensor out = rotate(x, c, s, pairing, 1.0);
  if (needs_grad({&x_in})) {
    attach_node(out, "rope", {x_in},
                [sc = SavedTensor(c, "rope"), ss = SavedTensor(s, "rope"), pairing](const Tensor& g, const NeedsGrad&) -> Grads {
                  return {rotate(kernels::contiguous(g), sc.unpack(), ss.unpack(), pairing, -1.0)};
                });
  }
  return out;
  // END EXERCISE ex09-rope
}

// ---- complex -----------------------------------------------------------------------------------

Tensor view_as_complex(const Tensor& x) {
  RG_CHECK(x.dim() >= 1 && x.size(-1) % 2 == 0, "view_as_complex",
           "the last dim must have an even size to form (re, im) pairs, got shape {}", shape_str(x.shape()));
  // BEGIN EXERCISE ex10-rope-complex
  Shape shape = x.shape();
  shape.back() /= 2;
  shape.push_back(2);
  return view(x, shape);
  // END EXERCISE ex10-rope-complex
}

Tensor view_as_real(const Tensor& z) {
  RG_CHECK(z.dim() >= 1 && z.size(-1) == 2, "view_as_real", "expected a complex tensor (..., 2), got shape {}",
           shape_str(z.shape()));
  return flatten(z, -2, -1);
}

namespace {
// out = a * b (conj_b: a * conj(b)) over (..., 2) pairs, broadcasting.
Tensor complex_product(const Tensor& a, const Tensor& b, bool conj_b) {
  const Shape shape = broadcast_shapes(a.shape(), b.shape(), "complex_mul");
  Tensor out = Tensor::empty(shape, a.dtype());
  const Tensor are = kernels::select(a, -1, 0), aim = kernels::select(a, -1, 1);
  const Tensor bre = kernels::select(b, -1, 0), bim = kernels::select(b, -1, 1);
  const Tensor ore = kernels::select(out, -1, 0), oim = kernels::select(out, -1, 1);
  complex_product_into(ore, oim, are, aim, bre, bim, conj_b ? -1.0 : 1.0, "complex_mul");  // conj(b) = bre - i bim
  return out;
}
}  // namespace

Tensor complex_mul(const Tensor& a, const Tensor& b) {
  RG_CHECK(a.dim() >= 1 && a.size(-1) == 2 && b.dim() >= 1 && b.size(-1) == 2, "complex_mul",
           "operands must be complex (..., 2) pairs, got shapes {} and {}", shape_str(a.shape()), shape_str(b.shape()));
  RG_CHECK(a.dtype() == b.dtype(), "complex_mul", "dtypes differ: {} and {}", dtype_name(a.dtype()),
           dtype_name(b.dtype()));
  // BEGIN EXERCISE ex10-rope-complex
  Tensor out = complex_product(a, b, false);
  if (needs_grad({&a, &b})) {
    // d(ab) = b da + a db; for a real loss, grad_a = grad * conj(b), grad_b = grad * conj(a).
    attach_node(out, "complex_mul", {a, b},
                [sa = SavedTensor(a, "complex_mul"), sb = SavedTensor(b, "complex_mul"), shape_a = a.shape(),
                 shape_b = b.shape()](const Tensor& g, const NeedsGrad& needs) -> Grads {
                  Grads grads(2);
                  if (needs[0]) grads[0] = kernels::sum_to(complex_product(g, sb.unpack(), true), shape_a);
                  if (needs[1]) grads[1] = kernels::sum_to(complex_product(g, sa.unpack(), true), shape_b);
                  return grads;
                });
  }
  return out;
  // END EXERCISE ex10-rope-complex
}

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
    // Long contexts: tiled, online softmax, no (B, H, Nq, Nk) tensor (nn/attention_tiled.h).
    const bool needs_probs = weights != nullptr || (o.training && o.dropout_p > 0);
    if (use_tiled_attention(q, k, v, {o.mask, o.causal, o.causal_offset}, needs_probs))
      return dot_attention_tiled(q, k, v, scale, {o.mask, o.causal, o.causal_offset});
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

// ---- cross-entropy ---------------------------------------------------------------------------------
//
// loss = -1/N sum_n log softmax(z_n)[t_n] over the N rows whose target is not ignored.
// d loss / d z_n = (softmax(z_n) - onehot(t_n)) / N, zero for ignored rows.

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
                    parallel_for(0, n, std::max<int64_t>(1, 8192 / std::max<int64_t>(v, 1)), [&](int64_t lo, int64_t hi) {
                      for (int64_t r = lo; r < hi; ++r) {
                        T* row = d + r * v;
                        if (tgt[r] == ignore_index) {
                          std::fill(row, row + v, T(0));
                          continue;
                        }
                        for (int64_t j = 0; j < v; ++j) row[j] = fast_exp(lp[r * v + j]) * scale;
                        row[tgt[r]] -= scale;
                      }
                    });
                  });
                  return {kernels::view(dz, shape)};
                });
  }
  return loss;
  // END EXERCISE ex13-cross-entropy
}

}  // namespace ropegrad::nn
