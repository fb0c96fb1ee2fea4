// Choosing the attention kernels: materialised or tiled (nn/attention_path.h).
#include "nn/attention_path.h"

#include <atomic>
#include <cstdlib>
#include <string>

#include "tensor/fast_forms.h"
#include "fast_forms_present.h"  // ROPEGRAD_HAS_<Name>, generated from tensor/fast_forms.def
#if ROPEGRAD_HAS_TiledAttention
#include "nn/fast/attention_tiled.h"
#endif

namespace {
#if ROPEGRAD_HAS_TiledAttention
constexpr bool kTiledFormHere = true;
#else
constexpr bool kTiledFormHere = false;  // a workspace that stubs an attention exercise
#endif
}  // namespace

namespace ropegrad::nn {

namespace {
std::atomic<int> g_forced_path{-1};  // -1: not set by set_attention_path

AttentionPath path_from_env() {
  const char* env = std::getenv("ROPEGRAD_ATTENTION");
  const std::string value = env == nullptr ? "" : env;
  if (value.empty() || value == "auto") return AttentionPath::Auto;
  if (value == "materialized") return AttentionPath::Materialized;
  if (value == "tiled") return AttentionPath::Tiled;
  RG_CHECK(false, "attention", "ROPEGRAD_ATTENTION must be auto, materialized or tiled, got '{}'", value);
  return AttentionPath::Auto;
}
}  // namespace

AttentionPath attention_path() {
  const int forced = g_forced_path.load();
  if (forced >= 0) return static_cast<AttentionPath>(forced);
  static const AttentionPath from_env = path_from_env();
  return from_env;
}

void set_attention_path(AttentionPath path) { g_forced_path.store(static_cast<int>(path)); }

bool use_tiled_attention(const Tensor& q, const Tensor& k, const Tensor& v, const ScoreMask& mask, bool needs_probs,
                         int64_t min_keys) {
  if (!kTiledFormHere || !fast_forms_enabled()) return false;
  if (needs_probs) return false;                                      // only P can be returned or dropped out
  if (mask.mask.defined() && mask.mask.requires_grad()) return false;  // its gradient is a full dS
  if (q.dim() != 4 || k.dim() != 4 || v.dim() != 4) return false;
  if (v.size(0) != q.size(0) || v.size(1) != q.size(1) || v.size(2) != k.size(2) || v.dtype() != q.dtype()) {
    return false;  // e.g. v broadcast over the batch: the materialised path's matmul handles it
  }
  switch (attention_path()) {
    case AttentionPath::Materialized: return false;
    case AttentionPath::Tiled: return true;
    case AttentionPath::Auto: break;
  }
  return k.size(2) >= min_keys;
}

std::optional<Tensor> dot_attention_if_tiled(const Tensor& q, const Tensor& k, const Tensor& v, double scale,
                                             const ScoreMask& mask, bool needs_probs) {
#if ROPEGRAD_HAS_TiledAttention
  if (use_tiled_attention(q, k, v, mask, needs_probs)) {
    note_fast_form(FastForm::TiledAttention);
    return dot_attention_tiled(q, k, v, scale, mask);
  }
#endif
  return std::nullopt;
}

std::optional<Tensor> w2_attention_if_tiled(const Tensor& mu_q, const Tensor& mu_k, const Tensor& sigma_q,
                                            const Tensor& sigma_k, const Tensor& tau, const Tensor& v,
                                            const ScoreMask& mask, bool needs_probs) {
#if ROPEGRAD_HAS_TiledAttention
  if (use_tiled_attention(mu_q, mu_k, v, mask, needs_probs)) {
    note_fast_form(FastForm::TiledAttention);
    return w2_attention_tiled(mu_q, mu_k, sigma_q, sigma_k, tau, v, mask);
  }
#endif
  return std::nullopt;
}

std::optional<Tensor> triple_attention_if_tiled(const Tensor& q, const Tensor& k, const Tensor& r, const Tensor& v,
                                                double scale, const ScoreMask& mask, bool needs_probs) {
#if ROPEGRAD_HAS_TiledAttention
  if (use_tiled_attention(q, k, v, mask, needs_probs, kTripleTiledMinKeys)) {
    note_fast_form(FastForm::TiledAttention);
    return triple_attention_tiled(q, k, r, v, scale, mask);
  }
#endif
  return std::nullopt;
}

}  // namespace ropegrad::nn
