// Tiled attention with an online softmax: O = softmax(S + mask) v without the
// (B, H, Nq, Nk) matrix. What it computes and keeps: see attention_tiled.h.
//
// Forward, for one (batch, head, query tile I) — one task of the thread pool:
//   m_i = -inf, l_i = 0, acc_i = 0                    (running max, sum, output)
//   for each key tile J:
//     S = scores(I, J) + mask                          (a BLAS GEMM on the tile)
//     m_new = max(m_i, max_j S_ij)
//     P_ij = exp(S_ij - m_new),  alpha = exp(m_i - m_new)
//     l_i = alpha l_i + sum_j P_ij,  acc_i = alpha acc_i + P v_J  (GEMM), m_i = m_new
//   O_i = acc_i / l_i,  L_i = m_i + log l_i            (the row's logsumexp)
// Rescaling by alpha makes every term exp(S_ij - m_final) in the end, so O is
// exactly the softmax-weighted sum. A row that never sees an allowed key keeps
// m = -inf, l = 0: O_i = 0 and L_i = -inf.
//
// Backward: with P_ij = exp(S_ij - L_i) recomputed tile by tile from L, and
//   dv_J += P^T dO_I,   dP = dO_I v_J^T,
//   dS = P * (dP - D_i)   with D_i = sum_j P_ij dP_ij = sum_j P_ij (dO_i . v_j) = dO_i . O_i,
// so the softmax rule needs only the per-row D_i = rowsum(dO * O), computed
// once from O — never a full row of P. Each variant then turns the tile of dS
// into gradients of its inputs with GEMMs (the Scores policies below, with the
// same derivations as nn/attention_scores.cpp).
//
// Threads: the forward splits over (batch, head, query tile). The backward
// splits over (batch, head) only: dk and dv sum over every query tile, so one
// task walks a head's query tiles in order — no atomics, no partial copies,
// and the same bits on any number of threads.
//
// Crossover (kTiledAttentionMinKeys, kTripleTiledMinKeys in the header): bench/attention_crossover.py
// times forward + backward of each attention module (D=128, H=4 so dh=32,
// B=1, causal) single-threaded on both paths; docs/appendix-c-performance.md
// has the table.
#include "nn/fast/attention_tiled.h"

#include <cblas.h>

#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstdlib>
#include <limits>
#include <string>
#include <vector>

#include "tensor/elementwise.h"
#include "tensor/fast_math.h"
#include "tensor/parallel.h"
#include "tensor/simd.h"

namespace ropegrad::nn {

namespace {

// ---- small helpers --------------------------------------------------------------------------

// Always inlined, so the loops over a tile row become SIMD code.
template <typename T>
[[gnu::always_inline]] inline T exp_of(T x) {
  if constexpr (std::is_same_v<T, float>) {
    return fast_exp(x);  // as the materialised kernels
  } else {
    return std::exp(x);
  }
}

// C = alpha op(A) op(B) + beta C on row-major tiles (one single-threaded BLAS call).
template <typename T>
void gemm(bool trans_a, bool trans_b, int64_t m, int64_t n, int64_t k, T alpha, const T* a, int64_t lda, const T* b,
          int64_t ldb, T beta, T* c, int64_t ldc) {
  if (m == 0 || n == 0) return;
  kernels::record_gemm({trans_a, trans_b, m, n, k, 1, beta != T(0), dtype_of<T>()});
  const CBLAS_TRANSPOSE ta = trans_a ? CblasTrans : CblasNoTrans, tb = trans_b ? CblasTrans : CblasNoTrans;
  if constexpr (std::is_same_v<T, float>) {
    cblas_sgemm(CblasRowMajor, ta, tb, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc);
  } else {
    cblas_dgemm(CblasRowMajor, ta, tb, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc);
  }
}

struct Geometry {
  int64_t b, h, nq, nk, dv;
  int64_t blocks() const { return b * h; }
};

// The mask as an additive float tensor broadcast (stride 0) to (B, H, Nq, Nk).
Tensor additive_mask(const ScoreMask& m, const Geometry& g, DType dtype, const char* op) {
  if (!m.mask.defined()) return Tensor();
  RG_CHECK(!m.mask.requires_grad(), op,
           "a mask that requires grad needs the materialised kernels (nn/attention_scores.h)");
  const Shape scores{g.b, g.h, g.nq, g.nk};
  RG_CHECK(broadcast_shapes(scores, m.mask.shape(), op) == scores, op,
           "mask of shape {} does not broadcast to the scores' shape {} (B, H, Nq, Nk)", shape_str(m.mask.shape()),
           shape_str(scores));
  Tensor add;
  if (m.mask.dtype() == DType::Bool) {
    add = kernels::where(m.mask, zeros({}, dtype), full({}, -std::numeric_limits<double>::infinity(), dtype));
  } else {
    RG_CHECK(m.mask.is_floating_point(), op, "mask must be bool or float, got {}", dtype_name(m.mask.dtype()));
    add = kernels::to(m.mask, dtype);
  }
  return kernels::expand(add, scores);
}

// What a tile of scores may see: the additive mask (read through its
// broadcast strides) and causality.
template <typename T>
struct TileMask {
  const T* base = nullptr;
  int64_t s0 = 0, s1 = 0, s2 = 0, s3 = 0;
  bool causal = false;
  int64_t offset = 0;
  int64_t nk = 0;

  TileMask(const Tensor& add, const ScoreMask& m, int64_t nk_) : causal(m.causal), offset(m.causal_offset), nk(nk_) {
    if (!add.defined()) return;
    base = add.data_ptr<T>();
    s0 = add.stride(0), s1 = add.stride(1), s2 = add.stride(2), s3 = add.stride(3);
  }
  // Keys [0, end) may be seen by some query row of [i0, i0 + ni).
  int64_t key_end(int64_t i0, int64_t ni) const {
    return causal ? std::clamp<int64_t>(i0 + ni - 1 + offset + 1, 0, nk) : nk;
  }
  // Adds the mask to row i's scores for keys [j0, j0 + nj); returns how many
  // of them causality allows (a prefix).
  int64_t apply(int64_t b, int64_t h, int64_t i, int64_t j0, int64_t nj, T* row) const {
    if (base != nullptr) {
      const T* mr = base + b * s0 + h * s1 + i * s2 + j0 * s3;
      for (int64_t c = 0; c < nj; ++c) row[c] += mr[c * s3];
    }
    return causal ? std::clamp<int64_t>(i + offset + 1 - j0, 0, nj) : nj;
  }
};

// ---- the shared forward and backward ------------------------------------------------------------
//
// A Scores policy knows one variant's score and its backward. For one (b, h)
// block and a tile of query rows [i0, i0 + ni) x key rows [j0, j0 + nj):
//   scores(block, i0, ni, j0, nj, s, work): raw scores (no mask) into s (ni x nj)
//   backward(block, i0, ni, j0, nj, s, ds, work): given the raw scores s and
//     dS of the tile, adds the tile's share to the gradients of the inputs
//   finish(block): per-block work after every tile (the backward only)
// `work` is the policy's own scratch of work_size(bq, bk) elements per task.

template <typename T, typename Scores>
void tiled_forward(const Scores& scores, const Geometry& g, const T* v, const TileMask<T>& mask, TileSizes tiles,
                   T* out, T* lse) {
  const int64_t bq = tiles.query, bk = tiles.key;
  const int64_t q_tiles = (g.nq + bq - 1) / bq;
  const T neg_inf = -std::numeric_limits<T>::infinity();
  parallel_for(0, g.blocks() * q_tiles, 1, [&](int64_t lo, int64_t hi) {
    // Compiled for AVX2 too (tensor/simd.h: the same bits either way).
    simd::run_best([&] {
      std::vector<T> s(bq * bk), row_max(bq), row_sum(bq), work(scores.work_size(bq, bk));
      for (int64_t task = lo; task < hi; ++task) {
        const int64_t block = task / q_tiles, bi = block / g.h, h = block % g.h;
        const int64_t i0 = (task % q_tiles) * bq, ni = std::min(bq, g.nq - i0);
        T* o = out + (block * g.nq + i0) * g.dv;  // the accumulator is the output itself
        std::fill(o, o + ni * g.dv, T(0));
        std::fill(row_max.begin(), row_max.end(), neg_inf);
        std::fill(row_sum.begin(), row_sum.end(), T(0));
        const T* vb = v + block * g.nk * g.dv;
        const int64_t key_end = mask.key_end(i0, ni);
        for (int64_t j0 = 0; j0 < key_end; j0 += bk) {
          const int64_t nj = std::min(bk, key_end - j0);
          scores.scores(block, i0, ni, j0, nj, s.data(), work.data());
          for (int64_t r = 0; r < ni; ++r) {
            T* sr = s.data() + r * nj;
            const int64_t allowed = mask.apply(bi, h, i0 + r, j0, nj, sr);
            const T tile_max = max_of(sr, allowed);
            // NaN sticks (std::max would drop it for the row's earlier max): a NaN score gives NaN out.
            const T m_new = tile_max != tile_max ? tile_max : std::max(row_max[r], tile_max);
            if (m_new == neg_inf) {  // nothing allowed yet: this tile adds nothing
              std::fill(sr, sr + nj, T(0));
              continue;
            }
            const T alpha = exp_of(row_max[r] - m_new);  // 0 for the first allowed tile
            for (int64_t c = 0; c < allowed; ++c) sr[c] = exp_of(sr[c] - m_new);
            const T sum = sum_of(sr, allowed);  // tensor/fast_math.h
            std::fill(sr + allowed, sr + nj, T(0));
            row_sum[r] = alpha * row_sum[r] + sum;
            row_max[r] = m_new;
            if (alpha != T(1)) {
              T* orow = o + r * g.dv;
              for (int64_t c = 0; c < g.dv; ++c) orow[c] *= alpha;
            }
          }
          gemm<T>(false, false, ni, g.dv, nj, T(1), s.data(), nj, vb + j0 * g.dv, g.dv, T(1), o, g.dv);  // acc += P v_J
        }
        for (int64_t r = 0; r < ni; ++r) {
          T* orow = o + r * g.dv;
          T* l = lse + block * g.nq + i0 + r;
          if (row_sum[r] > 0 || row_sum[r] != row_sum[r]) {  // a NaN sum (a NaN score) gives NaN, not zeros
            const T inv = T(1) / row_sum[r];
            for (int64_t c = 0; c < g.dv; ++c) orow[c] *= inv;
            *l = row_max[r] + std::log(row_sum[r]);
          } else {  // no allowed key: output 0 (acc is 0 already), L = -inf
            std::fill(orow, orow + g.dv, T(0));
            *l = neg_inf;
          }
        }
      }
    });
  });
}

template <typename T, typename Scores>
void tiled_backward(const Scores& scores, const Geometry& g, const T* v, const T* out, const T* lse, const T* dout,
                    const TileMask<T>& mask, TileSizes tiles, T* dv) {
  const int64_t bq = tiles.query, bk = tiles.key;
  const T neg_inf = -std::numeric_limits<T>::infinity();
  parallel_for(0, g.blocks(), 1, [&](int64_t lo, int64_t hi) {
    // Compiled for AVX2 too (tensor/simd.h: the same bits either way).
    simd::run_best([&] {
      std::vector<T> s(bq * bk), ds(bq * bk), dp(bq * bk), d_row(bq), work(scores.work_size(bq, bk));
      for (int64_t block = lo; block < hi; ++block) {
        const int64_t bi = block / g.h, h = block % g.h;
        const T* vb = v + block * g.nk * g.dv;
        T* dvb = dv + block * g.nk * g.dv;
        for (int64_t i0 = 0; i0 < g.nq; i0 += bq) {
          const int64_t ni = std::min(bq, g.nq - i0);
          const T* o = out + (block * g.nq + i0) * g.dv;
          const T* d_o = dout + (block * g.nq + i0) * g.dv;
          const T* l = lse + block * g.nq + i0;
          for (int64_t r = 0; r < ni; ++r) {  // D_i = dO_i . O_i
            T dot = 0;
            for (int64_t c = 0; c < g.dv; ++c) dot += d_o[r * g.dv + c] * o[r * g.dv + c];
            d_row[r] = dot;
          }
          const int64_t key_end = mask.key_end(i0, ni);
          for (int64_t j0 = 0; j0 < key_end; j0 += bk) {
            const int64_t nj = std::min(bk, key_end - j0);
            scores.scores(block, i0, ni, j0, nj, s.data(), work.data());
            // P = exp(S + mask - L) into ds (0 where not allowed or the row has no key)
            for (int64_t r = 0; r < ni; ++r) {
              const T* sr = s.data() + r * nj;
              T* pr = ds.data() + r * nj;
              std::copy(sr, sr + nj, pr);
              const int64_t allowed = mask.apply(bi, h, i0 + r, j0, nj, pr);
              const T lse_r = l[r];  // a local: read through l, the compiler would reload it after each store
              const int64_t visible = lse_r == neg_inf ? 0 : allowed;
              for (int64_t c = 0; c < visible; ++c) pr[c] = exp_of(pr[c] - lse_r);
              std::fill(pr + visible, pr + nj, T(0));
            }
            // dv_J += P^T dO_I
            gemm<T>(true, false, nj, g.dv, ni, T(1), ds.data(), nj, d_o, g.dv, T(1), dvb + j0 * g.dv, g.dv);
            // dP = dO_I v_J^T, then dS = P * (dP - D), in P's buffer
            gemm<T>(false, true, ni, nj, g.dv, T(1), d_o, g.dv, vb + j0 * g.dv, g.dv, T(0), dp.data(), nj);
            for (int64_t r = 0; r < ni; ++r) {
              T* dsr = ds.data() + r * nj;
              const T* dpr = dp.data() + r * nj;
              const T d_r = d_row[r];
              for (int64_t c = 0; c < nj; ++c) dsr[c] *= dpr[c] - d_r;
            }
            scores.backward(block, i0, ni, j0, nj, s.data(), ds.data(), work.data());
          }
        }
        scores.finish(block);
      }
    });
  });
}


// ---- the three score policies ---------------------------------------------------------------
//
// Pointers are to contiguous (B, H, N, d) tensors; block = b * H + h.

// x_n . y_n for each of `rows` rows of length d.
template <typename T>
void row_dots(const T* x, const T* y, int64_t rows, int64_t d, T* out) {
  for (int64_t n = 0; n < rows; ++n) {
    T sum = 0;
    for (int64_t c = 0; c < d; ++c) sum += x[n * d + c] * y[n * d + c];
    out[n] = sum;
  }
}

// Standard: S = scale q k^T.   dq_I += scale dS k_J,  dk_J += scale dS^T q_I.
template <typename T>
struct DotScores {
  const T *q, *k;
  int64_t nq, nk, d;
  T scale;
  T *dq = nullptr, *dk = nullptr;  // the backward's outputs

  int64_t work_size(int64_t, int64_t) const { return 0; }
  const T* q_rows(int64_t block, int64_t i0) const { return q + (block * nq + i0) * d; }
  const T* k_rows(int64_t block, int64_t j0) const { return k + (block * nk + j0) * d; }

  void scores(int64_t block, int64_t i0, int64_t ni, int64_t j0, int64_t nj, T* s, T*) const {
    gemm<T>(false, true, ni, nj, d, scale, q_rows(block, i0), d, k_rows(block, j0), d, T(0), s, nj);
  }
  void backward(int64_t block, int64_t i0, int64_t ni, int64_t j0, int64_t nj, const T*, T* ds, T*) const {
    gemm<T>(false, false, ni, d, nj, scale, ds, nj, k_rows(block, j0), d, T(1), dq + (block * nq + i0) * d, d);
    gemm<T>(true, false, nj, d, ni, scale, ds, nj, q_rows(block, i0), d, T(1), dk + (block * nk + j0) * d, d);
  }
  void finish(int64_t) const {}
};

// W2 as a squared distance of augmented vectors (see attention_scores.cpp):
//   S = -(|a_i|^2 + |b_j|^2 - 2 a_i.b_j) / (tau_h + eps) = -D2 / (tau_h + eps).
// With inv = 1 / (tau_h + eps) and dD2 = -inv dS:
//   da_I += 2 a_i rowsum_i(dD2) - 2 dD2 b_J,   db_J += 2 b_j colsum_j(dD2) - 2 dD2^T a_I,
//   dtau_h += sum dS dS/dtau = sum dS (-S inv)       (S the raw score, without the mask).
template <typename T>
struct DistanceScores {
  const T *a, *b, *na, *nb;  // na (B, H, Nq), nb (B, H, Nk): squared norms
  std::vector<T> inv;        // (H)
  int64_t h, nq, nk, d;
  T *da = nullptr, *db = nullptr, *dtau = nullptr;  // dtau: one sum per block

  int64_t work_size(int64_t bq, int64_t bk) const { return bq + bk; }  // row and column sums of dD2
  const T* a_rows(int64_t block, int64_t i0) const { return a + (block * nq + i0) * d; }
  const T* b_rows(int64_t block, int64_t j0) const { return b + (block * nk + j0) * d; }

  void scores(int64_t block, int64_t i0, int64_t ni, int64_t j0, int64_t nj, T* s, T*) const {
    gemm<T>(false, true, ni, nj, d, T(1), a_rows(block, i0), d, b_rows(block, j0), d, T(0), s, nj);  // a.b
    const T iv = inv[block % h];
    const T* nai = na + block * nq + i0;
    const T* nbj = nb + block * nk + j0;
    for (int64_t r = 0; r < ni; ++r) {
      for (int64_t c = 0; c < nj; ++c) s[r * nj + c] = -(nai[r] + nbj[c] - 2 * s[r * nj + c]) * iv;
    }
  }
  void backward(int64_t block, int64_t i0, int64_t ni, int64_t j0, int64_t nj, const T* s, T* ds, T* work) const {
    const T iv = inv[block % h];
    T* row_sum = work;
    T* col_sum = work + ni;
    std::fill(col_sum, col_sum + nj, T(0));
    T tau_sum = 0;
    for (int64_t r = 0; r < ni; ++r) {
      // The two running sums first, in c order (chains of dependent adds),
      // then the rest, where no c depends on another, so it vectorises.
      T* ds_r = ds + r * nj;
      const T* s_r = s + r * nj;
      T rs = 0;
      for (int64_t c = 0; c < nj; ++c) {
        tau_sum += ds_r[c] * -s_r[c];
        rs += ds_r[c] * -iv;  // dD2, as stored below
      }
      row_sum[r] = rs;
      for (int64_t c = 0; c < nj; ++c) {
        ds_r[c] *= -iv;  // now dD2
        col_sum[c] += ds_r[c];
      }
    }
    dtau[block] += tau_sum * iv;
    T* da_i = da + (block * nq + i0) * d;
    T* db_j = db + (block * nk + j0) * d;
    const T* a_i = a_rows(block, i0);
    const T* b_j = b_rows(block, j0);
    gemm<T>(false, false, ni, d, nj, T(-2), ds, nj, b_j, d, T(1), da_i, d);
    gemm<T>(true, false, nj, d, ni, T(-2), ds, nj, a_i, d, T(1), db_j, d);
    for (int64_t r = 0; r < ni; ++r) {
      for (int64_t c = 0; c < d; ++c) da_i[r * d + c] += 2 * row_sum[r] * a_i[r * d + c];
    }
    for (int64_t n = 0; n < nj; ++n) {
      for (int64_t c = 0; c < d; ++c) db_j[n * d + c] += 2 * col_sum[n] * b_j[n * d + c];
    }
  }
  void finish(int64_t) const {}
};

// Triple product: S = -scale det G with qk = q_i.k_j and kr = r_i.k_j from two
// GEMMs per tile and the per-row qq, rr, rq, kk. With dG = -scale dS
// (attention_scores.cpp derives these):
//   A  = dG (2 kr rq - 2 rr qk),   Bm = dG (2 qk rq - 2 qq kr),
//   dqq_i += sum_j dG (kk rr - kr^2),  drr_i += sum_j dG (qq kk - qk^2),
//   drq_i += sum_j dG (2 qk kr - 2 kk rq),  dkk_j += sum_i dG (qq rr - rq^2),
//   dq_I += A k_J,  dr_I += Bm k_J,  dk_J += A^T q_I + Bm^T r_I,
// and once per block (finish): dq += 2 dqq q + drq r, dr += 2 drr r + drq q, dk += 2 dkk k.
template <typename T>
struct TripleScores {
  const T *q, *k, *r, *qq, *rr, *rq, *kk;
  int64_t nq, nk, d;
  T scale;
  T *dq = nullptr, *dk = nullptr, *dr = nullptr;
  T *dqq = nullptr, *drr = nullptr, *drq = nullptr, *dkk = nullptr;  // (B, H, N), zeroed

  int64_t work_size(int64_t bq, int64_t bk) const { return 2 * bq * bk; }  // the qk and kr tiles

  void scores(int64_t block, int64_t i0, int64_t ni, int64_t j0, int64_t nj, T* s, T* work) const {
    T* qk = work;
    T* kr = work + ni * nj;
    const T* k_j = k + (block * nk + j0) * d;
    gemm<T>(false, true, ni, nj, d, T(1), q + (block * nq + i0) * d, d, k_j, d, T(0), qk, nj);
    gemm<T>(false, true, ni, nj, d, T(1), r + (block * nq + i0) * d, d, k_j, d, T(0), kr, nj);
    for (int64_t m = 0; m < ni; ++m) {
      const int64_t qi = block * nq + i0 + m;
      const T a = qq[qi], c = rr[qi], e = rq[qi];
      for (int64_t n = 0; n < nj; ++n) {
        const int64_t at = m * nj + n;
        const T qkv = qk[at], krv = kr[at], kkj = kk[block * nk + j0 + n];
        const T det = a * kkj * c + 2 * qkv * krv * e - a * krv * krv - kkj * e * e - c * qkv * qkv;
        s[at] = -det * scale;
      }
    }
  }
  void backward(int64_t block, int64_t i0, int64_t ni, int64_t j0, int64_t nj, const T*, T* ds, T* work) const {
    const T* qk = work;
    T* kr = work + ni * nj;  // becomes Bm in place
    for (int64_t m = 0; m < ni; ++m) {
      const int64_t qi = block * nq + i0 + m;
      const T qqi = qq[qi], rri = rr[qi], rqi = rq[qi];
      // The row sums first, in n order (a chain of dependent adds), then the
      // rest, where no n depends on another, so it vectorises.
      T sum_qq = 0, sum_rr = 0, sum_rq = 0;
      for (int64_t n = 0; n < nj; ++n) {
        const int64_t at = m * nj + n, kj = block * nk + j0 + n;
        const T dg = -scale * ds[at];
        const T qkv = qk[at], krv = kr[at], kkj = kk[kj];
        sum_qq += dg * (kkj * rri - krv * krv);
        sum_rr += dg * (qqi * kkj - qkv * qkv);
        sum_rq += dg * (2 * qkv * krv - 2 * kkj * rqi);
      }
      T* a_row = ds + m * nj;  // dS on entry, A on exit
      T* b_row = kr + m * nj;  // kr on entry, Bm on exit
      const T* qk_row = qk + m * nj;
      T* dkk_j = dkk + block * nk + j0;
      const T s = scale;
      for (int64_t n = 0; n < nj; ++n) {
        const T dg = -s * a_row[n];
        const T qkv = qk_row[n], krv = b_row[n];
        a_row[n] = dg * (2 * krv * rqi - 2 * rri * qkv);
        b_row[n] = dg * (2 * qkv * rqi - 2 * qqi * krv);
        dkk_j[n] += dg * (qqi * rri - rqi * rqi);
      }
      dqq[qi] += sum_qq;
      drr[qi] += sum_rr;
      drq[qi] += sum_rq;
    }
    const T* k_j = k + (block * nk + j0) * d;
    const int64_t qo = (block * nq + i0) * d, ko = (block * nk + j0) * d;
    gemm<T>(false, false, ni, d, nj, T(1), ds, nj, k_j, d, T(1), dq + qo, d);  // A k_J
    gemm<T>(false, false, ni, d, nj, T(1), kr, nj, k_j, d, T(1), dr + qo, d);  // Bm k_J
    gemm<T>(true, false, nj, d, ni, T(1), ds, nj, q + qo, d, T(1), dk + ko, d);  // A^T q_I
    gemm<T>(true, false, nj, d, ni, T(1), kr, nj, r + qo, d, T(1), dk + ko, d);  // Bm^T r_I
  }
  void finish(int64_t block) const {
    for (int64_t i = block * nq; i < (block + 1) * nq; ++i) {
      for (int64_t c = 0; c < d; ++c) {
        const T qv = q[i * d + c], rv = r[i * d + c];
        dq[i * d + c] += 2 * dqq[i] * qv + drq[i] * rv;
        dr[i * d + c] += 2 * drr[i] * rv + drq[i] * qv;
      }
    }
    for (int64_t j = block * nk; j < (block + 1) * nk; ++j) {
      for (int64_t c = 0; c < d; ++c) dk[j * d + c] += 2 * dkk[j] * k[j * d + c];
    }
  }
};

// ---- entry points ---------------------------------------------------------------------------

Geometry check_inputs(const Tensor& q, const Tensor& k, const Tensor& v, TileSizes tiles, const char* op) {
  RG_CHECK(q.dim() == 4 && k.dim() == 4 && v.dim() == 4, op,
           "expected (B, H, N, d) inputs, got q {}, k {} and v {}", shape_str(q.shape()), shape_str(k.shape()),
           shape_str(v.shape()));
  RG_CHECK(q.size(0) == k.size(0) && q.size(1) == k.size(1) && q.size(3) == k.size(3), op,
           "q {} and k {} must agree in B, H and dh", shape_str(q.shape()), shape_str(k.shape()));
  RG_CHECK(v.size(0) == k.size(0) && v.size(1) == k.size(1) && v.size(2) == k.size(2), op,
           "v {} must be (B, H, Nk, dv) for k {}", shape_str(v.shape()), shape_str(k.shape()));
  RG_CHECK(q.dtype() == k.dtype() && v.dtype() == q.dtype() && q.is_floating_point(), op,
           "q, k and v must share a float dtype, got {}, {} and {}", dtype_name(q.dtype()), dtype_name(k.dtype()),
           dtype_name(v.dtype()));
  RG_CHECK(tiles.query >= 1 && tiles.key >= 1, op, "tile sizes must be positive, got {} x {}", tiles.query, tiles.key);
  return {q.size(0), q.size(1), q.size(2), k.size(2), v.size(3)};
}

// Runs `make_scores(tag)`'s forward: returns O (B, H, Nq, dv), fills lse (B, H, Nq).
template <typename MakeScores>
Tensor forward_output(const char* op, const Geometry& g, const Tensor& v, const Tensor& add, const ScoreMask& m,
                      TileSizes tiles, Tensor& lse, MakeScores make_scores) {
  Tensor out = Tensor::empty({g.b, g.h, g.nq, g.dv}, v.dtype());
  lse = Tensor::empty({g.b, g.h, g.nq}, v.dtype());
  kernels::use_single_threaded_blas();  // our pool runs the tiles
  dispatch_floating(v.dtype(), op, [&](auto tag) {
    using T = decltype(tag);
    const auto scores = make_scores(tag);
    tiled_forward<T>(scores, g, v.data_ptr<T>(), TileMask<T>(add, m, g.nk), tiles, out.data_ptr<T>(),
                     lse.data_ptr<T>());
  });
  return out;
}

// The shared backward: returns dv; the policy from make_scores(tag) writes
// the other gradients into the buffers it points to.
template <typename MakeScores>
Tensor backward_dv(const char* op, const Geometry& g, const Tensor& v, const Tensor& out, const Tensor& lse,
                   const Tensor& dout, const Tensor& add, const ScoreMask& m, TileSizes tiles, MakeScores make_scores) {
  const Tensor d_o = kernels::contiguous(dout);
  Tensor dv = Tensor::zeros_of(v.shape(), v.dtype());
  kernels::use_single_threaded_blas();  // our pool runs the tiles
  dispatch_floating(v.dtype(), op, [&](auto tag) {
    using T = decltype(tag);
    const auto scores = make_scores(tag);
    tiled_backward<T>(scores, g, v.data_ptr<T>(), out.data_ptr<T>(), lse.data_ptr<T>(), d_o.data_ptr<T>(),
                      TileMask<T>(add, m, g.nk), tiles, dv.data_ptr<T>());
  });
  return dv;
}

// Squared norms (or dots) of rows: (B, H, N, d) x2 -> (B, H, N).
Tensor rows_dot(const Tensor& x, const Tensor& y) {
  Tensor out = Tensor::empty({x.size(0), x.size(1), x.size(2)}, x.dtype());
  dispatch_floating(x.dtype(), "attention_tiled", [&](auto tag) {
    using T = decltype(tag);
    row_dots<T>(x.data_ptr<T>(), y.data_ptr<T>(), x.size(0) * x.size(1) * x.size(2), x.size(3), out.data_ptr<T>());
  });
  return out;
}

template <typename T>
T* ptr(Tensor& t) {
  return t.data_ptr<T>();
}

Tensor distance_attention_tiled(const Tensor& a_in, const Tensor& b_in, const Tensor& tau, const Tensor& v_in,
                                const ScoreMask& mask, double eps, TileSizes tiles) {
  const char* op = "w2_attention_tiled";
  const Geometry g = check_inputs(a_in, b_in, v_in, tiles, op);
  RG_CHECK(tau.dim() == 1 && tau.size(0) == g.h && tau.dtype() == a_in.dtype(), op,
           "tau must be ({}) of dtype {}, got shape {} of {}", g.h, dtype_name(a_in.dtype()), shape_str(tau.shape()),
           dtype_name(tau.dtype()));
  const Tensor a = kernels::contiguous(a_in), b = kernels::contiguous(b_in), v = kernels::contiguous(v_in);
  const Tensor tau_c = kernels::contiguous(tau);
  const Tensor add = additive_mask(mask, g, a.dtype(), op);
  const ScoreMask causal{Tensor(), mask.causal, mask.causal_offset};  // what the closure keeps of the mask
  // 1 / (tau + eps) per head, checked positive as in w2_attention_probs.
  const auto inverse_temperatures = [eps, op](const Tensor& t) {
    const std::vector<double> tv = t.to_vector<double>();
    std::vector<double> inv;
    for (size_t h = 0; h < tv.size(); ++h) {
      RG_CHECK(tv[h] > 0 && std::isfinite(tv[h]), op, "temperature tau[{}] = {} must be positive and finite", h, tv[h]);
      inv.push_back(1.0 / (tv[h] + eps));
    }
    return inv;
  };
  const std::vector<double> inv = inverse_temperatures(tau_c);
  // make(tensors) gives a function of the dtype tag that builds the policy over
  // those tensors' data. It refers to the tensors (and to inv in this closure),
  // so it is used only while they live: in the forward below, and in the
  // backward on its own unpacked tensors (the node keeps a copy of make).
  const auto make = [g, inv](const Tensor& a, const Tensor& b, const Tensor& na, const Tensor& nb) {
    return [&, g](auto tag) {
      using T = decltype(tag);
      return DistanceScores<T>{a.data_ptr<T>(), b.data_ptr<T>(), na.data_ptr<T>(), nb.data_ptr<T>(),
                               std::vector<T>(inv.begin(), inv.end()), g.h, g.nq, g.nk, a.size(3)};
    };
  };
  Tensor lse;
  const Tensor na = rows_dot(a, a), nb = rows_dot(b, b);
  Tensor out = forward_output(op, g, v, add, causal, tiles, lse, make(a, b, na, nb));
  const std::vector<Tensor> inputs{a_in, b_in, tau, v_in};
  if (needs_grad(inputs)) {
    attach_node(out, op, inputs,
                [sa = SavedTensor(a, op), sb = SavedTensor(b, op), sv = SavedTensor(v, op), so = SavedTensor(out, op),
                 lse, add, causal, g, tiles, make](const Tensor& dout, const NeedsGrad& needs) -> Grads {
                  const Tensor a = sa.unpack(), b = sb.unpack(), v = sv.unpack(), o = so.unpack();
                  const Tensor na = rows_dot(a, a), nb = rows_dot(b, b);
                  Tensor da = Tensor::zeros_of(a.shape(), a.dtype()), db = Tensor::zeros_of(b.shape(), b.dtype());
                  Tensor dtau_blocks = Tensor::zeros_of({g.b, g.h}, a.dtype());
                  const auto base = make(a, b, na, nb);
                  Tensor dv = backward_dv("w2_attention_tiled", g, v, o, lse, dout, add, causal, tiles, [&](auto tag) {
                    using T = decltype(tag);
                    auto sc = base(tag);
                    sc.da = ptr<T>(da), sc.db = ptr<T>(db), sc.dtau = ptr<T>(dtau_blocks);
                    return sc;
                  });
                  Grads grads(needs.size());
                  if (needs[0]) grads[0] = da;
                  if (needs[1]) grads[1] = db;
                  if (needs[2]) grads[2] = kernels::reduce(kernels::Reduce::Sum, dtau_blocks, {0}, false);
                  if (needs[3]) grads[3] = dv;
                  return grads;
                });
  }
  return out;
}

}  // namespace

// ---- standard -----------------------------------------------------------------------------------

Tensor dot_attention_tiled(const Tensor& q_in, const Tensor& k_in, const Tensor& v_in, double scale,
                           const ScoreMask& mask, TileSizes tiles) {
  const char* op = "dot_attention_tiled";
  const Geometry g = check_inputs(q_in, k_in, v_in, tiles, op);
  const Tensor q = kernels::contiguous(q_in), k = kernels::contiguous(k_in), v = kernels::contiguous(v_in);
  const Tensor add = additive_mask(mask, g, q.dtype(), op);
  const ScoreMask causal{Tensor(), mask.causal, mask.causal_offset};
  const auto make = [g, scale](const Tensor& q, const Tensor& k) {
    return [&, g, scale](auto tag) {
      using T = decltype(tag);
      return DotScores<T>{q.data_ptr<T>(), k.data_ptr<T>(), g.nq, g.nk, q.size(3), static_cast<T>(scale)};
    };
  };
  Tensor lse;
  Tensor out = forward_output(op, g, v, add, causal, tiles, lse, make(q, k));
  const std::vector<Tensor> inputs{q_in, k_in, v_in};
  if (needs_grad(inputs)) {
    attach_node(out, op, inputs,
                [sq = SavedTensor(q, op), sk = SavedTensor(k, op), sv = SavedTensor(v, op), so = SavedTensor(out, op),
                 lse, add, causal, g, tiles, make](const Tensor& dout, const NeedsGrad& needs) -> Grads {
                  const Tensor q = sq.unpack(), k = sk.unpack(), v = sv.unpack(), o = so.unpack();
                  Tensor dq = Tensor::zeros_of(q.shape(), q.dtype()), dk = Tensor::zeros_of(k.shape(), k.dtype());
                  const auto base = make(q, k);
                  Tensor dv = backward_dv("dot_attention_tiled", g, v, o, lse, dout, add, causal, tiles, [&](auto tag) {
                    using T = decltype(tag);
                    auto sc = base(tag);
                    sc.dq = ptr<T>(dq), sc.dk = ptr<T>(dk);
                    return sc;
                  });
                  Grads grads(needs.size());
                  if (needs[0]) grads[0] = dq;
                  if (needs[1]) grads[1] = dk;
                  if (needs[2]) grads[2] = dv;
                  return grads;
                });
  }
  return out;
}

// ---- W2 -------------------------------------------------------------------------------------------

Tensor w2_attention_tiled(const Tensor& mu_q, const Tensor& mu_k, const Tensor& sigma_q, const Tensor& sigma_k,
                          const Tensor& tau, const Tensor& v, const ScoreMask& mask, double eps, TileSizes tiles) {
  const char* op = "w2_attention_tiled";
  RG_CHECK(mu_q.dim() == 4 && mu_k.dim() == 4, op, "expected (B, H, N, dh) means, got {} and {}",
           shape_str(mu_q.shape()), shape_str(mu_k.shape()));
  const int64_t b = mu_q.size(0), h = mu_q.size(1), nq = mu_q.size(2), nk = mu_k.size(2), dh = mu_q.size(3);
  const bool scalar = sigma_q.dim() == 3;
  const Shape want_q = scalar ? Shape{b, h, nq} : Shape{b, h, nq, dh};
  const Shape want_k = scalar ? Shape{b, h, nk} : Shape{b, h, nk, dh};
  RG_CHECK(sigma_q.shape() == want_q && sigma_k.shape() == want_k, op,
           "sigma_q {} and sigma_k {} must be {} and {} ({} sigma)", shape_str(sigma_q.shape()),
           shape_str(sigma_k.shape()), shape_str(want_q), shape_str(want_k), scalar ? "scalar" : "vector");
  // The same augmentation as w2_attention_probs: a = [mu_q, c sigma_q], b = [mu_k, c sigma_k].
  const Tensor sq = scalar ? unsqueeze(sigma_q, -1) * std::sqrt(static_cast<double>(dh)) : sigma_q;
  const Tensor sk = scalar ? unsqueeze(sigma_k, -1) * std::sqrt(static_cast<double>(dh)) : sigma_k;
  return distance_attention_tiled(cat({mu_q, sq}, -1), cat({mu_k, sk}, -1), tau, v, mask, eps, tiles);
}

// ---- triple product ---------------------------------------------------------------------------------

Tensor triple_attention_tiled(const Tensor& q_in, const Tensor& k_in, const Tensor& r_in, const Tensor& v_in,
                              double scale, const ScoreMask& mask, TileSizes tiles) {
  const char* op = "triple_attention_tiled";
  const Geometry g = check_inputs(q_in, k_in, v_in, tiles, op);
  RG_CHECK(r_in.shape() == q_in.shape() && r_in.dtype() == q_in.dtype(), op, "r {} must match q {}",
           shape_str(r_in.shape()), shape_str(q_in.shape()));
  const Tensor q = kernels::contiguous(q_in), k = kernels::contiguous(k_in), r = kernels::contiguous(r_in);
  const Tensor v = kernels::contiguous(v_in);
  const Tensor add = additive_mask(mask, g, q.dtype(), op);
  const ScoreMask causal{Tensor(), mask.causal, mask.causal_offset};
  // The per-row dots, (B, H, N) each: linear in N, recomputed in the backward.
  struct Norms {
    Tensor qq, rr, rq, kk;
  };
  const auto norms = [](const Tensor& q, const Tensor& k, const Tensor& r) {
    return Norms{rows_dot(q, q), rows_dot(r, r), rows_dot(r, q), rows_dot(k, k)};
  };
  const auto make = [g, scale](const Tensor& q, const Tensor& k, const Tensor& r, const Norms& n) {
    return [&, g, scale](auto tag) {
      using T = decltype(tag);
      return TripleScores<T>{q.data_ptr<T>(),    k.data_ptr<T>(),    r.data_ptr<T>(),    n.qq.data_ptr<T>(),
                             n.rr.data_ptr<T>(), n.rq.data_ptr<T>(), n.kk.data_ptr<T>(), g.nq,
                             g.nk,               q.size(3),          static_cast<T>(scale)};
    };
  };
  Tensor lse;
  const Norms n = norms(q, k, r);
  Tensor out = forward_output(op, g, v, add, causal, tiles, lse, make(q, k, r, n));
  const std::vector<Tensor> inputs{q_in, k_in, r_in, v_in};
  if (needs_grad(inputs)) {
    attach_node(
        out, op, inputs,
        [sq = SavedTensor(q, op), sk = SavedTensor(k, op), sr = SavedTensor(r, op), sv = SavedTensor(v, op),
         so = SavedTensor(out, op), lse, add, causal, g, tiles, make, norms](const Tensor& dout,
                                                                             const NeedsGrad& needs) -> Grads {
          const Tensor q = sq.unpack(), k = sk.unpack(), r = sr.unpack(), v = sv.unpack(), o = so.unpack();
          const Norms n = norms(q, k, r);
          Tensor dq = Tensor::zeros_of(q.shape(), q.dtype()), dk = Tensor::zeros_of(k.shape(), k.dtype());
          Tensor dr = Tensor::zeros_of(r.shape(), r.dtype());
          Tensor dqq = Tensor::zeros_of(n.qq.shape(), q.dtype()), drr = Tensor::zeros_of(n.qq.shape(), q.dtype());
          Tensor drq = Tensor::zeros_of(n.qq.shape(), q.dtype()), dkk = Tensor::zeros_of(n.kk.shape(), q.dtype());
          const auto base = make(q, k, r, n);
          Tensor dv = backward_dv("triple_attention_tiled", g, v, o, lse, dout, add, causal, tiles, [&](auto tag) {
            using T = decltype(tag);
            auto sc = base(tag);
            sc.dq = ptr<T>(dq), sc.dk = ptr<T>(dk), sc.dr = ptr<T>(dr);
            sc.dqq = ptr<T>(dqq), sc.drr = ptr<T>(drr), sc.drq = ptr<T>(drq), sc.dkk = ptr<T>(dkk);
            return sc;
          });
          Grads grads(needs.size());
          if (needs[0]) grads[0] = dq;
          if (needs[1]) grads[1] = dk;
          if (needs[2]) grads[2] = dr;
          if (needs[3]) grads[3] = dv;
          return grads;
        });
  }
  return out;
}

}  // namespace ropegrad::nn
