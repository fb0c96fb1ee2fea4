// Tiled attention with an online softmax (flash-attention style), for long
// contexts in linear memory.
//
// The kernels of nn/attention_scores.h return the probabilities P
// (B, H, Nq, Nk) and keep P for backward: memory grows as T^2. The functions
// here compute the attention OUTPUT O = softmax(S + mask) v directly, key tile
// by key tile, with a running row maximum and a running row sum, and never hold
// more than one (query tile x key tile) block of scores per thread. For
// backward they keep only the inputs, O and the per-row logsumexp L (B, H, Nq),
// and recompute each tile of scores (derivation in nn/fast/attention_tiled.cpp and
// docs/appendix-c-performance.md).
//
// Masks: the same ScoreMask as the materialised kernels — causality with an
// offset, a bool or additive float mask broadcastable to (B, H, Nq, Nk) (read
// through its broadcast strides, tile by tile), and a row with no allowed key
// gives an output of 0, never NaN. Not supported here (the dispatch below
// falls back to the materialised kernels): a float mask that requires grad
// (its gradient is a full (Nq, Nk) dS), returned attention weights, dropout on
// the weights.
#pragma once

#include "nn/attention_path.h"
#include "nn/attention_scores.h"

namespace ropegrad::nn {

// Rows of queries and keys per tile. A tile that does not divide N is cut short.
struct TileSizes {
  int64_t query = 64;
  int64_t key = 128;
};

// Standard: softmax(q k^T * scale + mask) v.  q (B, H, Nq, dh), k (B, H, Nk, dh), v (B, H, Nk, dv).
Tensor dot_attention_tiled(const Tensor& q, const Tensor& k, const Tensor& v, double scale,
                           const ScoreMask& mask = {}, TileSizes tiles = {});

// W2: softmax(S + mask) v with S as in w2_attention_probs (scalar or vector sigma).
Tensor w2_attention_tiled(const Tensor& mu_q, const Tensor& mu_k, const Tensor& sigma_q, const Tensor& sigma_k,
                          const Tensor& tau, const Tensor& v, const ScoreMask& mask = {}, double eps = 1e-6,
                          TileSizes tiles = {});

// Triple product: softmax(S + mask) v with S as in triple_attention_probs.
Tensor triple_attention_tiled(const Tensor& q, const Tensor& k, const Tensor& r, const Tensor& v, double scale,
                              const ScoreMask& mask = {}, TileSizes tiles = {});

}  // namespace ropegrad::nn
