// The triple backward's per-score part in two vectorised passes per row (nn/fast/triple_scores_fast.h).
#include "nn/fast/triple_scores_fast.h"

#include "tensor/parallel.h"
#include "tensor/simd.h"

namespace ropegrad::nn::fast {

template <typename T>
void triple_score_grads(T* am, T* bm, const T* pqk, const T* pkr, const T* pqq, const T* prr, const T* prq,
                        const T* pkk, T* gqq, T* grr, T* grq, T* gkk, int64_t blocks, int64_t nq_in, int64_t nk_in,
                        T scale) {
  // (b, h) blocks are independent (dkk sums over a block's rows only).
  parallel_for(0, blocks, 1, [&](int64_t lo, int64_t hi) {
    simd::run_best([&] {
      // Copies of what the closure holds: the stores below could alias the
      // closure's memory, which keeps the compiler from vectorising loops
      // that read through it.
      const int64_t nq = nq_in, nk = nk_in;
      const T sc = scale;
      for (int64_t block = lo; block < hi; ++block) {
        const int64_t kb = block * nk;  // this block's keys
        T* dkk_row = gkk + kb;
        for (int64_t i = 0; i < nq; ++i) {
          const int64_t qi = block * nq + i;
          const T qqi = pqq[qi], rri = prr[qi], rqi = prq[qi];
          T* am_row = am + qi * nk;  // dS on entry, A on exit
          T* bm_row = bm + qi * nk;
          const T *qk_row = pqk + qi * nk, *kr_row = pkr + qi * nk, *kk_row = pkk + kb;
          T sum_qq = 0, sum_rr = 0, sum_rq = 0;
          for (int64_t j = 0; j < nk; ++j) {
            const T dg = -sc * am_row[j];
            const T qkv = qk_row[j], krv = kr_row[j], kkj = kk_row[j];
            sum_qq += dg * (kkj * rri - krv * krv);
            sum_rr += dg * (qqi * kkj - qkv * qkv);
            sum_rq += dg * (2 * qkv * krv - 2 * kkj * rqi);
          }
          gqq[qi] += sum_qq;
          grr[qi] += sum_rr;
          grq[qi] += sum_rq;
          for (int64_t j = 0; j < nk; ++j) {
            const T dg = -sc * am_row[j];
            const T qkv = qk_row[j], krv = kr_row[j];
            am_row[j] = dg * (2 * krv * rqi - 2 * rri * qkv);
            bm_row[j] = dg * (2 * qkv * rqi - 2 * qqi * krv);
            dkk_row[j] += dg * (qqi * rri - rqi * rqi);
          }
        }
      }
    });
  });
}

template void triple_score_grads<float>(float*, float*, const float*, const float*, const float*, const float*,
                                        const float*, const float*, float*, float*, float*, float*, int64_t, int64_t,
                                        int64_t, float);
template void triple_score_grads<double>(double*, double*, const double*, const double*, const double*,
                                         const double*, const double*, const double*, double*, double*, double*,
                                         double*, int64_t, int64_t, int64_t, double);

}  // namespace ropegrad::nn::fast
