// Fused "score -> softmax" kernels for the three attention variants
// (docs/appendix-a-formulas.md, attention). Each returns the attention probabilities P (B, H, Nq, Nk)
// directly: the score matrix is built in P's own buffer and turned into
// probabilities in place, so the backward keeps exactly one (B, H, Nq, Nk)
// tensor — P — and recomputes anything else it needs from the (B, H, N, dh)
// inputs. Each backward is derived in attention_scores.cpp beside its forward.
#pragma once

#include "autograd/ops.h"

namespace ropegrad::nn {

// What a query may attend: an optional mask (bool: true = may attend; float:
// added to the scores), broadcastable to (B, H, Nq, Nk), and/or causality
// (query i sees keys j <= i + causal_offset). A row with no allowed key gets
// probabilities 0 (and so an attention output of 0), never NaN. A float mask
// that requires grad receives one (dS summed to its shape), as in PyTorch.
struct ScoreMask {
  Tensor mask;
  bool causal = false;
  int64_t causal_offset = 0;
};

// Standard: S = q k^T * scale.  q (B, H, Nq, dh), k (B, H, Nk, dh).
Tensor dot_attention_probs(const Tensor& q, const Tensor& k, double scale, const ScoreMask& mask = {});

// W2 (docs/appendix-a-formulas.md, W2 attention): S = -(|mu_q|^2 + |mu_k|^2 - 2 mu_q.mu_k + D_sigma^2) / (tau + eps).
// mu_q (B, H, Nq, dh), mu_k (B, H, Nk, dh); sigma_q (B, H, Nq) and sigma_k
// (B, H, Nk) for scalar sigma (D_sigma^2 = dh (sigma_q - sigma_k)^2), or
// (B, H, N, dh) for vector sigma (D_sigma^2 = |sigma_q - sigma_k|^2);
// tau (H) positive.
Tensor w2_attention_probs(const Tensor& mu_q, const Tensor& mu_k, const Tensor& sigma_q, const Tensor& sigma_k,
                          const Tensor& tau, const ScoreMask& mask = {}, double eps = 1e-6);

// Triple product (docs/appendix-a-formulas.md, triple-product attention): S = -det G(q_i, k_j, r_i) * scale, with
// det G = qq kk rr + 2 qk kr rq - qq kr^2 - kk rq^2 - rr qk^2.
// q, r (B, H, Nq, dh), k (B, H, Nk, dh).
Tensor triple_attention_probs(const Tensor& q, const Tensor& k, const Tensor& r, double scale,
                              const ScoreMask& mask = {});

}  // namespace ropegrad::nn
