// Helpers shared by the test executables (header-only). Every tests/test_*.cpp
// includes it as "tests/support/test_util.h" and writes
//   using namespace ropegrad::testing;
// (always spell GoogleTest's namespace ::testing, with the leading colons).
//
//   bad input        error_of, expect_error_with, EXPECT_RG_ERROR
//   fixtures         fixture_path, load_fixture, nn_fixture
//   comparisons      Tol, all_close, expect_close, expect_nn_close, max_abs_diff,
//                    F32Bound, within_f32_bound, condition_numbers, expect_f32_parity (float32),
//                    all_finite, dtype_tag
//   leaves           kF64, param, leaf
//   nn parity        check_module_parity
//   attention setup  make_rope, padding_mask, alibi_bias, ScoreMaskKind, kScoreMaskKinds,
//                    score_mask_name, score_mask
//
// A comparison failure names the worst element, its index and both values, in
// the spirit of llm.c's check_tensor, so a broken kernel points at itself.
#pragma once

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <exception>
#include <functional>
#include <limits>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "autograd/engine.h"
#include "autograd/ops.h"
#include "nn/attention_scores.h"
#include "nn/module.h"
#include "io/npy.h"
#include "nn/rope.h"
#include "tensor/error.h"
#include "tensor/print.h"

// The course's checks name the fixtures' folder through course/paths.h (a
// generated file, so that they compile alike in every tree).
#ifdef ROPEGRAD_COURSE_PATHS
#include "course/paths.h"
#endif
#ifndef ROPEGRAD_FIXTURES
#error "ROPEGRAD_FIXTURES (the tests/fixtures directory) is set by tests/CMakeLists.txt"
#endif

namespace ropegrad::testing {

// ---- bad input ------------------------------------------------------------------------------

namespace detail {

// Runs f. Returns true and sets `message` when it throws a ropegrad::Error;
// anything else (another exception, or nothing thrown) is a test failure.
template <typename F>
bool throws_error(F&& f, std::string& message) {
  try {
    std::forward<F>(f)();
  } catch (const Error& e) {
    message = e.what();
    return true;
  } catch (const std::exception& e) {
    ADD_FAILURE() << "expected a ropegrad::Error, got another exception: " << e.what();
    return false;
  }
  ADD_FAILURE() << "expected a ropegrad::Error, nothing was thrown";
  return false;
}

}  // namespace detail

// The message of the ropegrad::Error that f throws ("" and a test failure if
// it throws nothing or another exception). Usage:
//   EXPECT_THAT(error_of([&] { matmul(a, b); }), HasSubstr("matmul"));
template <typename F>
std::string error_of(F&& f) {
  std::string message;
  detail::throws_error(std::forward<F>(f), message);
  return message;
}

// f throws a ropegrad::Error whose message contains every one of `parts`.
inline void expect_error_with(const std::function<void()>& f, const std::vector<std::string>& parts) {
  std::string msg;
  if (!detail::throws_error(f, msg)) return;
  for (const std::string& part : parts) {
    EXPECT_NE(msg.find(part), std::string::npos)
        << "message \"" << msg << "\" does not mention \"" << part << "\"";
  }
}

// EXPECT_RG_ERROR(op(args), "op", "offending value", ...): the statement throws
// a ropegrad::Error naming every part; a failure shows the statement.
#define EXPECT_RG_ERROR(statement, ...)                                                 \
  do {                                                                                  \
    SCOPED_TRACE(#statement);                                                           \
    ::ropegrad::testing::expect_error_with([&] { (void)(statement); }, {__VA_ARGS__}); \
  } while (false)

// ---- fixtures -------------------------------------------------------------------------------

// The absolute path of `relative` under tests/fixtures.
inline std::string fixture_path(const std::string& relative) {
  return std::string(ROPEGRAD_FIXTURES) + "/" + relative;
}

// tests/fixtures/<relative>.npy, e.g. load_fixture("attention/sdpa_causal.x").
inline Tensor load_fixture(const std::string& relative) {
  return nn::load_npy(fixture_path(relative + ".npy"));
}

// The layout of make_nn_fixtures.py: tests/fixtures/nn/<case>/<f32|f64>/<name>.npy.
inline Tensor nn_fixture(const std::string& case_name, const std::string& dt, const std::string& name) {
  return load_fixture("nn/" + case_name + "/" + dt + "/" + name);
}

// ---- comparisons ----------------------------------------------------------------------------

// Element i passes when |actual_i - expected_i| <= atol' + rtol |expected_i|, with
// atol' = atol + atol_of_max * max_j |expected_j|. The atol_of_max term serves
// float32 results whose entries are sums of terms as large as the tensor's
// largest: two programs summing in different orders differ by a few of its ulps.
struct Tol {
  double rtol = 0, atol = 0, atol_of_max = 0;
};

// "f64" / "f32": the fixture scripts' directory and file tags.
inline const char* dtype_tag(DType dtype) { return dtype == DType::Float64 ? "f64" : "f32"; }

namespace detail {

// Row-major flat index -> "[i, j, k]" in `shape`.
inline std::string index_str(const Shape& shape, size_t flat) {
  std::vector<int64_t> idx(shape.size());
  for (size_t d = shape.size(); d-- > 0;) {
    const auto n = static_cast<size_t>(std::max<int64_t>(shape[d], 1));
    idx[d] = static_cast<int64_t>(flat % n);
    flat /= n;
  }
  std::string s = "[";
  for (size_t d = 0; d < idx.size(); ++d) s += (d ? ", " : "") + std::to_string(idx[d]);
  return s + "]";
}

}  // namespace detail


// ---- float32 error bounds -------------------------------------------------------------------
//
// Two float32 programs computing the same value (ropegrad and PyTorch, or two
// OpenBLAS kernels) round differently, so their results differ. How much
// follows from backward error analysis: a float32 sum of K terms is the exact
// sum of terms each perturbed by at most gamma(K) = K u / (1 - K u) relative,
// u = 2^-24 (float32's unit roundoff). A result f_i that goes through `stages`
// such rounded stages is, to first order, f_i at leaves (inputs, parameters,
// upstream weights) perturbed by at most stages * gamma(K) relative, so it is
// within stages * gamma(K) * c_i of the exact value, where
//   c_i = sum_j |d f_i / d x_j| |x_j|   (the componentwise condition of f_i),
// and two programs differ by at most twice that, plus the rounding of each
// stored result, stages * u |f_i| per program. For a matmul c_i is twice the
// sum of |terms| (each term is linear in both operands); through exp, a
// softmax or a cancelling difference it grows with the amplification.
// condition_numbers() computes c_i in float64 by central differences, one leaf
// element at a time.

inline constexpr double kUnitRoundoff32 = 0x1p-24;

inline double gamma32(int64_t k) {
  const double ku = static_cast<double>(k) * kUnitRoundoff32;
  return ku / (1 - ku);
}

struct F32Bound {
  int64_t reduction = 1;  // K: the longest sum any result element goes through, per stage
  int stages = 3;         // rounded stages chained between the inputs and a result
};

namespace detail {

// Element i passes when |actual_i - expected_i| <= allowed(i) (false for NaN).
template <typename Allowed>
::testing::AssertionResult all_within(const Tensor& actual, const Tensor& expected, Allowed allowed,
                                      const std::string& rule) {
  if (!actual.defined()) return ::testing::AssertionFailure() << "actual is undefined (no gradient?)";
  if (!expected.defined()) return ::testing::AssertionFailure() << "expected is undefined";
  if (actual.shape() != expected.shape())
    return ::testing::AssertionFailure() << "shape " << shape_str(actual.shape()) << " != expected "
                                         << shape_str(expected.shape());
  const std::vector<double> a = actual.to_vector<double>(), e = expected.to_vector<double>();
  size_t bad = 0, worst = 0;
  double worst_ratio = 0;
  for (size_t i = 0; i < a.size(); ++i) {
    const double diff = std::abs(a[i] - e[i]), ok = allowed(i, e[i]);
    if (diff <= ok) continue;
    double ratio = diff / ok;
    if (std::isnan(ratio)) ratio = std::numeric_limits<double>::infinity();
    if (bad++ == 0 || ratio > worst_ratio) worst = i, worst_ratio = ratio;
  }
  if (bad == 0) return ::testing::AssertionSuccess();
  ::testing::AssertionResult r = ::testing::AssertionFailure();
  r << bad << " of " << a.size() << " elements differ; worst at " << index_str(actual.shape(), worst) << " (flat "
    << worst << "): " << fmt::format("{:.17g} vs expected {:.17g}", a[worst], e[worst]) << " (|diff| "
    << std::abs(a[worst] - e[worst]) << ", allowed ";
  if (const double ok = allowed(worst, e[worst]); std::isnan(ok)) r << "none: the tolerance is not a number";
  else r << ok;
  return r << "; " << rule << ")";
}

}  // namespace detail

// actual and expected: two float32 computations of one quantity; condition:
// c_i per element (same shape). See the block above.
inline ::testing::AssertionResult within_f32_bound(const Tensor& actual, const Tensor& expected,
                                                   const Tensor& condition, F32Bound b) {
  if (!condition.defined() || condition.shape() != expected.shape())
    return ::testing::AssertionFailure() << "condition tensor missing or of another shape";
  const std::vector<double> c = condition.to_vector<double>();
  // The bound needs the float64 run's condition numbers: where that run is
  // not a number itself (inf - inf of an overflow, a NaN), no float32 bound
  // exists there (it used to read "allowed nan").
  for (size_t i = 0; i < c.size(); ++i) {
    if (!std::isnan(c[i])) continue;
    return ::testing::AssertionFailure()
           << "the float64 run of the same code is not finite at " << detail::index_str(expected.shape(), i) << " (flat " << i
           << "; its condition number is " << c[i]
           << "), so no float32 bound applies there: the float64 result is not finite there (an overflow or a NaN)";
  }
  const double g = 2 * b.stages * gamma32(b.reduction), r = 2 * b.stages * kUnitRoundoff32;
  return detail::all_within(
      actual, expected, [&](size_t i, double e) { return g * std::abs(c[i]) + r * std::abs(e); },
      fmt::format("float32 bound: 2 x {} stages x gamma({}) x cond + {} stages x 2u |e|", b.stages, b.reduction,
                  b.stages));
}

// Named results of one parity run: the forward output and the gradients.
using NamedTensors = std::vector<std::pair<std::string, Tensor>>;
// A parity run built from its float leaves (inputs, parameters, upstream
// weights; fresh tensors of one float dtype, which the run may mark requires_grad).
using ParityRun = std::function<NamedTensors(const std::vector<Tensor>& leaves)>;

namespace detail {
inline std::vector<Tensor> fresh(const std::vector<Tensor>& leaves, DType dtype) {
  std::vector<Tensor> out;
  for (const Tensor& t : leaves) out.push_back(clone(to(t, dtype)).detach());
  return out;
}
}  // namespace detail

// c_i for every result of run at `leaves`, in float64: column by column,
// (f(x + h x_j e_j) - f(x - h x_j e_j)) / 2h = (d f / d x_j) x_j, summed in |.|.
inline NamedTensors condition_numbers(const ParityRun& run, const std::vector<Tensor>& leaves) {
  const std::vector<Tensor> base = detail::fresh(leaves, DType::Float64);
  NamedTensors cond = run(detail::fresh(base, DType::Float64));
  std::vector<std::vector<double>> acc;
  for (auto& [name, t] : cond) acc.emplace_back(static_cast<size_t>(t.numel()), 0.0);
  constexpr double h = 1e-6;
  for (size_t k = 0; k < base.size(); ++k) {
    const std::vector<double> values = base[k].to_vector<double>();
    for (size_t j = 0; j < values.size(); ++j) {
      if (values[j] == 0) continue;
      std::vector<std::vector<double>> side[2];
      for (int s = 0; s < 2; ++s) {
        std::vector<Tensor> x = detail::fresh(base, DType::Float64);
        std::vector<double> v = values;
        v[j] *= s == 0 ? 1 + h : 1 - h;
        x[k] = tensor(v, base[k].shape(), DType::Float64);
        for (const auto& [name, t] : run(x)) side[s].push_back(t.to_vector<double>());
      }
      for (size_t r = 0; r < acc.size(); ++r)
        for (size_t i = 0; i < acc[r].size(); ++i) acc[r][i] += std::abs(side[0][r][i] - side[1][r][i]) / (2 * h);
    }
  }
  for (size_t r = 0; r < cond.size(); ++r) {
    const Shape shape = cond[r].second.shape();  // may be 0-d
    cond[r].second = reshape(tensor(acc[r], {static_cast<int64_t>(acc[r].size())}, DType::Float64), shape);
  }
  return cond;
}

// The float32 side of a parity test: the run on `leaves` in float32; each
// result must be within the float32 bound of expected(name), PyTorch's value,
// with c_i from condition_numbers.
inline void expect_f32_parity(const ParityRun& run, const std::vector<Tensor>& leaves,
                              const std::function<Tensor(const std::string&)>& expected, F32Bound bound,
                              const std::string& label) {
  const NamedTensors results = run(detail::fresh(leaves, DType::Float32));
  const NamedTensors cond = condition_numbers(run, leaves);
  ASSERT_EQ(results.size(), cond.size()) << label;
  for (size_t i = 0; i < results.size(); ++i) {
    const auto& [name, t] = results[i];
    ASSERT_TRUE(t.defined()) << label << " " << name << ": undefined";
    EXPECT_EQ(dtype_name(t.dtype()), dtype_name(DType::Float32)) << label << " " << name;
    EXPECT_TRUE(within_f32_bound(t, expected(name), cond[i].second, bound)) << label << " " << name;
  }
}

// Both defined, the same shape, and every element within `tol` (see Tol). NaN
// anywhere, or infinities, fail: |inf - inf| is NaN, never <= a tolerance. On
// failure: how many elements differ and the worst one (by |diff| / allowed).
// Usage: EXPECT_TRUE(all_close(out, expected, {1e-10, 1e-12})) << "grad x";
inline ::testing::AssertionResult all_close(const Tensor& actual, const Tensor& expected, Tol tol) {
  double largest = 0;
  if (expected.defined())
    for (double v : expected.to_vector<double>()) largest = std::max(largest, std::abs(v));
  const double atol = tol.atol + tol.atol_of_max * largest;
  return detail::all_within(
      actual, expected, [&](size_t, double e) { return atol + tol.rtol * std::abs(e); },
      fmt::format("rtol {}, atol {}", tol.rtol, atol));
}

// all_close, and the same dtype too; `label` names the tensor in a failure.
inline void expect_close(const Tensor& actual, const Tensor& expected, Tol tol, const std::string& label) {
  ASSERT_TRUE(actual.defined()) << label << ": undefined tensor";
  ASSERT_TRUE(expected.defined()) << label << ": undefined expected tensor";
  ASSERT_EQ(dtype_name(actual.dtype()), dtype_name(expected.dtype())) << label;
  EXPECT_TRUE(all_close(actual, expected, tol)) << label;
}

inline void expect_close(const Tensor& actual, const Tensor& expected, double rtol, double atol,
                         const std::string& label) {
  expect_close(actual, expected, Tol{rtol, atol}, label);
}

// The tolerance of the nn parity tests (make_nn_fixtures.py cases) against torch:
// float64 rtol 1e-10 atol 1e-12, float32 rtol 1e-5 atol 1e-7.
inline Tol nn_parity_tol(DType dtype) {
  return dtype == DType::Float64 ? Tol{1e-10, 1e-12} : Tol{1e-5, 1e-7};
}

// expect_close with the nn parity tolerance of expected's dtype.
inline void expect_nn_close(const Tensor& actual, const Tensor& expected, const std::string& label) {
  ASSERT_TRUE(expected.defined()) << label << ": undefined expected tensor";
  expect_close(actual, expected, nn_parity_tol(expected.dtype()), label);
}

// max |a - b| over two same-shape tensors; NaN if any difference is NaN (so
// EXPECT_LT(max_abs_diff(a, b), tol) cannot pass over a NaN), and a failure
// (plus the max over the common prefix) when the shapes differ.
inline double max_abs_diff(const Tensor& a, const Tensor& b) {
  EXPECT_EQ(a.shape(), b.shape());
  const std::vector<double> x = a.to_vector<double>(), y = b.to_vector<double>();
  double m = 0;
  for (size_t i = 0; i < x.size() && i < y.size(); ++i) {
    const double d = std::abs(x[i] - y[i]);
    if (std::isnan(d)) return d;
    m = std::max(m, d);
  }
  return m;
}

// No NaN and no infinity in t.
inline bool all_finite(const Tensor& t) {
  for (double v : t.to_vector<double>())
    if (!std::isfinite(v)) return false;
  return true;
}

// ---- leaves -------------------------------------------------------------------------------

inline constexpr DType kF64 = DType::Float64;

// A float64 leaf that requires grad: param({1, 2, 3, 4}, {2, 2}).
inline Tensor param(const std::vector<double>& values, Shape shape = {}) {
  return tensor(values, std::move(shape), kF64).requires_grad_();
}

// A leaf of `dtype` holding t's values (rounded when narrowing), cut from t's graph.
inline Tensor leaf(const Tensor& t, DType dtype, bool requires_grad = true) {
  return to(t, dtype).detach().requires_grad_(requires_grad);
}

// ---- nn parity ------------------------------------------------------------------------------

// The state_dict names of m's parameters, in order.
inline std::vector<std::string> parameter_names(const nn::Module& m) {
  std::vector<std::string> names;
  for (const auto& [name, p] : m.named_parameters()) names.push_back(name);
  return names;
}

// The run of a module parity check: leaves are x, w, then the parameters in
// `names` order; it returns "out" and the gradients of sum(out * w) w.r.t. x
// ("grad_x") and every parameter ("grad_<name>").
inline ParityRun module_parity_run(nn::Module& m, const std::function<Tensor(const Tensor&)>& forward,
                                   const std::vector<std::string>& names) {
  return [&m, forward, names](const std::vector<Tensor>& leaves) {
    m.to(leaves[0].dtype());
    nn::StateDict state;
    for (size_t i = 0; i < names.size(); ++i) state[names[i]] = leaves[2 + i];
    m.load_state_dict(state);
    m.zero_grad();
    Tensor x = leaves[0];
    x.requires_grad_(true);
    const Tensor y = forward(x);
    // d sum(y * w) = the backward of y with the upstream gradient w (directly:
    // the course's checks of a module use no other exercise's sum or mul rule).
    backward(y, clone(reshape(leaves[1], y.shape())));
    NamedTensors r = {{"out", y.detach()}, {"grad_x", x.grad()}};
    for (const auto& [name, p] : m.named_parameters()) r.emplace_back("grad_" + name, p.grad());
    return r;
  };
}

// x, w and the parameters of nn/<case>/<dt>/, the leaves of module_parity_run.
inline std::vector<Tensor> module_parity_leaves(const std::string& c, const std::string& dt,
                                                const std::vector<std::string>& names) {
  std::vector<Tensor> leaves = {nn_fixture(c, dt, "x"), nn_fixture(c, dt, "w")};
  for (const std::string& name : names) leaves.push_back(nn_fixture(c, dt, name));
  return leaves;
}

// Loads nn/<case>/<dt>/ parameters into m (by state_dict name), runs x
// through `forward` and compares "out" and the gradients of sum(out * w)
// w.r.t. x ("grad_x") and every parameter ("grad_<name>"): float64 with
// nn_parity_tol, float32 within the float32 error bound (above). K is the
// longest reduction in these modules: over rows (B T, for weight gradients) or
// over a parameter's dims; `stages` the longest chain of rounded operations.
inline void check_module_parity(nn::Module& m, const std::function<Tensor(const Tensor&)>& forward,
                                const std::string& c, const std::string& dt, int stages = 0) {
  const std::vector<std::string> names = parameter_names(m);
  const ParityRun run = module_parity_run(m, forward, names);
  const std::vector<Tensor> leaves = module_parity_leaves(c, dt, names);
  const auto expected = [&](const std::string& name) { return nn_fixture(c, dt, name); };
  if (dt == "f64") {
    for (const auto& [name, t] : run(leaves)) expect_nn_close(t, expected(name), c + "/" + dt + " " + name);
    return;
  }
  ASSERT_GT(stages, 0) << c << "/f32: a float32 parity check needs its number of rounded stages";
  const Tensor& x = leaves[0];
  int64_t k = x.dim() > 1 ? x.numel() / x.size(-1) : 1;
  for (size_t i = 2; i < leaves.size(); ++i)
    for (int64_t d : leaves[i].shape()) k = std::max(k, d);
  expect_f32_parity(run, leaves, expected, {k, stages}, c + "/f32");
}

// ---- attention setup ------------------------------------------------------------------------

// Interleaved RoPE for heads of head_dim, a 16-position table (it extends on demand).
inline std::shared_ptr<nn::RotaryEmbedding> make_rope(int64_t head_dim, DType dtype) {
  nn::RopeConfig c;
  c.head_dim = head_dim;
  c.max_seq_len = 16;
  return std::make_shared<nn::RotaryEmbedding>(c, dtype);
}

// The masks of the fused score-kernel gradchecks (W2, triple).
enum class ScoreMaskKind { None, Causal, BoolPadding, Additive };
inline const std::vector<ScoreMaskKind> kScoreMaskKinds = {ScoreMaskKind::None, ScoreMaskKind::Causal,
                                                           ScoreMaskKind::BoolPadding, ScoreMaskKind::Additive};

inline std::string score_mask_name(ScoreMaskKind k) {
  switch (k) {
    case ScoreMaskKind::None: return "none";
    case ScoreMaskKind::Causal: return "causal";
    case ScoreMaskKind::BoolPadding: return "bool_padding";
    case ScoreMaskKind::Additive: return "additive";
  }
  return "";
}

// Bool (B, 1, 1, Nk) key-padding mask: batch 1's last two keys are hidden.
inline Tensor padding_mask(int64_t b, int64_t nk) {
  std::vector<bool> keep;
  for (int64_t i = 0; i < b; ++i)
    for (int64_t j = 0; j < nk; ++j) keep.push_back(!(i == 1 && j >= nk - 2));
  return tensor_bool(keep, {b, 1, 1, nk});
}

// Float64 (1, H, Nq, Nk) ALiBi-like additive mask: -0.5 / (h + 1) |i - j|.
inline Tensor alibi_bias(int64_t h, int64_t nq, int64_t nk) {
  std::vector<double> bias;
  for (int64_t hh = 0; hh < h; ++hh)
    for (int64_t i = 0; i < nq; ++i)
      for (int64_t j = 0; j < nk; ++j) bias.push_back(-0.5 / static_cast<double>(hh + 1) * std::abs(i - j));
  return tensor(bias, {1, h, nq, nk}, DType::Float64);
}

// The score mask of `kind` for scores (B, H, Nq, Nk).
inline nn::ScoreMask score_mask(ScoreMaskKind kind, int64_t b, int64_t h, int64_t nq, int64_t nk) {
  nn::ScoreMask m;
  m.causal = kind == ScoreMaskKind::Causal;
  if (kind == ScoreMaskKind::BoolPadding) m.mask = padding_mask(b, nk);
  if (kind == ScoreMaskKind::Additive) m.mask = alibi_bias(h, nq, nk);
  return m;
}

}  // namespace ropegrad::testing
