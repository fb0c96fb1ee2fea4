// Choosing between the attention kernels that keep the probabilities P
// (nn/attention_scores.h, the plain forms a learner writes) and the tiled
// ones (nn/fast/attention_tiled.h, a fast form: tensor/fast_forms.h). This is
// the one dispatch point of tiled attention: each attention module asks one
// of the *_if_tiled functions below first, and runs the materialised kernels
// when it returns nothing. The tiled path is taken only when its file is
// there (a learner's workspace removes it with the attention exercises) and
// the fast forms are on.
#pragma once

#include <cstdint>
#include <optional>

#include "nn/attention_scores.h"

namespace ropegrad::nn {

// Auto: tiled from a number of keys on (where it is faster, see below),
// materialised below. Materialized / Tiled force a path (tests, benchmarks);
// Tiled still falls back where the tiled kernels do not apply.
enum class AttentionPath { Auto, Materialized, Tiled };

// set_attention_path(), else the environment variable ROPEGRAD_ATTENTION
// ("auto", "materialized" or "tiled"), else Auto.
AttentionPath attention_path();
void set_attention_path(AttentionPath path);

// Keys from which Auto takes the tiled path. Measured single-threaded on the
// 2-core development machine (bench/attention_crossover.py: forward + backward
// of each attention module, D=128, H=4, B=1, causal, minimum of 10-15 runs;
// then whole Base training steps, T=128, on both paths): standard and W2
// attention tie at 128 keys and are as fast or faster tiled from 256 keys on
// (1.2-1.4x at 1024). The triple variant is faster tiled already at 128 keys
// (1.1-1.2x; a Base step 102-105 instead of 114-116 ms on one thread), where
// its materialised backward streams six (T, T) matrices. Either way the tiled
// path holds a fraction of the memory. Table: docs/appendix-c-performance.md.
inline constexpr int64_t kTiledAttentionMinKeys = 256;
inline constexpr int64_t kTripleTiledMinKeys = 128;

// Whether the attention of q (B, H, Nq, dh), keys k (B, H, Nk, .) and values v
// should run tiled, the tiled form present and the fast forms on. needs_probs: the caller wants the weights (returned, or
// dropout on them), which only the materialised kernels have. min_keys: the
// variant's threshold above.
bool use_tiled_attention(const Tensor& q, const Tensor& k, const Tensor& v, const ScoreMask& mask, bool needs_probs,
                         int64_t min_keys = kTiledAttentionMinKeys);


// The tiled output, or nothing when the materialised kernels must run: the
// tiled form absent or the fast forms off (tensor/fast_forms.h), or
// use_tiled_attention says no. Arguments as the *_attention_tiled functions
// of nn/fast/attention_tiled.h.
std::optional<Tensor> dot_attention_if_tiled(const Tensor& q, const Tensor& k, const Tensor& v, double scale,
                                             const ScoreMask& mask, bool needs_probs);
std::optional<Tensor> w2_attention_if_tiled(const Tensor& mu_q, const Tensor& mu_k, const Tensor& sigma_q,
                                            const Tensor& sigma_k, const Tensor& tau, const Tensor& v,
                                            const ScoreMask& mask, bool needs_probs);
std::optional<Tensor> triple_attention_if_tiled(const Tensor& q, const Tensor& k, const Tensor& r, const Tensor& v,
                                                double scale, const ScoreMask& mask, bool needs_probs);

}  // namespace ropegrad::nn
