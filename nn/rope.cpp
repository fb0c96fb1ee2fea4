#include "nn/rope.h"
#include "tensor/exercise.h"

#include <cmath>
#include <numbers>

namespace ropegrad::nn {

namespace {

// The rotation frequency of pair k (dims 2k, 2k+1) of a head of head_dim dims:
// base^(-2k/head_dim), from 1 (k = 0) down to nearly 1/base.
double rope_frequency(double base, int64_t k, int64_t head_dim) {
  // BEGIN EXERCISE ex09-rope
  return std::pow(base, -2.0 * static_cast<double>(k) / static_cast<double>(head_dim));
  // END EXERCISE ex09-rope
}

std::vector<double> scaled_frequencies(const RopeConfig& c) {
  const int64_t half = c.head_dim / 2;
  double base = c.base;
  if (c.scaling == RopeScaling::NTK) {
    // "NTK-aware": stretch the base so the lowest frequency is interpolated
    // by s while the highest is (almost) unchanged.
    base *= std::pow(c.factor, static_cast<double>(c.head_dim) / static_cast<double>(c.head_dim - 2));
  }
  std::vector<double> freq(half);
  for (int64_t k = 0; k < half; ++k) {
    const double theta = rope_frequency(base, k, c.head_dim);
    switch (c.scaling) {
      case RopeScaling::PositionInterpolation: freq[k] = theta / c.factor; break;
      case RopeScaling::YaRN: {
        // Rotations of pair k over the original context: r = L / wavelength.
        const double r = static_cast<double>(c.original_max_seq_len) * theta / (2 * std::numbers::pi);
        const double ramp = std::clamp((r - c.yarn_alpha) / (c.yarn_beta - c.yarn_alpha), 0.0, 1.0);
        // ramp 0: interpolate (theta / s); ramp 1: keep theta (fast pairs see many periods).
        freq[k] = (1 - ramp) * theta / c.factor + ramp * theta;
        break;
      }
      default: freq[k] = theta; break;
    }
  }
  return freq;
}

void validate(const RopeConfig& c) {
  RG_CHECK(c.head_dim > 0 && c.head_dim % 2 == 0, "RotaryEmbedding",
           "head_dim must be positive and even (pairs of dims rotate together), got {}", c.head_dim);
  RG_CHECK(c.base > 1, "RotaryEmbedding", "base must be > 1, got {}", c.base);
  RG_CHECK(c.max_seq_len > 0, "RotaryEmbedding", "max_seq_len must be positive, got {}", c.max_seq_len);
  if (c.scaling == RopeScaling::PositionInterpolation || c.scaling == RopeScaling::NTK ||
      c.scaling == RopeScaling::YaRN) {
    RG_CHECK(c.factor >= 1, "RotaryEmbedding", "scaling factor s must be >= 1, got {}", c.factor);
  }
  if (c.scaling == RopeScaling::YaRN) {
    RG_CHECK(c.yarn_beta > c.yarn_alpha, "RotaryEmbedding", "YaRN needs beta > alpha, got alpha={}, beta={}",
             c.yarn_alpha, c.yarn_beta);
  }
  if (c.scaling == RopeScaling::XPos) {
    RG_CHECK(c.xpos_gamma > 0 && c.xpos_scale_base > 0, "RotaryEmbedding",
             "xPos needs gamma > 0 and scale_base > 0, got {} and {}", c.xpos_gamma, c.xpos_scale_base);
  }
}

}  // namespace

RotaryEmbedding::RotaryEmbedding(const RopeConfig& config, DType dtype) : config_(config) {
  validate(config_);
  frequencies_ = scaled_frequencies(config_);
  if (config_.scaling == RopeScaling::YaRN) table_scale_ = 0.1 * std::log(config_.factor) + 1.0;
  const int64_t half = config_.head_dim / 2;
  cos_ = register_buffer("cos_cached", zeros({0, half}, dtype), /*persistent=*/false);
  sin_ = register_buffer("sin_cached", zeros({0, half}, dtype), false);
  xpos_ = register_buffer("xpos_cached", zeros({0, half}, dtype), false);
  ensure_length(config_.max_seq_len);
}

void RotaryEmbedding::ensure_length(int64_t length) {
  const int64_t have = cos_.size(0);
  if (length <= have) return;
  // Grow geometrically so decoding one token at a time stays cheap. Every
  // row is computed from its own position: never a copy of the last row.
  const int64_t n = std::max(length, 2 * have);
  const int64_t half = config_.head_dim / 2;
  std::vector<double> c(n * half), s(n * half), z(n * half);
  for (int64_t p = 0; p < n; ++p) {
    for (int64_t k = 0; k < half; ++k) {
      const double angle = static_cast<double>(p) * frequencies_[k];
      c[p * half + k] = table_scale_ * std::cos(angle);
      s[p * half + k] = table_scale_ * std::sin(angle);
      if (config_.scaling == RopeScaling::XPos) {
        const double zeta = (2.0 * static_cast<double>(k) / static_cast<double>(config_.head_dim) + config_.xpos_gamma) /
                            (1.0 + config_.xpos_gamma);
        z[p * half + k] = std::pow(zeta, static_cast<double>(p) / config_.xpos_scale_base);
      }
    }
  }
  // set_data keeps the registered buffers the same tensors (Module::to sees them).
  cos_.set_data(tensor(c, {n, half}, cos_.dtype()));
  sin_.set_data(tensor(s, {n, half}, sin_.dtype()));
  xpos_.set_data(config_.scaling == RopeScaling::XPos ? tensor(z, {n, half}, xpos_.dtype()) : zeros({0, half}, xpos_.dtype()));
}

void RotaryEmbedding::check_xpos_range(int64_t max_position, DType dtype) const {
  if (config_.scaling != RopeScaling::XPos) return;
  // zeta_0^(p/b) shrinks geometrically with p: past this position the query
  // scale underflows and the key scale (its inverse) overflows.
  const double zeta0 = config_.xpos_gamma / (1.0 + config_.xpos_gamma);
  const double log_min = dtype == DType::Float32 ? std::log(1e-37) : std::log(1e-307);
  const double limit = config_.xpos_scale_base * log_min / std::log(zeta0);
  RG_CHECK(static_cast<double>(max_position) < limit, "RotaryEmbedding",
           "xPos position {} is past {:.0f}, where zeta^(p/{}) leaves the range of {}", max_position, limit,
           config_.xpos_scale_base, dtype_name(dtype));
}

std::pair<Tensor, Tensor> RotaryEmbedding::tables_for(const Tensor& x, const Tensor& positions, bool is_key) {
  RG_CHECK(x.dim() >= 2, "RotaryEmbedding", "input must be (..., T, dh), got shape {}", shape_str(x.shape()));
  RG_CHECK(x.size(-1) == config_.head_dim, "RotaryEmbedding", "input head size {} differs from head_dim {} (shape {})",
           x.size(-1), config_.head_dim, shape_str(x.shape()));
  const int64_t t = x.size(-2);
  Tensor c, s, z;
  if (!positions.defined()) {
    ensure_length(t);
    check_xpos_range(t - 1, x.dtype());
    c = kernels::narrow(cos_, 0, 0, t);  // (T, dh/2) views: no copy
    s = kernels::narrow(sin_, 0, 0, t);
    if (config_.scaling == RopeScaling::XPos) z = kernels::narrow(xpos_, 0, 0, t);
  } else {
    RG_CHECK(positions.dtype() == DType::Int64, "RotaryEmbedding", "positions must be int64, got {}",
             dtype_name(positions.dtype()));
    RG_CHECK(positions.dim() >= 1 && positions.size(-1) == t, "RotaryEmbedding",
             "positions must be (T), (B, T) or (..., T) with T = {}, got shape {}", t, shape_str(positions.shape()));
    if (positions.dim() == 2) {
      // (B, T) or (1, T) for x (B, ..., T, dh): B lines up with x's first dim.
      RG_CHECK(x.dim() >= 3 && (positions.size(0) == x.size(0) || positions.size(0) == 1), "RotaryEmbedding",
               "positions (B, T) = {} need an input (B, ..., T, dh) with the same B (or B = 1), got {}",
               shape_str(positions.shape()), shape_str(x.shape()));
    } else if (positions.dim() > 2) {
      // (..., T) for x (..., T, dh): broadcast from the right, as CS336's token_positions.
      const Shape lead(x.shape().begin(), x.shape().end() - 1);
      bool fits = positions.dim() <= static_cast<int64_t>(lead.size());
      for (int64_t i = 1; fits && i <= positions.dim(); ++i) {
        const int64_t p = positions.size(-i), want = lead[lead.size() - i];
        fits = p == want || p == 1;
      }
      RG_CHECK(fits, "RotaryEmbedding", "positions of shape {} do not broadcast against the input's {} (x is {})",
               shape_str(positions.shape()), shape_str(lead), shape_str(x.shape()));
    }
    const Tensor flat = kernels::contiguous(kernels::reshape(positions, {-1}));
    const int64_t* p = flat.data_ptr<int64_t>();
    int64_t max_pos = -1;
    for (int64_t i = 0; i < flat.numel(); ++i) {
      RG_CHECK(p[i] >= 0, "RotaryEmbedding", "position {} (at index {}) is negative", p[i], i);
      max_pos = std::max(max_pos, p[i]);
    }
    ensure_length(max_pos + 1);
    check_xpos_range(max_pos, x.dtype());
    const int64_t half = config_.head_dim / 2;
    Shape shape = positions.shape();  // (T), (B, T) or (..., T)
    if (positions.dim() == 2) shape.insert(shape.begin() + 1, x.dim() - 3, 1);  // (B, 1.., T)
    shape.push_back(half);
    c = kernels::reshape(kernels::index_select(cos_, 0, flat), shape);
    s = kernels::reshape(kernels::index_select(sin_, 0, flat), shape);
    if (config_.scaling == RopeScaling::XPos) z = kernels::reshape(kernels::index_select(xpos_, 0, flat), shape);
  }
  if (z.defined()) {
    // xPos: queries grow with zeta^(p/b), keys shrink with zeta^(-p/b), so a
    // score depends on zeta^((m - n)/b): it decays with relative distance.
    const kernels::Binary op = is_key ? kernels::Binary::Div : kernels::Binary::Mul;
    c = kernels::binary(op, c, z);
    s = kernels::binary(op, s, z);
  }
  return {kernels::to(c, x.dtype()), kernels::to(s, x.dtype())};
}

Tensor RotaryEmbedding::forward(const Tensor& x, const Tensor& positions, bool is_key) {
  const auto [c, s] = tables_for(x, positions, is_key);
  return rope_rotate(x, c, s, config_.pairing);
}

Tensor RotaryEmbedding::forward_complex(const Tensor& x, const Tensor& positions, bool is_key) {
  RG_CHECK(config_.pairing == RopePairing::Interleaved, "RotaryEmbedding",
           "the complex form pairs adjacent dims (x_2k + i x_2k+1): it needs interleaved pairing");
  const auto [c, s] = tables_for(x, positions, is_key);
  // BEGIN EXERCISE ex10-rope-complex
  // e^{i theta} as (cos, sin) pairs: (..., T, dh/2, 2).
  const Tensor rotation = kernels::cat({kernels::unsqueeze(c, -1), kernels::unsqueeze(s, -1)}, -1);
  return view_as_real(complex_mul(view_as_complex(x), rotation));
  // END EXERCISE ex10-rope-complex
}

}  // namespace ropegrad::nn
