// The score -> probability rows of the materialised attention kernels as the
// library runs them for speed (tensor/fast_forms.h): each row's scores, mask,
// causality and softmax in one pass over the row while it is in cache, rows
// over the pool, compiled for AVX2 too, with the vectorisable max_of and
// fast_exp (tensor/fast_math.h); and the softmax backward dS = P (dP - rowsum(dP P))
// the same way. The plain form (nn/attention_scores.cpp) writes the scores
// and then calls the library's softmax (the learner's ex12-softmax); this one
// agrees with it within fast_exp's 4 ulp (tests/test_fast_forms.cpp).
#pragma once

#include <algorithm>
#include <cmath>
#include <limits>

#include "nn/attention_rows.h"
#include "nn/attention_scores.h"
#include "tensor/elementwise.h"
#include "tensor/fast_math.h"
#include "tensor/parallel.h"
#include "tensor/simd.h"

namespace ropegrad::nn::fast {

// Turns every row of `p` into probabilities: score_row(b, h, i, row) writes
// the raw scores of query i (row holds what the caller left there, e.g. q.k),
// then the mask is added, causality applied and the softmax taken. A row
// with no allowed key becomes zeros.
template <typename T, typename ScoreRow>
void scores_to_probs(T* p, const Blocks& g, const Tensor& add_mask, const ScoreMask& m, ScoreRow score_row) {
  const MaskView mask(add_mask);
  const T neg_inf = -std::numeric_limits<T>::infinity();
  const int64_t rows = g.b * g.h * g.nq;
  const auto rows_to_probs = [&](int64_t lo, int64_t hi) {
    for (int64_t row_index = lo; row_index < hi; ++row_index) {
      const int64_t i = row_index % g.nq, h = (row_index / g.nq) % g.h, b = row_index / (g.nq * g.h);
      T* row = p + row_index * g.nk;
      score_row(b, h, i, row);
      if (mask.base != nullptr) {
        const T* mr = mask.row<T>(b, h, i);
        for (int64_t j = 0; j < g.nk; ++j) row[j] += mr[j * mask.s3];
      }
      int64_t allowed = g.nk;
      if (m.causal) allowed = std::clamp<int64_t>(i + m.causal_offset + 1, 0, g.nk);
      const T max = max_of(row, allowed);
      if (max == neg_inf) {  // no allowed key: zeros, not NaN
        std::fill(row, row + g.nk, T(0));
        continue;
      }
      T total = 0;
      for (int64_t j = 0; j < allowed; ++j) total += (row[j] = fast_exp(row[j] - max));
      const T inv = T(1) / total;
      for (int64_t j = 0; j < allowed; ++j) row[j] *= inv;
      std::fill(row + allowed, row + g.nk, T(0));
    }
  };
  // Rows are independent: split across the pool, each part compiled for AVX2
  // too (tensor/simd.h: the same bits either way).
  parallel_for(0, rows, std::max<int64_t>(1, 4096 / std::max<int64_t>(g.nk, 1)), [&](int64_t lo, int64_t hi) {
    simd::run_best([&] { rows_to_probs(lo, hi); });
  });
}

// dS = P * (dP - rowsum(dP * P)), a new (B, H, Nq, Nk) tensor.
inline Tensor softmax_grad(const Tensor& p, const Tensor& dp_in) {
  const Tensor dp = kernels::contiguous(dp_in);
  Tensor ds = Tensor::empty(p.shape(), p.dtype());
  const int64_t nk = p.size(-1), rows = nk == 0 ? 0 : p.numel() / nk;
  dispatch_floating(p.dtype(), "attention", [&](auto tag) {
    using T = decltype(tag);
    const T* pp = p.data_ptr<T>();
    const T* g = dp.data_ptr<T>();
    T* d = ds.data_ptr<T>();
    parallel_for(0, rows, std::max<int64_t>(1, 4096 / std::max<int64_t>(nk, 1)), [&](int64_t lo, int64_t hi) {
      simd::run_best([&] {
        for (int64_t r = lo; r < hi; ++r) {
          const T* pr = pp + r * nk;
          const T* gr = g + r * nk;
          T dot = 0;
          for (int64_t j = 0; j < nk; ++j) dot += pr[j] * gr[j];
          T* dr = d + r * nk;
          for (int64_t j = 0; j < nk; ++j) dr[j] = pr[j] * (gr[j] - dot);
        }
      });
    });
  });
  return ds;
}

}  // namespace ropegrad::nn::fast
