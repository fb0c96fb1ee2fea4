// nn/'s kernels that have a fast form (tensor/fast_forms.def): each one's
// plain form (its exercise region, in the op's own file, namespace plain),
// its fast form (nn/fast/, namespace fast), and the one place that chooses
// between them (tensor/fast_forms.h): the function of the kernel's own name
// below, which the op calls. Internal to nn/: only the ops' files include it.
// (Tiled attention, a fast form of whole attention calls, is chosen in
// nn/attention_path.cpp.)
#pragma once

#include <algorithm>
#include <cstdint>

#include "nn/attention_rows.h"
#include "nn/attention_scores.h"
#include "nn/functional.h"
#include "tensor/fast_forms.h"
#include "tensor/kernels.h"
#include "fast_forms_present.h"  // ROPEGRAD_HAS_<Name>, generated from tensor/fast_forms.def
#if ROPEGRAD_HAS_RmsNorm
#include "nn/fast/rmsnorm_fast.h"
#endif
#if ROPEGRAD_HAS_SwigluGate
#include "nn/fast/swiglu_gate_fast.h"
#endif
#if ROPEGRAD_HAS_RopeRotation
#include "nn/fast/rope_rotate_fast.h"
#endif
#if ROPEGRAD_HAS_AttentionScores
#include "nn/fast/attention_scores_fast.h"
#endif
#if ROPEGRAD_HAS_TripleBackward
#include "nn/fast/triple_scores_fast.h"
#endif
#if ROPEGRAD_HAS_CrossEntropy
#include "nn/fast/cross_entropy_fast.h"
#endif

namespace ropegrad::nn {

namespace plain {
// nn/rmsnorm.cpp (ex07-rmsnorm)
template <typename T>
void rms_norm_forward(const T* x, const T* g, T* y, T* inv_rms, int64_t rows, int64_t d, double eps);
template <typename T>
void rms_norm_backward(const T* x, const T* g, const T* inv_rms, const T* dy, T* dx, double* dg, int64_t rows,
                       int64_t d);
// nn/swiglu_gate.cpp (ex08-swiglu)
Tensor silu_mul_fused(const Tensor& a, const Tensor& b);
// nn/rope_rotate.cpp (ex09-rope)
Tensor rotate(const Tensor& x, const Tensor& cos, const Tensor& sin, RopePairing pairing, double sign);
// nn/attention_scores.cpp (ex12-softmax, ex16-triple-scores)
template <typename T, typename ScoreRow>
Tensor scores_to_probs(const Tensor& p, const Blocks& g, const Tensor& add_mask, const ScoreMask& m,
                       ScoreRow score_row);
Tensor softmax_grad(const Tensor& p, const Tensor& dp);
template <typename T>
void triple_score_grads(T* am, T* bm, const T* pqk, const T* pkr, const T* pqq, const T* prr, const T* prq,
                        const T* pkk, T* gqq, T* grr, T* grq, T* gkk, int64_t blocks, int64_t nq, int64_t nk,
                        T scale);
// nn/cross_entropy.cpp (ex13-cross-entropy)
template <typename T>
void cross_entropy_grad(const T* lp, const int64_t* tgt, T* d, int64_t n, int64_t v, T scale, int64_t ignore_index);
}  // namespace plain

// ---- the choice: the fast form when its file is here (ROPEGRAD_HAS_<Name>)
// and the switch is on (counted), else the plain form -----------------------

template <typename T>
void rms_norm_forward(const T* x, const T* g, T* y, T* inv_rms, int64_t rows, int64_t d, double eps) {
#if ROPEGRAD_HAS_RmsNorm
  if (fast_forms_enabled()) {
    note_fast_form(FastForm::RmsNorm);
    return fast::rms_norm_forward<T>(x, g, y, inv_rms, rows, d, eps);
  }
#endif
  plain::rms_norm_forward<T>(x, g, y, inv_rms, rows, d, eps);
}

template <typename T>
void rms_norm_backward(const T* x, const T* g, const T* inv_rms, const T* dy, T* dx, double* dg, int64_t rows,
                       int64_t d) {
#if ROPEGRAD_HAS_RmsNorm
  if (fast_forms_enabled()) {
    note_fast_form(FastForm::RmsNorm);
    return fast::rms_norm_backward<T>(x, g, inv_rms, dy, dx, dg, rows, d);
  }
#endif
  plain::rms_norm_backward<T>(x, g, inv_rms, dy, dx, dg, rows, d);
}

inline Tensor silu_mul_fused(const Tensor& a, const Tensor& b) {
#if ROPEGRAD_HAS_SwigluGate
  if (fast_forms_enabled()) {
    note_fast_form(FastForm::SwigluGate);
    return fast::silu_mul(a, b);
  }
#endif
  return plain::silu_mul_fused(a, b);
}

inline Tensor rotate(const Tensor& x, const Tensor& cos, const Tensor& sin, RopePairing pairing, double sign) {
#if ROPEGRAD_HAS_RopeRotation
  if (fast_forms_enabled() && fast::rope_rotate_is_one_pass(x, cos, sin)) {
    note_fast_form(FastForm::RopeRotation);
    Tensor out = Tensor::empty(x.shape(), x.dtype());
    const int64_t half = x.size(-1) / 2, rows = x.numel() / std::max<int64_t>(2 * half, 1);
    fast::rotate_one_pass(x.data_ptr<float>(), cos.data_ptr<float>(), sin.data_ptr<float>(), out.data_ptr<float>(),
                          rows, x.size(-2), half, pairing, static_cast<float>(sign));
    return out;
  }
#endif
  return plain::rotate(x, cos, sin, pairing, sign);
}

template <typename T, typename ScoreRow>
Tensor scores_to_probs(const Tensor& p, const Blocks& g, const Tensor& add_mask, const ScoreMask& m,
                       ScoreRow score_row) {
#if ROPEGRAD_HAS_AttentionScores
  if (fast_forms_enabled()) {
    note_fast_form(FastForm::AttentionScores);
    fast::scores_to_probs<T>(p.data_ptr<T>(), g, add_mask, m, score_row);
    return p;
  }
#endif
  return plain::scores_to_probs<T>(p, g, add_mask, m, score_row);
}

inline Tensor softmax_grad(const Tensor& p, const Tensor& dp) {
#if ROPEGRAD_HAS_AttentionScores
  if (fast_forms_enabled()) {
    note_fast_form(FastForm::AttentionScores);
    return fast::softmax_grad(p, dp);
  }
#endif
  return plain::softmax_grad(p, dp);
}

template <typename T>
void triple_score_grads(T* am, T* bm, const T* qk, const T* kr, const T* qq, const T* rr, const T* rq, const T* kk,
                        T* dqq, T* drr, T* drq, T* dkk, int64_t blocks, int64_t nq, int64_t nk, T scale) {
#if ROPEGRAD_HAS_TripleBackward
  if (fast_forms_enabled()) {
    note_fast_form(FastForm::TripleBackward);
    return fast::triple_score_grads<T>(am, bm, qk, kr, qq, rr, rq, kk, dqq, drr, drq, dkk, blocks, nq, nk, scale);
  }
#endif
  plain::triple_score_grads<T>(am, bm, qk, kr, qq, rr, rq, kk, dqq, drr, drq, dkk, blocks, nq, nk, scale);
}

template <typename T>
void cross_entropy_grad(const T* lp, const int64_t* tgt, T* d, int64_t n, int64_t v, T scale, int64_t ignore_index) {
#if ROPEGRAD_HAS_CrossEntropy
  if (fast_forms_enabled()) {
    note_fast_form(FastForm::CrossEntropy);
    return fast::cross_entropy_grad<T>(lp, tgt, d, n, v, scale, ignore_index);
  }
#endif
  plain::cross_entropy_grad<T>(lp, tgt, d, n, v, scale, ignore_index);
}

}  // namespace ropegrad::nn
