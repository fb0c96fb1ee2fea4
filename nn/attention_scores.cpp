// Fused score -> softmax kernels and their backward rules.
//
// Shared by all three variants:
//   forward:  P = softmax_n(S_mn + mask_mn), rows with no allowed key -> 0
//   backward: dS = P * (dP - sum_n dP P)      (the softmax rule, row by row)
// then each variant turns dS into gradients of its inputs with GEMMs.
#include "nn/attention_scores.h"

#include <cmath>
#include <limits>

#include "nn/attention_rows.h"
#include "nn/forms.h"
#include "tensor/elementwise.h"
#include "tensor/exercise.h"
#include "tensor/kernels.h"

namespace ropegrad::nn {

namespace {

using kernels::map_float;

Blocks check_qk(const Tensor& q, const Tensor& k, const char* op) {
  RG_CHECK(q.dim() == 4 && k.dim() == 4, op, "expected (B, H, N, dh) inputs, got q {} and k {}", shape_str(q.shape()),
           shape_str(k.shape()));
  RG_CHECK(q.size(0) == k.size(0) && q.size(1) == k.size(1) && q.size(3) == k.size(3), op,
           "q {} and k {} must agree in B, H and dh", shape_str(q.shape()), shape_str(k.shape()));
  RG_CHECK(q.dtype() == k.dtype() && q.is_floating_point(), op, "q and k must share a float dtype, got {} and {}",
           dtype_name(q.dtype()), dtype_name(k.dtype()));
  return {q.size(0), q.size(1), q.size(2), k.size(2)};
}

// The mask as an additive float tensor broadcast (stride 0) to the scores'
// shape, or undefined when there is none.
Tensor additive_mask(const ScoreMask& m, const Blocks& g, DType dtype, const char* op) {
  if (!m.mask.defined()) return Tensor();
  const Shape scores{g.b, g.h, g.nq, g.nk};
  RG_CHECK(broadcast_shapes(scores, m.mask.shape(), op) == scores, op,
           "mask of shape {} does not broadcast to the scores' shape {} (B, H, Nq, Nk)", shape_str(m.mask.shape()),
           shape_str(scores));
  RG_CHECK(m.mask.dtype() == DType::Bool || m.mask.is_floating_point(), op, "mask must be bool or float, got {}",
           dtype_name(m.mask.dtype()));
  Tensor add;  // the mask's shape, of `dtype`: what is added to the scores
  // BEGIN EXERCISE ex12-sdpa
  if (m.mask.dtype() == DType::Bool) {  // true = may attend: 0, false: -inf
    add = kernels::where(m.mask, zeros({}, dtype), full({}, -std::numeric_limits<double>::infinity(), dtype));
  } else {
    add = kernels::to(m.mask, dtype);
  }
  // END EXERCISE ex12-sdpa
  return kernels::expand(add, scores);
}
}  // namespace

// Turns every row of `p` into probabilities: score_row(b, h, i, row) writes
// the raw scores of query i (row holds what the caller left there, e.g. q.k),
// the mask is added and the keys a causal query may not see become -inf;
// then the softmax of each row (the library's, ex12-softmax), which gives a
// row with no allowed key zeros. Returns P, (B, H, Nq, Nk).
template <typename T, typename ScoreRow>
Tensor plain::scores_to_probs(const Tensor& p, const Blocks& g, const Tensor& add_mask, const ScoreMask& m,
                              ScoreRow score_row) {
  const MaskView mask(add_mask);
  T* scores = p.data_ptr<T>();
  for (int64_t row_index = 0; row_index < g.b * g.h * g.nq; ++row_index) {
    const int64_t i = row_index % g.nq, h = (row_index / g.nq) % g.h, b = row_index / (g.nq * g.h);
    T* row = scores + row_index * g.nk;
    score_row(b, h, i, row);
    if (mask.base != nullptr) {
      const T* mr = mask.row<T>(b, h, i);
      for (int64_t j = 0; j < g.nk; ++j) row[j] += mr[j * mask.s3];
    }
    if (m.causal) {
      const int64_t allowed = std::clamp<int64_t>(i + m.causal_offset + 1, 0, g.nk);
      std::fill(row + allowed, row + g.nk, -std::numeric_limits<T>::infinity());
    }
  }
  return kernels::softmax(p, -1);
}

// dS = P * (dP - rowsum(dP * P)): the softmax's backward (the library's,
// ex12-softmax).
Tensor plain::softmax_grad(const Tensor& p, const Tensor& dp) {
  return kernels::contiguous(kernels::softmax_backward(p, dp, -1));
}

namespace {
Tensor transposed(const Tensor& t) { return kernels::transpose(t, -2, -1); }

// A float mask that requires grad is one more input of the node: it was added
// to the scores, so its gradient is dS summed back to its shape.
bool mask_wants_grad(const ScoreMask& m) { return m.mask.defined() && m.mask.requires_grad(); }

std::vector<Tensor> node_inputs(std::vector<Tensor> inputs, const ScoreMask& m) {
  if (mask_wants_grad(m)) inputs.push_back(m.mask);
  return inputs;
}

Tensor mask_grad(const Tensor& ds, const Shape& mask_shape, DType mask_dtype) {
  return kernels::to(kernels::sum_to(ds, mask_shape), mask_dtype);
}

// Squared norms of the rows: (B, H, N, dh) -> (B, H, N) as a contiguous tensor.
Tensor row_norms(const Tensor& x) {
  return kernels::reduce(kernels::Reduce::Sum, map_float(x, [](auto v) { return v * v; }), {-1}, false);
}

}  // namespace

// ---- standard: S = scale q k^T ------------------------------------------------------
//   dq = scale dS k,   dk = scale dS^T q

Tensor dot_attention_probs(const Tensor& q_in, const Tensor& k_in, double scale, const ScoreMask& mask) {
  const char* op = "dot_attention";
  const Blocks g = check_qk(q_in, k_in, op);
  const Tensor q = kernels::contiguous(q_in), k = kernels::contiguous(k_in);
  const Tensor add = additive_mask(mask, g, q.dtype(), op);
  Tensor p = kernels::matmul(q, transposed(k));  // raw q.k, becomes P in place
  dispatch_floating(q.dtype(), op, [&](auto tag) {
    using T = decltype(tag);
    const T s = static_cast<T>(scale);
    p = scores_to_probs<T>(p, g, add, mask, [&](int64_t, int64_t, int64_t, T* row) {
      for (int64_t j = 0; j < g.nk; ++j) row[j] *= s;
    });
  });
  const std::vector<Tensor> inputs = node_inputs({q_in, k_in}, mask);
  if (needs_grad(inputs)) {
    attach_node(p, op, inputs,
                [sq = SavedTensor(q, op), sk = SavedTensor(k, op), sp = SavedTensor(p, op), scale,
                 mask_shape = mask.mask.defined() ? mask.mask.shape() : Shape{},
                 mask_dtype = mask.mask.defined() ? mask.mask.dtype() : q.dtype()](
                    const Tensor& dp, const NeedsGrad& needs) -> Grads {
                  const Tensor ds = softmax_grad(sp.unpack(), dp);
                  Grads grads(needs.size());
                  // BEGIN EXERCISE ex12-sdpa
                  const auto scaled = [scale](auto v) { return v * scale; };
                  if (needs[0]) grads[0] = map_float(kernels::matmul(ds, sk.unpack()), scaled);  // dq = scale dS k
                  if (needs[1]) grads[1] = map_float(kernels::matmul(transposed(ds), sq.unpack()), scaled);  // dk = scale dS^T q
                  // END EXERCISE ex12-sdpa
                  if (needs.size() > 2 && needs[2]) grads[2] = mask_grad(ds, mask_shape, mask_dtype);
                  return grads;
                });
  }
  return p;
}

// ---- squared distance: S = -|a_m - b_n|^2 / (tau + eps) ---------------------------------
//
// The W2 score is this distance on augmented vectors: with
//   a = [mu_q, c sigma_q],  b = [mu_k, c sigma_k]   (c = sqrt(dh) for scalar sigma, 1 for vector),
// |a - b|^2 = |mu_q - mu_k|^2 + D_sigma^2, computed as |a|^2 + |b|^2 - 2 a.b (one GEMM).
// With D2 = |a - b|^2 and dD2 = -dS / (tau + eps):
//   da_m = 2 a_m sum_n dD2_mn - 2 sum_n dD2_mn b_n      (a GEMM: dD2 b)
//   db_n = 2 b_n sum_m dD2_mn - 2 sum_m dD2_mn a_m      (a GEMM: dD2^T a)
//   dtau = sum dS * dS/dtau = sum dS * D2 / (tau + eps)^2,
// where the (Nq, Nk) sum of dD2 * D2 splits into per-row terms by expanding D2
// (see the backward): P, a and b are all we need to keep.

namespace {
// The forward: P = softmax(S + mask) with S_ij = -|a_i - b_j|^2 / (tau + eps),
// |a_i - b_j|^2 from one GEMM and the row norms.
Tensor distance_probs_forward(const Tensor& a, const Tensor& b, const Tensor& tau_c, const Tensor& add,
                              const ScoreMask& mask, const Blocks& g, double eps, const char* op) {
  const Tensor na = row_norms(a), nb = row_norms(b);  // (B, H, Nq), (B, H, Nk)
  Tensor p = kernels::matmul(a, transposed(b));        // a.b, becomes P in place
  dispatch_floating(a.dtype(), op, [&](auto tag) {
    using T = decltype(tag);
    const T* pa = na.data_ptr<T>();
    const T* pb = nb.data_ptr<T>();
    const T* t = tau_c.data_ptr<T>();
    for (int64_t h = 0; h < g.h; ++h) {
      RG_CHECK(t[h] > 0 && std::isfinite(t[h]), op, "temperature tau[{}] = {} must be positive and finite", h, t[h]);
    }
    // row holds a_i.b_j for every key j on entry, the score S_ij on exit.
    p = scores_to_probs<T>(p, g, add, mask, [&](int64_t bi, int64_t h, int64_t i, T* row) {
      // BEGIN EXERCISE ex15-w2-scores
      const T inv = T(1) / (t[h] + static_cast<T>(eps));
      const T ai = pa[(bi * g.h + h) * g.nq + i];  // |a_i|^2
      const T* bn = pb + (bi * g.h + h) * g.nk;     // |b_j|^2
      for (int64_t j = 0; j < g.nk; ++j) row[j] = -(ai + bn[j] - 2 * row[j]) * inv;
      // END EXERCISE ex15-w2-scores
    });
  });
  return p;
}

Tensor distance_attention_probs(const Tensor& a_in, const Tensor& b_in, const Tensor& tau, const ScoreMask& mask,
                                double eps) {
  const char* op = "w2_attention";
  const Blocks g = check_qk(a_in, b_in, op);
  RG_CHECK(tau.dim() == 1 && tau.size(0) == g.h && tau.dtype() == a_in.dtype(), op,
           "tau must be ({}) of dtype {}, got shape {} of {}", g.h, dtype_name(a_in.dtype()), shape_str(tau.shape()),
           dtype_name(tau.dtype()));
  const Tensor a = kernels::contiguous(a_in), b = kernels::contiguous(b_in);
  const Tensor tau_c = kernels::contiguous(tau);
  const Tensor add = additive_mask(mask, g, a.dtype(), op);
  Tensor p = distance_probs_forward(a, b, tau_c, add, mask, g, eps, op);
  const std::vector<Tensor> inputs = node_inputs({a_in, b_in, tau}, mask);
  if (needs_grad(inputs)) {
    attach_node(
        p, op, inputs,
        [sa = SavedTensor(a, op), sb = SavedTensor(b, op), st = SavedTensor(tau_c, op), sp = SavedTensor(p, op),
         g, eps, mask_shape = mask.mask.defined() ? mask.mask.shape() : Shape{},
         mask_dtype = mask.mask.defined() ? mask.mask.dtype() : a.dtype()](const Tensor& dp,
                                                                          const NeedsGrad& needs) -> Grads {
          const Tensor pv = sp.unpack(), av = sa.unpack(), bv = sb.unpack(), tv = st.unpack();
          Tensor dd2 = softmax_grad(pv, dp);  // dS, turned into dD2 in place below
          Grads grads(needs.size());
          if (needs.size() > 3 && needs[3]) grads[3] = mask_grad(dd2, mask_shape, mask_dtype);  // before the in-place change
          dispatch_floating(pv.dtype(), "w2_attention", [&](auto tag) {
            using T = decltype(tag);
            const T* t = tv.data_ptr<T>();
            T* d = dd2.data_ptr<T>();
            const int64_t block_size = g.nq * g.nk;
            parallel_for(0, g.b * g.h, 1, [&](int64_t lo, int64_t hi) {
              for (int64_t block = lo; block < hi; ++block) {
                const T inv = static_cast<T>(1.0 / (static_cast<double>(t[block % g.h]) + eps));
                T* db = d + block * block_size;
                for (int64_t e = 0; e < block_size; ++e) db[e] = -db[e] * inv;  // dD2 = -dS / (tau + eps)
              }
            });
          });
          // BEGIN EXERCISE ex15-w2-scores
          // Row and column sums of dD2, shaped to broadcast against a and b.
          const Tensor row_sum = kernels::reduce(kernels::Reduce::Sum, dd2, {-1}, true);  // (B, H, Nq, 1)
          const Tensor col_sum = kernels::transpose(kernels::reduce(kernels::Reduce::Sum, dd2, {-2}, true), -2, -1);
          // dtau = sum dS * dS/dtau with dS/dtau = D2 / (tau + eps)^2. Expanding
          // D2 = |a|^2 + |b|^2 - 2 a.b turns the (Nq, Nk) sum into per-row ones:
          //   sum dD2 D2 = sum_m (|a_m|^2 rowsum_m - 2 a_m.(dD2 b)_m) + sum_n |b_n|^2 colsum_n
          // and dtau = -(that) / (tau + eps), since dD2 = -dS / (tau + eps).
          const std::vector<int64_t> all_but_heads{0, 2, 3};
          const auto two_x_s_minus_two_m = [](auto x, auto s, auto m) { return 2 * x * s - 2 * m; };
          Tensor from_rows, from_cols;
          {
            const Tensor dd2_b = kernels::matmul(dd2, bv);  // (B, H, Nq, da), freed at the end of this scope
            if (needs[0]) grads[0] = map_float(av, row_sum, dd2_b, two_x_s_minus_two_m);
            if (needs[2]) {
              from_rows = kernels::reduce(
                  kernels::Reduce::Sum,
                  map_float(av, row_sum, dd2_b, [](auto x, auto s, auto m) { return x * x * s - 2 * x * m; }),
                  all_but_heads, false);
            }
          }
          if (needs[1]) grads[1] = map_float(bv, col_sum, kernels::matmul(transposed(dd2), av), two_x_s_minus_two_m);
          if (needs[2]) {
            from_cols = kernels::reduce(kernels::Reduce::Sum, map_float(bv, col_sum, [](auto x, auto s) { return x * x * s; }),
                                        all_but_heads, false);
            grads[2] = map_float(from_rows, from_cols, tv, [eps](auto r, auto c, auto tau) { return -(r + c) / (tau + eps); });
          }
          // END EXERCISE ex15-w2-scores
          return grads;
        });
  }
  return p;
}
}  // namespace

Tensor w2_attention_probs(const Tensor& mu_q, const Tensor& mu_k, const Tensor& sigma_q, const Tensor& sigma_k,
                          const Tensor& tau, const ScoreMask& mask, double eps) {
  const char* op = "w2_attention";
  const Blocks g = check_qk(mu_q, mu_k, op);
  const int64_t dh = mu_q.size(3);
  const bool scalar = sigma_q.dim() == 3;
  const Shape want_q = scalar ? Shape{g.b, g.h, g.nq} : Shape{g.b, g.h, g.nq, dh};
  const Shape want_k = scalar ? Shape{g.b, g.h, g.nk} : Shape{g.b, g.h, g.nk, dh};
  RG_CHECK(sigma_q.shape() == want_q && sigma_k.shape() == want_k, op,
           "sigma_q {} and sigma_k {} must be {} and {} ({} sigma)", shape_str(sigma_q.shape()),
           shape_str(sigma_k.shape()), shape_str(want_q), shape_str(want_k), scalar ? "scalar" : "vector");
  // Augment: dh (s_q - s_k)^2 = (sqrt(dh) s_q - sqrt(dh) s_k)^2, one extra column.
  const Tensor sq = scalar ? unsqueeze(sigma_q, -1) * std::sqrt(static_cast<double>(dh)) : sigma_q;
  const Tensor sk = scalar ? unsqueeze(sigma_k, -1) * std::sqrt(static_cast<double>(dh)) : sigma_k;
  return distance_attention_probs(cat({mu_q, sq}, -1), cat({mu_k, sk}, -1), tau, mask, eps);
}

// ---- triple product: S = -scale det G (chapter 16 derives the backward) ---------------------
//
// qk and kr are recomputed in the backward (two GEMMs) rather than kept.

// The per-score part of the backward, for each (b, h) block, query i and key j:
// with dG = -scale dS, A and Bm in place of dS and the four row and column
// sums dqq, drr, drq (per query) and dkk (per key), zeros on entry.
template <typename T>
void plain::triple_score_grads(T* am, T* bm, const T* pqk, const T* pkr, const T* pqq, const T* prr, const T* prq,
                               const T* pkk, T* gqq, T* grr, T* grq, T* gkk, int64_t blocks, int64_t nq, int64_t nk,
                               T scale) {
  // BEGIN EXERCISE ex16-triple-scores
  for (int64_t block = 0; block < blocks; ++block) {
    for (int64_t i = 0; i < nq; ++i) {
      const int64_t qi = block * nq + i;  // this query's row
      const T qq = pqq[qi], rr = prr[qi], rq = prq[qi];
      for (int64_t j = 0; j < nk; ++j) {
        const int64_t e = qi * nk + j, kj = block * nk + j;
        const T dg = -scale * am[e];
        const T qk = pqk[e], kr = pkr[e], kk = pkk[kj];
        gqq[qi] += dg * (kk * rr - kr * kr);
        grr[qi] += dg * (qq * kk - qk * qk);
        grq[qi] += dg * (2 * qk * kr - 2 * kk * rq);
        gkk[kj] += dg * (qq * rr - rq * rq);
        am[e] = dg * (2 * kr * rq - 2 * rr * qk);
        bm[e] = dg * (2 * qk * rq - 2 * qq * kr);
      }
    }
  }
  // END EXERCISE ex16-triple-scores
}

namespace {
// The forward: P = softmax(S + mask) with S_ij = -scale det G(q_i, k_j, r_i),
// det G from the row norms, r.q, and the two GEMMs q k^T and r k^T.
Tensor triple_probs_forward(const Tensor& q, const Tensor& k, const Tensor& r, const Tensor& add,
                            const ScoreMask& mask, const Blocks& g, double scale, const char* op) {
  const Tensor qq = row_norms(q), rr = row_norms(r), kk = row_norms(k);
  const Tensor rq = kernels::reduce(kernels::Reduce::Sum, map_float(r, q, [](auto x, auto y) { return x * y; }), {-1}, false);
  Tensor p = kernels::matmul(q, transposed(k));       // qk, becomes P in place
  const Tensor kr = kernels::matmul(r, transposed(k));  // (B, H, Nq, Nk), freed after the forward
  dispatch_floating(q.dtype(), op, [&](auto tag) {
    using T = decltype(tag);
    const T* pqq = qq.data_ptr<T>();
    const T* prr = rr.data_ptr<T>();
    const T* prq = rq.data_ptr<T>();
    const T* pkk = kk.data_ptr<T>();
    const T* pkr = kr.data_ptr<T>();
    const T s = static_cast<T>(scale);
    // row holds q_i.k_j for every key j on entry, the score S_ij on exit.
    p = scores_to_probs<T>(p, g, add, mask, [&](int64_t bi, int64_t h, int64_t i, T* row) {
      // BEGIN EXERCISE ex16-triple-scores
      const int64_t qi = (bi * g.h + h) * g.nq + i;
      const T a = pqq[qi], c = prr[qi], e = prq[qi];
      const T* kkb = pkk + (bi * g.h + h) * g.nk;
      const T* krr = pkr + qi * g.nk;
      for (int64_t j = 0; j < g.nk; ++j) {
        const T qk = row[j], krj = krr[j], kkj = kkb[j];
        const T det = a * kkj * c + 2 * qk * krj * e - a * krj * krj - kkj * e * e - c * qk * qk;
        row[j] = -det * s;
      }
      // END EXERCISE ex16-triple-scores
    });
  });
  return p;
}
}  // namespace

Tensor triple_attention_probs(const Tensor& q_in, const Tensor& k_in, const Tensor& r_in, double scale,
                              const ScoreMask& mask) {
  const char* op = "triple_attention";
  const Blocks g = check_qk(q_in, k_in, op);
  RG_CHECK(r_in.shape() == q_in.shape() && r_in.dtype() == q_in.dtype(), op, "r {} must match q {}",
           shape_str(r_in.shape()), shape_str(q_in.shape()));
  const Tensor q = kernels::contiguous(q_in), k = kernels::contiguous(k_in), r = kernels::contiguous(r_in);
  const Tensor add = additive_mask(mask, g, q.dtype(), op);
  Tensor p = triple_probs_forward(q, k, r, add, mask, g, scale, op);
  const std::vector<Tensor> inputs = node_inputs({q_in, k_in, r_in}, mask);
  if (needs_grad(inputs)) {
    attach_node(
        p, op, inputs,
        [sq = SavedTensor(q, op), sk = SavedTensor(k, op), sr = SavedTensor(r, op), sp = SavedTensor(p, op), g, scale,
         mask_shape = mask.mask.defined() ? mask.mask.shape() : Shape{},
         mask_dtype = mask.mask.defined() ? mask.mask.dtype() : q.dtype()](const Tensor& dp,
                                                                          const NeedsGrad& needs) -> Grads {
          const Tensor qv = sq.unpack(), kv = sk.unpack(), rv = sr.unpack();
          Tensor a_mat = softmax_grad(sp.unpack(), dp);          // dS, becomes A in place
          Grads grads(needs.size());
          if (needs.size() > 3 && needs[3]) grads[3] = mask_grad(a_mat, mask_shape, mask_dtype);  // before the in-place change
          const Tensor qk = kernels::matmul(qv, transposed(kv));  // recomputed
          const Tensor kr = kernels::matmul(rv, transposed(kv));
          Tensor b_mat = Tensor::empty(a_mat.shape(), a_mat.dtype());
          const Tensor qq = row_norms(qv), rr = row_norms(rv), kk = row_norms(kv);
          const Tensor rq =
              kernels::reduce(kernels::Reduce::Sum, map_float(rv, qv, [](auto x, auto y) { return x * y; }), {-1}, false);
          Tensor dqq = Tensor::zeros_of(qq.shape(), qq.dtype()), drr = Tensor::zeros_of(qq.shape(), qq.dtype());
          Tensor drq = Tensor::zeros_of(qq.shape(), qq.dtype()), dkk = Tensor::zeros_of(kk.shape(), kk.dtype());
          dispatch_floating(qv.dtype(), "triple_attention", [&](auto tag) {
            using T = decltype(tag);
            triple_score_grads<T>(a_mat.data_ptr<T>(), b_mat.data_ptr<T>(), qk.data_ptr<T>(), kr.data_ptr<T>(),
                                  qq.data_ptr<T>(), rr.data_ptr<T>(), rq.data_ptr<T>(), kk.data_ptr<T>(),
                                  dqq.data_ptr<T>(), drr.data_ptr<T>(), drq.data_ptr<T>(), dkk.data_ptr<T>(), g.b * g.h,
                                  g.nq, g.nk, static_cast<T>(scale));
          });
          // BEGIN EXERCISE ex16-triple-scores
          const Tensor dqq_c = kernels::unsqueeze(dqq, -1), drr_c = kernels::unsqueeze(drr, -1);
          const Tensor drq_c = kernels::unsqueeze(drq, -1), dkk_c = kernels::unsqueeze(dkk, -1);
          // dq = A k + 2 dqq q + drq r
          if (needs[0]) {
            grads[0] = map_float(kernels::matmul(a_mat, kv), map_float(qv, dqq_c, [](auto x, auto d) { return 2 * d * x; }),
                                 map_float(rv, drq_c, [](auto x, auto d) { return d * x; }),
                                 [](auto m, auto u, auto w) { return m + u + w; });
          }
          // dk = A^T q + Bm^T r + 2 dkk k
          if (needs[1]) {
            grads[1] = map_float(kernels::matmul(transposed(a_mat), qv), kernels::matmul(transposed(b_mat), rv),
                                 map_float(kv, dkk_c, [](auto x, auto d) { return 2 * d * x; }),
                                 [](auto m, auto u, auto w) { return m + u + w; });
          }
          // dr = Bm k + 2 drr r + drq q
          if (needs[2]) {
            grads[2] = map_float(kernels::matmul(b_mat, kv), map_float(rv, drr_c, [](auto x, auto d) { return 2 * d * x; }),
                                 map_float(qv, drq_c, [](auto x, auto d) { return d * x; }),
                                 [](auto m, auto u, auto w) { return m + u + w; });
          }
          // END EXERCISE ex16-triple-scores
          return grads;
        });
  }
  return p;
}

}  // namespace ropegrad::nn
