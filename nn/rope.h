// Rotary position embedding (docs/appendix-a-formulas.md, RoPE): one table of cos/sin, shared by
// every layer, applied to queries and keys.
//
// Pair k of a head (k in [0, dh/2)) at position p is rotated by
// theta(p, k) = p * base^(-2k/dh). Tables are computed once in double and
// stored as non-persistent buffers (not in state_dict); positions past the
// table extend it. Context-extension scalings change the frequencies (and,
// for YaRN and xPos, scale the tables).
#pragma once

#include "nn/functional.h"
#include "nn/module.h"

namespace ropegrad::nn {

enum class RopeScaling {
  None,
  PositionInterpolation,  // p -> p / s
  NTK,                    // base -> base * s^(dh / (dh - 2))
  YaRN,                   // per-frequency ramp between p/s and p; tables * (0.1 ln s + 1)
  XPos,                   // queries * zeta_k^(p / scale_base), keys * zeta_k^(-p / scale_base)
};

struct RopeConfig {
  int64_t head_dim = 64;
  double base = 10000.0;
  int64_t max_seq_len = 512;  // initial table length; longer positions extend it
  RopePairing pairing = RopePairing::Interleaved;
  RopeScaling scaling = RopeScaling::None;
  double factor = 1.0;                  // s, for PositionInterpolation / NTK / YaRN
  int64_t original_max_seq_len = 512;   // YaRN: the context length the model was trained on
  double yarn_alpha = 1.0;              // YaRN ramp: below alpha rotations per context, interpolate
  double yarn_beta = 32.0;              //            above beta, keep the original frequency
  double xpos_gamma = 0.4;              // xPos: zeta_k = (2k/dh + gamma) / (1 + gamma)
  double xpos_scale_base = 512.0;
};

class RotaryEmbedding : public Module {
 public:
  explicit RotaryEmbedding(const RopeConfig& config, DType dtype = kDefaultFloat);
  std::string type_name() const override { return "RotaryEmbedding"; }

  // Real form. x (..., T, dh); positions: undefined (0..T-1), (T), or (B, T)
  // int64 for x (B, ..., T, dh) with B equal or 1, or (..., T) broadcasting
  // from the right against x's (..., T). is_key selects the key-side xPos scale.
  Tensor forward(const Tensor& x, const Tensor& positions = Tensor(), bool is_key = false);
  // Complex form (interleaved pairs only): view_as_real(view_as_complex(x) * e^{i theta}).
  Tensor forward_complex(const Tensor& x, const Tensor& positions = Tensor(), bool is_key = false);

  // The rotation frequency of each pair after scaling: (dh/2) values.
  const std::vector<double>& frequencies() const { return frequencies_; }
  // The factor every table entry is multiplied by (YaRN's temperature; 1 otherwise).
  double table_scale() const { return table_scale_; }
  int64_t cached_length() const { return cos_.size(0); }
  const RopeConfig& config() const { return config_; }

 private:
  void ensure_length(int64_t length);
  // xPos scales grow geometrically with the position: an Error where they would leave the dtype's range.
  void check_xpos_range(int64_t max_position, DType dtype) const;
  // cos and sin for x's positions, shaped to broadcast against x's pairs.
  std::pair<Tensor, Tensor> tables_for(const Tensor& x, const Tensor& positions, bool is_key);

  RopeConfig config_;
  std::vector<double> frequencies_;
  double table_scale_ = 1.0;
  Tensor cos_, sin_;  // (L, dh/2), non-persistent buffers
  Tensor xpos_;       // (L, dh/2) zeta_k^(p / scale_base), xPos only
};

}  // namespace ropegrad::nn
