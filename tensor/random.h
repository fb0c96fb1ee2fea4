// Seeded random tensors. The same seed gives the same numbers on every
// machine: the generator (xoshiro256**, seeded through splitmix64) and every
// transform (uniform, Box-Muller normal, rejection for bounded ints and the
// truncated normal) are written out here rather than left to <random>, whose
// distributions differ between standard libraries.
#pragma once

#include <cstdint>

#include "tensor/tensor.h"

namespace ropegrad {

class Generator {
 public:
  explicit Generator(uint64_t seed = 0) { manual_seed(seed); }
  void manual_seed(uint64_t seed);

  uint64_t next_u64();
  double uniform();        // [0, 1) with 53 random bits
  float uniform_float();   // [0, 1) with 24 random bits: never rounds up to 1.0f
  double normal();    // mean 0, variance 1
  // Uniform integer in [low, high), without modulo bias.
  int64_t integer(int64_t low, int64_t high);

 private:
  uint64_t state_[4];
  bool has_spare_normal_ = false;
  double spare_normal_ = 0.0;
};

// The generator used when none is passed; seeded with 0 until manual_seed.
Generator& default_generator();
void manual_seed(uint64_t seed);

// Uniform on [0, 1).
Tensor rand(const Shape& shape, DType dtype = kDefaultFloat, Generator* gen = nullptr);
// Standard normal.
Tensor randn(const Shape& shape, DType dtype = kDefaultFloat, Generator* gen = nullptr);
// Integers in [low, high), int64.
Tensor randint(int64_t low, int64_t high, const Shape& shape, Generator* gen = nullptr);
// Normal(mean, std) with every value inside [a, b] (resampled until it is),
// like torch.nn.init.trunc_normal_.
Tensor trunc_normal(const Shape& shape, double mean, double std, double a, double b,
                    DType dtype = kDefaultFloat, Generator* gen = nullptr);

}  // namespace ropegrad
