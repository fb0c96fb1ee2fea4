#include "tensor/random.h"

#include <cmath>
#include <numbers>

namespace ropegrad {

namespace {
uint64_t splitmix64(uint64_t& x) {
  uint64_t z = (x += 0x9E3779B97F4A7C15ull);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}
uint64_t rotl(uint64_t x, int k) { return (x << k) | (x >> (64 - k)); }

Generator& pick(Generator* gen) { return gen != nullptr ? *gen : default_generator(); }

template <typename Draw>
Tensor fill_random(const Shape& shape, DType dtype, Draw draw) {
  Tensor out = Tensor::empty(shape, dtype);
  dispatch_all(dtype, [&](auto tag) {
    using T = decltype(tag);
    T* p = out.data_ptr<T>();
    for (int64_t i = 0, n = out.numel(); i < n; ++i) p[i] = static_cast<T>(draw());
  });
  return out;
}
}  // namespace

void Generator::manual_seed(uint64_t seed) {
  uint64_t x = seed;
  for (auto& s : state_) s = splitmix64(x);
  has_spare_normal_ = false;
}

uint64_t Generator::next_u64() {
  // xoshiro256** (Blackman & Vigna).
  const uint64_t result = rotl(state_[1] * 5, 7) * 9;
  const uint64_t t = state_[1] << 17;
  state_[2] ^= state_[0];
  state_[3] ^= state_[1];
  state_[1] ^= state_[2];
  state_[0] ^= state_[3];
  state_[2] ^= t;
  state_[3] = rotl(state_[3], 45);
  return result;
}

double Generator::uniform() { return static_cast<double>(next_u64() >> 11) * 0x1.0p-53; }

float Generator::uniform_float() { return static_cast<float>(next_u64() >> 40) * 0x1.0p-24f; }

double Generator::normal() {
  // Box-Muller: two uniforms give two independent normals; keep the second.
  if (has_spare_normal_) {
    has_spare_normal_ = false;
    return spare_normal_;
  }
  const double u1 = 1.0 - uniform();  // (0, 1]: log is finite
  const double u2 = uniform();
  const double r = std::sqrt(-2.0 * std::log(u1));
  spare_normal_ = r * std::sin(2.0 * std::numbers::pi * u2);
  has_spare_normal_ = true;
  return r * std::cos(2.0 * std::numbers::pi * u2);
}

int64_t Generator::integer(int64_t low, int64_t high) {
  RG_CHECK(low < high, "randint", "low ({}) must be less than high ({})", low, high);
  const uint64_t range = static_cast<uint64_t>(high - low);
  // Reject the top partial block of 2^64 so every value is equally likely.
  const uint64_t limit = UINT64_MAX - UINT64_MAX % range;
  uint64_t x;
  do {
    x = next_u64();
  } while (x >= limit);
  return low + static_cast<int64_t>(x % range);
}

Generator& default_generator() {
  static Generator generator(0);
  return generator;
}

void manual_seed(uint64_t seed) { default_generator().manual_seed(seed); }

Tensor rand(const Shape& shape, DType dtype, Generator* gen) {
  RG_CHECK(is_floating(dtype), "rand", "dtype must be floating, got {}", dtype_name(dtype));
  Generator& g = pick(gen);
  if (dtype == DType::Float32) return fill_random(shape, dtype, [&] { return g.uniform_float(); });
  return fill_random(shape, dtype, [&] { return g.uniform(); });
}

Tensor randn(const Shape& shape, DType dtype, Generator* gen) {
  RG_CHECK(is_floating(dtype), "randn", "dtype must be floating, got {}", dtype_name(dtype));
  Generator& g = pick(gen);
  return fill_random(shape, dtype, [&] { return g.normal(); });
}

Tensor randint(int64_t low, int64_t high, const Shape& shape, Generator* gen) {
  RG_CHECK(low < high, "randint", "low ({}) must be less than high ({})", low, high);
  Generator& g = pick(gen);
  return fill_random(shape, DType::Int64, [&] { return g.integer(low, high); });
}

Tensor trunc_normal(const Shape& shape, double mean, double std, double a, double b, DType dtype,
                    Generator* gen) {
  RG_CHECK(is_floating(dtype), "trunc_normal", "dtype must be floating, got {}", dtype_name(dtype));
  RG_CHECK(std > 0, "trunc_normal", "std must be positive, got {}", std);
  RG_CHECK(a < b, "trunc_normal", "the interval [{}, {}] is empty", a, b);
  // Rejection needs the interval to carry real probability mass.
  RG_CHECK(b > mean - 6 * std && a < mean + 6 * std, "trunc_normal",
           "the interval [{}, {}] lies more than 6 std from the mean {}", a, b, mean);
  Generator& g = pick(gen);
  return fill_random(shape, dtype, [&] {
    double x;
    do {
      x = mean + std * g.normal();
    } while (x < a || x > b);
    return x;
  });
}

}  // namespace ropegrad
