// Helpers shared by the test executables (header-only). Every tests/test_*.cpp
// includes it as "tests/support/test_util.h" and writes
//   using namespace ropegrad::testing;
// (always spell GoogleTest's namespace ::testing, with the leading colons).
//
//   bad input        error_of, expect_error_with, EXPECT_RG_ERROR
//   fixtures         fixture_path, load_fixture, nn_fixture
//   comparisons      Tol, all_close, expect_close, expect_nn_close, max_abs_diff,
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
#include "nn/npy.h"
#include "nn/rope.h"
#include "tensor/error.h"
#include "tensor/print.h"

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

// Both defined, the same shape, and every element within `tol` (see Tol). NaN
// anywhere, or infinities, fail: |inf - inf| is NaN, never <= a tolerance. On
// failure: how many elements differ and the worst one (by |diff| / allowed).
// Usage: EXPECT_TRUE(all_close(out, expected, {1e-10, 1e-12})) << "grad x";
inline ::testing::AssertionResult all_close(const Tensor& actual, const Tensor& expected, Tol tol) {
  if (!actual.defined()) return ::testing::AssertionFailure() << "actual is undefined (no gradient?)";
  if (!expected.defined()) return ::testing::AssertionFailure() << "expected is undefined";
  if (actual.shape() != expected.shape())
    return ::testing::AssertionFailure() << "shape " << shape_str(actual.shape()) << " != expected "
                                         << shape_str(expected.shape());
  const std::vector<double> a = actual.to_vector<double>(), e = expected.to_vector<double>();
  double largest = 0;
  for (double v : e) largest = std::max(largest, std::abs(v));
  const double atol = tol.atol + tol.atol_of_max * largest;
  size_t bad = 0, worst = 0;
  double worst_ratio = 0;
  for (size_t i = 0; i < a.size(); ++i) {
    const double diff = std::abs(a[i] - e[i]), allowed = atol + tol.rtol * std::abs(e[i]);
    if (diff <= allowed) continue;  // false for NaN too
    double ratio = diff / allowed;
    if (std::isnan(ratio)) ratio = std::numeric_limits<double>::infinity();
    if (bad++ == 0 || ratio > worst_ratio) worst = i, worst_ratio = ratio;
  }
  if (bad == 0) return ::testing::AssertionSuccess();
  const double allowed = atol + tol.rtol * std::abs(e[worst]);
  return ::testing::AssertionFailure()
         << bad << " of " << a.size() << " elements differ; worst at "
         << detail::index_str(actual.shape(), worst) << " (flat " << worst << "): "
         << fmt::format("{:.17g} vs expected {:.17g}", a[worst], e[worst]) << " (|diff| "
         << std::abs(a[worst] - e[worst]) << ", allowed " << allowed << "; rtol " << tol.rtol << ", atol "
         << atol << ")";
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

// Loads nn/<case>/<dt>/ parameters into m (by state_dict name; dt "f64" first
// moves m to float64), runs x through `forward` and compares, with
// expect_nn_close, "out" and the gradients of sum(out * w) w.r.t. x ("grad_x")
// and every parameter ("grad_<name>").
inline void check_module_parity(nn::Module& m, const std::function<Tensor(const Tensor&)>& forward,
                                const std::string& c, const std::string& dt) {
  if (dt == "f64") m.to(DType::Float64);
  nn::StateDict state;
  for (const auto& [name, p] : m.named_parameters()) state[name] = nn_fixture(c, dt, name);
  m.load_state_dict(state);
  Tensor x = nn_fixture(c, dt, "x");
  x.requires_grad_(true);
  const Tensor y = forward(x);
  expect_nn_close(y, nn_fixture(c, dt, "out"), c + "/" + dt + " forward");
  backward(sum(mul(y, nn_fixture(c, dt, "w"))));
  expect_nn_close(x.grad(), nn_fixture(c, dt, "grad_x"), c + "/" + dt + " grad x");
  for (const auto& [name, p] : m.named_parameters()) {
    expect_nn_close(p.grad(), nn_fixture(c, dt, "grad_" + name), c + "/" + dt + " grad " + name);
  }
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
