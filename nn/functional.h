// The transformer's differentiable building blocks as functions, each with
// its backward derived by hand and written beside its forward, one small
// file per block (modules in nn/ wrap these with their parameters):
// nn/rmsnorm.cpp, nn/swiglu_gate.cpp, nn/rope_rotate.cpp, nn/sdpa.cpp,
// nn/cross_entropy.cpp.
#pragma once

#include <optional>
#include <utility>

#include "autograd/ops.h"

namespace ropegrad::nn {

// ---- RMSNorm (docs/appendix-a-formulas.md, building blocks) -------------------------------------------------------------
// y = x / sqrt(mean(x^2) + eps) * gain, over the last dim.
// x (..., D), gain (D) -> y (..., D). Accumulates in double.
Tensor rms_norm(const Tensor& x, const Tensor& gain, double eps = 1e-5);

// ---- SwiGLU's gate ------------------------------------------------------------------------
// silu(a) * b in one pass (the product inside SwiGLU), a and b broadcasting.
// With s = sigmoid(a): d/da = b s (1 + a (1 - s)),  d/db = a s.
Tensor silu_mul(const Tensor& a, const Tensor& b);

// ---- RoPE rotations (docs/appendix-a-formulas.md, RoPE) ----------------------------------------------------------
enum class RopePairing {
  Interleaved,  // (x_2k, x_2k+1): RoFormer, CS336
  HalfSplit,    // (x_k, x_k+dh/2): GPT-NeoX / LLaMA "rotate_half"
};
// Rotates each pair of x (..., T, dh) by the angle whose cosine and sine are
// given for each position and pair: cos, sin broadcastable to (..., T, dh/2).
// The backward rotates the gradient back (by -angle).
Tensor rope_rotate(const Tensor& x, const Tensor& cos, const Tensor& sin, RopePairing pairing);

// ---- complex numbers as (re, im) pairs --------------------------------------------------------
// ropegrad has no complex dtype: a complex tensor of shape S is a real tensor
// of shape (*S, 2) holding (re, im) — exactly torch.view_as_real's layout, so
// both conversions are views, never copies.
// x (..., 2n) -> z (..., n, 2): pairs (x_2k, x_2k+1) read as x_2k + i x_2k+1.
Tensor view_as_complex(const Tensor& x);
// z (..., n, 2) -> x (..., 2n).
Tensor view_as_real(const Tensor& z);
// Elementwise complex product of a (..., 2) and b (..., 2), broadcasting.
// Backward: grad_a = grad * conj(b), grad_b = grad * conj(a).
Tensor complex_mul(const Tensor& a, const Tensor& b);

// ---- attention (docs/appendix-a-formulas.md, attention) ------------------------------------------------------------------
struct AttentionOptions {
  // Boolean (true = may attend) or additive float, broadcastable to (B, H, Nq, Nk).
  Tensor mask;
  // Lower-triangular mask aligned top-left (query i sees keys 0..i + causal_offset).
  bool causal = false;
  int64_t causal_offset = 0;  // = Nk - Nq for queries that continue a cached prefix
  double dropout_p = 0.0;     // applied to the weights when training
  bool training = false;
  std::optional<double> scale;  // default 1 / sqrt(dh)
  Generator* generator = nullptr;
};
// softmax(q k^T * scale + mask) v, for q (B, H, Nq, dh), k (B, H, Nk, dh),
// v (B, H, Nk, dv). A query row with no allowed key gives zeros, not NaN.
// When `weights` is non-null it receives the attention weights (B, H, Nq, Nk).
Tensor scaled_dot_product_attention(const Tensor& q, const Tensor& k, const Tensor& v,
                                    const AttentionOptions& options = {}, Tensor* weights = nullptr);

// Inverted dropout: zeros each element with probability p, scales the rest by 1/(1-p).
Tensor dropout(const Tensor& x, double p, bool training, Generator* gen = nullptr);

// ---- loss -----------------------------------------------------------------------------------------
// Mean over targets != ignore_index of -log softmax(logits)[target].
// logits (..., V) float, targets (...) int64. Stable for huge logits.
Tensor cross_entropy(const Tensor& logits, const Tensor& targets, int64_t ignore_index = -100);

}  // namespace ropegrad::nn
