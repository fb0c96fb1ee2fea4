// The per-score part of the triple-product backward as the library runs it
// for speed (tensor/fast_forms.h): (b, h) blocks over the pool, compiled for
// AVX2 too, and each row in two passes, its three row sums first (chains of
// dependent adds, in j order), then the elementwise rest, where no j depends
// on another, so the compiler vectorises it. The plain form
// (nn/attention_scores.cpp, chapter 16) does both in one pass; the
// expressions and the order of every sum are the same, so the values are the
// same bit for bit (tests/test_fast_forms.cpp).
#pragma once

#include <cstdint>

namespace ropegrad::nn::fast {

// am: dS (blocks * nq, nk) on entry, A on exit; bm: Bm on exit. qk, kr: the
// (blocks * nq, nk) products; qq, rr, rq: (blocks * nq); kk: (blocks * nk).
// dqq, drr, drq (blocks * nq) and dkk (blocks * nk) are added to (zeros on entry).
template <typename T>
void triple_score_grads(T* am, T* bm, const T* qk, const T* kr, const T* qq, const T* rr, const T* rq, const T* kk,
                        T* dqq, T* drr, T* drq, T* dkk, int64_t blocks, int64_t nq, int64_t nk, T scale);

}  // namespace ropegrad::nn::fast
