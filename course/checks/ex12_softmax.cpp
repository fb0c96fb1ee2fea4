// ex12-softmax: stable softmax and log_softmax, forward and backward kernels
// (tensor/softmax.cpp).
#include <algorithm>
#include <cmath>
#include <functional>
#include <set>

#include "course/checks/check_util.h"
#include "course/checks/linear_form.h"
#include "course/checks/ops_fixture.h"

namespace ropegrad::course {
namespace {

// float32 against torch: the bound tests/test_parity.cpp gives these cases.
// K = the case's input size (15 or 24: no row sums more terms) and 3 rounded
// stages (the row's exp-sum, the division or log, the backward's dot product
// and update). The amplification through exp is in the condition numbers.
constexpr F32Bound kSoftmaxBound15{15, 3}, kSoftmaxBound24{24, 3};

OpFn along(Tensor (*op)(const Tensor&, int64_t), int64_t dim) {
  return [op, dim](const OpInputs& in) -> std::vector<Tensor> { return {op(in.at("x"), dim)}; };
}

void softmax_cases(const std::string& dt, Part part) {
  expect_op_parity("softmax_last", dt, along(softmax, -1), kSoftmaxBound15, part);  // (3, 5), rows
  expect_op_parity("softmax_dim0", dt, along(softmax, 0), kSoftmaxBound15, part);   // (3, 5), columns
  expect_op_parity("softmax_mid", dt, along(softmax, 1), kSoftmaxBound24, part);    // (2, 3, 4), the middle dim
}
void log_softmax_cases(const std::string& dt, Part part) {
  expect_op_parity("log_softmax_last", dt, along(log_softmax, -1), kSoftmaxBound15, part);
  expect_op_parity("log_softmax_dim0", dt, along(log_softmax, 0), kSoftmaxBound15, part);
  expect_op_parity("log_softmax_mid", dt, along(log_softmax, 1), kSoftmaxBound24, part);
}
// Logits of size 1000 (x = 1000 * randn) and logits near 1000: exp(1000)
// overflows even float64, so only the stable form gives torch's values.
void large_cases(Part part) {
  expect_op_parity("softmax_large", "f64", along(softmax, 1), {}, part);
  expect_op_parity("softmax_large_close", "f64", along(softmax, -1), {}, part);
  expect_op_parity("log_softmax_large", "f64", along(log_softmax, 1), {}, part);
  expect_op_parity("log_softmax_large_close", "f64", along(log_softmax, -1), {}, part);
}

// The forward first: these run no backward.
//
// softmax of three rows of five distinct, unsorted logits: y_j = e_j / Z with
// e_j = exp(x_j - max) and Z the row's sum of e. A wrong row is read as
// e_j / D_j, each entry's divisor D_j: one number per row, or one of the
// partial sums of e (up to j, before j, from j, all but j), named only when it
// gives every entry of every row.
TEST(ex12_softmax, softmax_of_three_rows) {
  const std::vector<double> xs = {0.5, -1.0, 2.0, 0.1, -0.3, 1.2, 0.7, -0.4, 3.0, 0.0, -2.0, 0.3, 0.9, -0.6, 1.5};
  constexpr int64_t kRows = 3, kN = 5;
  const Tensor y = softmax(tensor(xs, {kRows, kN}, kF64), -1);
  std::vector<double> e(xs.size()), want(xs.size()), total(kRows);
  for (int64_t r = 0; r < kRows; ++r) {
    const double m = *std::max_element(xs.begin() + r * kN, xs.begin() + (r + 1) * kN);
    total[r] = 0;
    for (int64_t j = 0; j < kN; ++j) total[r] += e[r * kN + j] = std::exp(xs[r * kN + j] - m);
    for (int64_t j = 0; j < kN; ++j) want[r * kN + j] = e[r * kN + j] / total[r];
  }
  const Tensor expected = tensor(want, {kRows, kN}, kF64);
  if (!y.defined() || y.shape() != expected.shape() || all_close(y, expected, f64_tol())) {
    expect_values(y, expected, f64_tol(), "softmax of 3 rows");  // no tensor, another shape, or right
    return;
  }
  const std::vector<double> got = y.to_vector<double>();
  const auto close = [](double a, double b) { return std::abs(a - b) <= 1e-9 * std::max(std::abs(a), std::abs(b)); };
  // Each entry's divisor, when every entry is finite and not 0.
  std::vector<double> divisor(got.size());
  bool readable = true;
  for (size_t i = 0; i < got.size(); ++i) {
    readable = readable && std::isfinite(got[i]) && got[i] != 0;
    divisor[i] = e[i] / got[i];
  }
  std::string right_entries;  // "entries 4 of each row" when the right ones are the same in every row
  {
    std::vector<bool> right_at(kN, true), wrong_at(kN, true);
    for (int64_t r = 0; r < kRows; ++r)
      for (int64_t j = 0; j < kN; ++j) {
        const bool ok = close(got[r * kN + j], want[r * kN + j]);
        right_at[j] = right_at[j] && ok;
        wrong_at[j] = wrong_at[j] && !ok;
      }
    std::string list;
    bool consistent = true;
    for (int64_t j = 0; j < kN; ++j) {
      consistent = consistent && (right_at[j] || wrong_at[j]);
      if (right_at[j]) list += (list.empty() ? "" : ", ") + std::to_string(j);
    }
    if (consistent)
      right_entries = list.empty() ? "no entry is right" : fmt::format("right only at entry {} of each row", list);
  }
  if (readable) {
    // One divisor per row.
    bool per_row = true;
    for (int64_t r = 0; r < kRows; ++r)
      for (int64_t j = 1; j < kN; ++j) per_row = per_row && close(divisor[r * kN + j], divisor[r * kN]);
    if (per_row) {
      std::string shown;
      for (int64_t r = 0; r < kRows; ++r)
        shown += fmt::format("{}row {}: {:.6g} (Z = {:.6g})", r ? ", " : "", r, divisor[r * kN], total[r]);
      ADD_FAILURE() << "softmax of 3 rows: every entry of a row is e_j = exp(x_j - max) divided by one number D, "
                       "not by the row's sum Z of e ("
                    << shown << "): each row sums to Z / D, not 1";
      return;
    }
    struct Partial {
      const char* text;
      bool (*in)(int64_t k, int64_t j);
    };
    const std::vector<Partial> partials = {
        {"the sum of e_k over k <= j (a running total up to and including j)", [](int64_t k, int64_t j) { return k <= j; }},
        {"the sum of e_k over k < j", [](int64_t k, int64_t j) { return k < j; }},
        {"the sum of e_k over k >= j", [](int64_t k, int64_t j) { return k >= j; }},
        {"the sum of e_k over k > j", [](int64_t k, int64_t j) { return k > j; }},
        {"the sum of e_k over k != j", [](int64_t k, int64_t j) { return k != j; }}};
    for (const Partial& p : partials) {
      bool fits = true;
      for (int64_t r = 0; r < kRows && fits; ++r)
        for (int64_t j = 0; j < kN && fits; ++j) {
          double sum = 0;
          for (int64_t k = 0; k < kN; ++k)
            if (p.in(k, j)) sum += e[r * kN + k];
          fits = close(divisor[r * kN + j], sum);
        }
      if (!fits) continue;
      ADD_FAILURE() << "softmax of 3 rows: entry j of each row is e_j = exp(x_j - max) divided by " << p.text
                    << ", not by the whole row's sum of e, at all 15 entries"
                    << (right_entries.empty() ? "" : " (" + right_entries + ", where the two sums agree)");
      return;
    }
  }
  expect_values(y, expected, f64_tol(), "softmax of 3 rows");
}

// log_softmax of the same rows: y_j = (x_j - max) - log Z. A wrong row that
// is the expected plus one number d per row is read as (x_j - max) - log D
// with D = Z exp(-d), and D compared with the row's sums of e that leave one
// entry out (the first, the last, the max's); or d with +-max (the max not
// subtracted, or subtracted twice). Named only when it fits every row.
TEST(ex12_softmax, log_softmax_of_three_rows) {
  const std::vector<double> xs = {0.5, -1.0, 2.0, 0.1, -0.3, 1.2, 0.7, -0.4, 3.0, 0.0, -2.0, 0.3, 0.9, -0.6, 1.5};
  constexpr int64_t kRows = 3, kN = 5;
  const Tensor y = log_softmax(tensor(xs, {kRows, kN}, kF64), -1);
  std::vector<double> want(xs.size()), e(xs.size()), total(kRows), maxes(kRows);
  std::vector<int64_t> argmax(kRows);
  for (int64_t r = 0; r < kRows; ++r) {
    const auto row = xs.begin() + r * kN;
    argmax[r] = std::max_element(row, row + kN) - row;
    maxes[r] = xs[r * kN + argmax[r]];
    total[r] = 0;
    for (int64_t j = 0; j < kN; ++j) total[r] += e[r * kN + j] = std::exp(xs[r * kN + j] - maxes[r]);
    for (int64_t j = 0; j < kN; ++j) want[r * kN + j] = xs[r * kN + j] - maxes[r] - std::log(total[r]);
  }
  const Tensor expected = tensor(want, {kRows, kN}, kF64);
  if (!y.defined() || y.shape() != expected.shape() || all_close(y, expected, f64_tol())) {
    expect_values(y, expected, f64_tol(), "log_softmax of 3 rows");
    return;
  }
  const std::vector<double> got = y.to_vector<double>();
  const auto close = [](double a, double b) { return std::abs(a - b) <= 1e-9 * std::max(1.0, std::abs(b)); };
  std::vector<double> offset(kRows);
  bool per_row = true;
  for (int64_t r = 0; r < kRows; ++r) {
    offset[r] = got[r * kN] - want[r * kN];
    for (int64_t j = 1; j < kN; ++j) per_row = per_row && close(got[r * kN + j] - want[r * kN + j], offset[r]);
  }
  if (per_row) {
    struct Form {
      const char* text;
      std::function<bool(int64_t r)> fits;
    };
    // The sum of e over the row, leaving out entry `skip` (-1: none).
    const auto sum_without = [&](int64_t r, int64_t skip) {
      double sum = 0;
      for (int64_t k = 0; k < kN; ++k)
        if (k != skip) sum += e[r * kN + k];
      return sum;
    };
    const auto total_is = [&](int64_t r, double d) { return close(std::log(d), std::log(total[r]) - offset[r]); };
    const std::vector<Form> forms = {
        {"the expected plus the row's max: x_j - log D with D the row's sum of exp(x_k - max), the max not subtracted "
         "from x_j",
         [&](int64_t r) { return close(offset[r], maxes[r]); }},
        {"the expected minus the row's max", [&](int64_t r) { return close(offset[r], -maxes[r]); }},
        {"(x_j - max) - log D with D the row's sum of exp(x_k - max) without entry 0",
         [&](int64_t r) { return total_is(r, sum_without(r, 0)); }},
        {"(x_j - max) - log D with D the row's sum of exp(x_k - max) without the last entry",
         [&](int64_t r) { return total_is(r, sum_without(r, kN - 1)); }},
        {"(x_j - max) - log D with D the row's sum of exp(x_k - max) without the max's entry",
         [&](int64_t r) { return total_is(r, sum_without(r, argmax[r])); }},
        {"(x_j - max) alone: no log of the row's sum subtracted", [&](int64_t r) { return total_is(r, 1.0); }}};
    for (const Form& f : forms) {
      bool all = true;
      for (int64_t r = 0; r < kRows; ++r) all = all && f.fits(r);
      if (!all) continue;
      ADD_FAILURE() << "log_softmax of 3 rows: each row is the expected plus a number of its own (row 0: "
                    << fmt::format("{:+.6g}, row 1: {:+.6g}, row 2: {:+.6g}", offset[0], offset[1], offset[2])
                    << "); in every row y_j is " << f.text << ", where (x_j - max) - log(sum_k exp(x_k - max)) was "
                    << "expected";
      return;
    }
  }
  expect_values(y, expected, f64_tol(), "log_softmax of 3 rows");
}

// softmax (or log_softmax) of a contiguous (3, 4, 5) x along dim d, in double.
std::vector<double> normalised_along(const std::vector<double>& x, size_t d, bool log) {
  const int64_t shape[] = {3, 4, 5}, strides[] = {20, 5, 1};
  std::vector<double> y(x.size());
  for (int64_t flat = 0; flat < 60; ++flat) {
    const int64_t at = (flat / strides[d]) % shape[d];  // this element's index along d
    if (at != 0) continue;                              // each fibre once, from its first element
    double top = -INFINITY, z = 0;
    for (int64_t k = 0; k < shape[d]; ++k) top = std::max(top, x[flat + k * strides[d]]);
    for (int64_t k = 0; k < shape[d]; ++k) z += std::exp(x[flat + k * strides[d]] - top);
    for (int64_t k = 0; k < shape[d]; ++k) {
      const double v = x[flat + k * strides[d]] - top;
      y[flat + k * strides[d]] = log ? v - std::log(z) : std::exp(v) / z;
    }
  }
  return y;
}

// Each op normalises along the dim it is given: softmax and log_softmax of a
// (3, 4, 5) x along dims 0, 1, 2 and -2. A wrong one is named as the dim it
// normalised along when one dim gives every element.
TEST(ex12_softmax, each_op_normalises_along_the_dim_it_is_given) {
  COURSE_REQUIRES("softmax_of_three_rows", "log_softmax_of_three_rows");
  Generator gen(5);
  const Tensor x = randn({3, 4, 5}, kF64, &gen);
  const std::vector<double> xs = x.to_vector<double>();
  const std::pair<const char*, Tensor (*)(const Tensor&, int64_t)> ops[] = {{"softmax", softmax},
                                                                            {"log_softmax", log_softmax}};
  for (const auto& [name, op] : ops) {
    const bool log = std::string(name) == "log_softmax";
    for (const int64_t dim : {0, 1, 2, -2}) {
      const std::vector<double> got = op(x, dim).to_vector<double>();
      const auto same = [&](size_t d) {
        const std::vector<double> want = normalised_along(xs, d, log);
        for (size_t i = 0; i < got.size(); ++i)
          if (!(std::abs(got[i] - want[i]) <= 1e-12 + 1e-10 * std::abs(want[i]))) return false;
        return true;
      };
      const auto d = static_cast<size_t>(dim < 0 ? dim + 3 : dim);
      if (same(d)) continue;
      std::string along;
      for (size_t other = 0; other < 3; ++other)
        if (other != d && same(other)) along = fmt::format(": it is {} along dim {}{}", name, other, other == 2 ? " (the last)" : "");
      ADD_FAILURE() << fmt::format("{}(x, {}) of x (3, 4, 5) is not normalised along dim {}{}", name, dim, d,
                                   along.empty() ? std::string(" (nor along another dim)") : along + ", not dim " + std::to_string(d));
      return;
    }
  }
}

TEST(ex12_softmax, softmax_matches_torch_float64) { softmax_cases("f64", Part::Forward); }
TEST(ex12_softmax, log_softmax_matches_torch_float64) { log_softmax_cases("f64", Part::Forward); }
// The edge cases once the plain forward is right: a wrong forward fails them
// for its own reason, not for theirs.
#define AFTER_PLAIN_SOFTMAX() COURSE_REQUIRES("softmax_of_three_rows", "softmax_matches_torch_float64")
#define AFTER_PLAIN_LOG_SOFTMAX() COURSE_REQUIRES("log_softmax_of_three_rows", "log_softmax_matches_torch_float64")

TEST(ex12_softmax, large_logits_match_torch_float64) {  // softmax's and log_softmax's
  COURSE_REQUIRES("softmax_of_three_rows", "softmax_matches_torch_float64", "log_softmax_of_three_rows",
                  "log_softmax_matches_torch_float64");
  large_cases(Part::Forward);
}

// Logits at +100 in float32: exp(100) = 2.7e43 is beyond float32's largest
// value (3.4e38), so softmax without subtracting the row's max gives inf / inf.
void expect_stable(Tensor (*op)(const Tensor&, int64_t), const char* name, const std::vector<double>& want) {
  const Tensor x = tensor({100, 101, 102}, {3}, DType::Float32);
  const Tensor y = op(x, 0);
  if (!all_finite(y)) {
    std::string values;
    for (double v : y.to_vector<double>())
      values += (values.empty() ? "" : ", ") + (std::isnan(v) ? std::string("nan") : fmt::format("{}", v));
    ADD_FAILURE() << name << " of float32 logits [100, 101, 102] gave [" << values
                  << "]: exp(100) overflowed float32 (its largest value is 3.4e38); subtract the row's max first, "
                     "exp(x - max(x)) <= 1";
    return;
  }
  const Tensor expected = tensor(want, {3}, DType::Float32);
  // Each value goes through one exp (fast_exp: within 1e-7 relative), a sum
  // of 3 terms and a division (or a log and a subtraction): at most 6
  // roundings of u = 2^-24 = 6e-8 each, so 1e-6 relative bounds the error.
  expect_values(y, expected, Tol{1e-6, 1e-7}, std::string(name) + " of float32 logits [100, 101, 102]");
}

TEST(ex12_softmax, softmax_of_logits_at_plus_100_does_not_overflow) {
  AFTER_PLAIN_SOFTMAX();
  expect_stable(softmax, "softmax", {0.090030573170380462, 0.24472847105479767, 0.66524095577482185});
}
TEST(ex12_softmax, log_softmax_of_logits_at_plus_100_does_not_overflow) {
  AFTER_PLAIN_LOG_SOFTMAX();
  expect_stable(log_softmax, "log_softmax", {-2.4076059644443806, -1.4076059644443806, -0.40760596444438035});
}

// A row whose logits are all -inf (every key masked) has no distribution:
// softmax gives zeros (not NaN), log_softmax -inf, as torch does for a
// fully masked attention row once NaN is replaced.
TEST(ex12_softmax, fully_masked_row_gives_zeros_not_nan) {
  AFTER_PLAIN_SOFTMAX();
  const double inf = INFINITY;
  const Tensor x = tensor({1, 2, 3, -inf, -inf, -inf}, {2, 3}, kF64);
  expect_values(softmax(x, -1), tensor({0.090030573170380462, 0.24472847105479767, 0.66524095577482185, 0, 0, 0},
                                       {2, 3}, kF64),
                f64_tol(), "softmax of [[1, 2, 3], [-inf, -inf, -inf]]");
}

// A row of -inf is an empty distribution: its probabilities are 0 (softmax,
// above) and their logs -inf, not 0 (log 1) and never NaN.
TEST(ex12_softmax, fully_masked_row_gives_minus_inf_log_probabilities) {
  AFTER_PLAIN_LOG_SOFTMAX();
  const double inf = INFINITY;
  const Tensor x = tensor({1, 2, 3, -inf, -inf, -inf}, {2, 3}, kF64);
  const std::vector<double> got = log_softmax(x, -1).to_vector<double>();
  for (size_t j = 3; j < 6; ++j) {
    if (got[j] != -inf) {
      ADD_FAILURE() << "log_softmax of the row [-inf, -inf, -inf] gives " << got[j] << " at position " << j - 3
                    << ", expected -inf (the log of its probability 0)"
                    << (got[j] == 0 ? ": 0 is log 1, a probability of 1 for every entry" : "");
      return;
    }
  }
}

// The shift is each row's own max, wherever it sits and whatever its sign:
// rows of 0 with 1000 at each position j (exp(1000) overflows float64), a row
// near -1000 (exp(-1000) underflows to 0: the shift must be -1000, not 0),
// and rows with one finite logit, first and last (the rest -inf). Which rows
// are wrong is what the message says; a cause only when the rows part it:
// wrong exactly where the max sits at position 0, or exactly where it is
// below 0.
void expect_shift_by_each_rows_max(Tensor (*op)(const Tensor&, int64_t), const char* name, bool log) {
  const double inf = INFINITY;
  struct Row {
    std::string text;
    std::vector<double> x;
    int max_at;
    bool negative;
  };
  std::vector<Row> rows;
  for (int j = 0; j < 4; ++j) {
    std::vector<double> x(4, 0.0);
    x[j] = 1000;
    rows.push_back({fmt::format("1000 at position {} (0 elsewhere)", j), x, j, false});
  }
  rows.push_back({"[-1000, -1001, -1002, -1003]", {-1000, -1001, -1002, -1003}, 0, true});
  rows.push_back({"[-1003, -1002, -1001, -1000]", {-1003, -1002, -1001, -1000}, 3, true});
  rows.push_back({"[5, -inf, -inf, -inf]", {5, -inf, -inf, -inf}, 0, false});
  rows.push_back({"[-inf, -inf, -inf, 5]", {-inf, -inf, -inf, 5}, 3, false});
  std::vector<std::string> wrong;
  std::set<size_t> wrong_rows;
  bool all_at_0 = true, all_negative = true, negative_right = false;
  for (size_t k = 0; k < rows.size(); ++k) {
    const Row& r = rows[k];
    double m = -inf;
    for (const double v : r.x) m = std::max(m, v);
    double z = 0;
    for (const double v : r.x) z += std::exp(v - m);
    std::vector<double> want;
    for (const double v : r.x) want.push_back(log ? v - m - std::log(z) : std::exp(v - m) / z);
    const std::vector<double> got = op(tensor(r.x, {4}, kF64), 0).to_vector<double>();
    bool right = true;
    for (size_t i = 0; i < 4; ++i) {
      right = right && (got[i] == want[i] || std::abs(got[i] - want[i]) <= 1e-12 + 1e-10 * std::abs(want[i]));
    }
    if (right) {
      if (r.negative) negative_right = true;
      continue;
    }
    wrong_rows.insert(k);
    std::string values;
    for (const double v : got) values += (values.empty() ? "" : ", ") + fmt::format("{:.6g}", v);
    wrong.push_back(fmt::format("{} gives [{}]", r.text, values));
    all_at_0 = all_at_0 && r.max_at == 0;
    all_negative = all_negative && r.negative;
  }
  if (wrong.empty()) return;
  std::string list;
  for (const std::string& w : wrong) list += (list.empty() ? "" : "; ") + w;
  std::string cause;
  if (all_at_0 && wrong.size() == 2 && !wrong_rows.count(4)) {
    // 1000 and 5 at position 0 wrong; every other row right, [-1000, ...] (its max at 0 too, but a shift by
    // -1001 changes nothing there) among them: the row's own values are right, its shift is not.
    cause =
        ": wrong exactly for the rows whose max (1000, 5) is at position 0, where a shift by the max of the "
        "others overflows or finds no finite value; right wherever else the max sits: the max that shifts the "
        "row leaves out position 0";
  } else if (all_negative && !negative_right && wrong.size() == 2) {
    cause =
        ": wrong exactly for the rows near -1000, right for rows whose max is 1000 or 5: the shift is not the "
        "row's max when that is below 0 (a running max that starts at 0 instead of -inf gives this)";
  }
  ADD_FAILURE() << name << " shifted by each row's max: " << wrong.size() << " of " << rows.size()
                << " rows wrong: " << list << cause;
}

TEST(ex12_softmax, softmax_shifts_each_row_by_its_own_max) {
  AFTER_PLAIN_SOFTMAX();
  expect_shift_by_each_rows_max(softmax, "softmax", false);
}
TEST(ex12_softmax, log_softmax_shifts_each_row_by_its_own_max) {
  AFTER_PLAIN_LOG_SOFTMAX();
  expect_shift_by_each_rows_max(log_softmax, "log_softmax", true);
}

// The gradients, once the forward is right.
#define AFTER_SOFTMAX_FORWARD()                                                                      \
  COURSE_AFTER_FORWARD("softmax_of_three_rows", "log_softmax_of_three_rows",                                 \
                       "each_op_normalises_along_the_dim_it_is_given", "softmax_matches_torch_float64",            \
                       "log_softmax_matches_torch_float64")

TEST(ex12_softmax, gradients_match_torch_float64) {
  AFTER_SOFTMAX_FORWARD();
  softmax_cases("f64", Part::Gradients);
  log_softmax_cases("f64", Part::Gradients);
}
TEST(ex12_softmax, gradients_of_large_logits_match_torch_float64) {
  COURSE_AFTER_FORWARD("softmax_of_three_rows", "log_softmax_of_three_rows", "softmax_matches_torch_float64",
                       "log_softmax_matches_torch_float64", "large_logits_match_torch_float64");
  large_cases(Part::Gradients);
}
// float32: the bound's condition numbers of the gradients come from the
// backward, so these wait for the forward too.
TEST(ex12_softmax, softmax_and_its_gradient_match_torch_float32) {
  AFTER_SOFTMAX_FORWARD();
  softmax_cases("f32", Part::All);
}
TEST(ex12_softmax, log_softmax_and_its_gradient_match_torch_float32) {
  AFTER_SOFTMAX_FORWARD();
  log_softmax_cases("f32", Part::All);
}

TEST(ex12_softmax, softmax_gradcheck) {
  AFTER_SOFTMAX_FORWARD();
  expect_gradcheck([](const std::vector<Tensor>& x) { return softmax(x[0], 1); }, {randn64({2, 3, 4}, 1)},
                   "softmax over dim 1");
}
TEST(ex12_softmax, log_softmax_gradcheck) {
  AFTER_SOFTMAX_FORWARD();
  expect_gradcheck([](const std::vector<Tensor>& x) { return log_softmax(x[0], -1); }, {randn64({3, 4}, 2)},
                   "log_softmax over the last dim");
}

// The backward measured on four rows of five (distinct x and g per row): each
// dx_j as the one combination of at most two of the row's quantities that
// gives every entry (linear_form.h): y = the op's softmax, g, S = sum_i g_i
// y_i, G = sum_i g_i. "on 4 rows of 5 ..., dx is y g - y S at every entry"; ""
// when none fits, or no gradient comes.
std::string backward_form(Tensor (*op)(const Tensor&, int64_t), const std::string& right) {
  Generator gen(12);
  const Tensor x0 = randn({4, 5}, kF64, &gen), g0 = mul(randn({4, 5}, kF64, &gen), 4.0);  // |S| above 1 too
  Tensor x = clone(x0).requires_grad_();
  backward(op(x, -1), g0);
  if (!x.grad().defined()) return "";
  const std::vector<double> got = x.grad().to_vector<double>(), xs = x0.to_vector<double>(), gs = g0.to_vector<double>();
  std::vector<FormTerm> terms = {{"y g", {}}, {"y S", {}}, {"g", {}},   {"y G", {}}, {"y", {}},
                                 {"y^2 g", {}}, {"S", {}}, {"G", {}}, {"g S", {}}, {"x g", {}},
                                 {"y g_n y_n", {}}, {"y g_1 y_1", {}}};
  for (size_t r = 0; r < 4; ++r) {
    double top = -INFINITY, z = 0, S = 0, G = 0, first = 0, last = 0;  // first, last: S's first and last terms
    for (size_t j = 0; j < 5; ++j) top = std::max(top, xs[r * 5 + j]);
    for (size_t j = 0; j < 5; ++j) z += std::exp(xs[r * 5 + j] - top);
    for (size_t j = 0; j < 5; ++j) {
      const double y = std::exp(xs[r * 5 + j] - top) / z;
      S += gs[r * 5 + j] * y, G += gs[r * 5 + j];
      if (j == 0) first = gs[r * 5 + j] * y;
      if (j == 4) last = gs[r * 5 + j] * y;
    }
    for (size_t j = 0; j < 5; ++j) {
      const double y = std::exp(xs[r * 5 + j] - top) / z, g = gs[r * 5 + j];
      const double values[] = {y * g, y * S, g, y * G, y, y * y * g, S, G, g * S, xs[r * 5 + j] * g,
                               y * last, y * first};
      for (size_t t = 0; t < terms.size(); ++t) terms[t].values.push_back(values[t]);
    }
  }
  const std::string form = linear_form(got, terms, 2);
  if (form.empty()) return "";
  return "; measured on 4 rows of 5 (x and g random), dx is " + form +
         " at every entry (y the softmax of the row, S = sum_i g_i y_i, G = sum_i g_i; g_1 y_1 and g_n y_n: S's first and "
         "last terms), where " + right + " belongs";
}

// d log_softmax: g - softmax * sum(g). With g = 1 everywhere (the gradient of
// sum(log_softmax(x))) sum(g) = 3 per row, so the gradient is 1 - 3 softmax.
TEST(ex12_softmax, log_softmax_backward_scales_softmax_by_the_sum_of_g) {
  AFTER_SOFTMAX_FORWARD();
  const std::vector<double> xs = {0.5, -1, 2};
  Tensor x = param(xs, {3});
  backward(log_softmax(x, 0), ones({3}, kF64));
  if (!x.grad().defined()) {
    ADD_FAILURE() << "log_softmax: no gradient reached x";
    return;
  }
  double z = 0;
  for (double v : xs) z += std::exp(v);
  const std::vector<double> got = x.grad().to_vector<double>();
  for (size_t i = 0; i < xs.size(); ++i) {
    const double p = std::exp(xs[i]) / z, want = 1 - 3 * p;
    if (std::abs(got[i] - want) <= 1e-12 + 1e-10 * std::abs(want)) continue;
    const bool unscaled = std::abs(got[i] - (1 - p)) <= 1e-9;
    ADD_FAILURE() << fmt::format("d sum(log_softmax(x)) / dx[{}] is {:.10g}, expected 1 - 3 softmax = {:.10g}{}", i,
                                 got[i], want,
                                 unscaled ? ": that is g - softmax; the rule is g - softmax * sum(g), and sum(g) = 3 here"
                                          : backward_form(log_softmax, "g - y G"));
    return;
  }
}

// softmax's backward on one row: dx_j = y_j (g_j - sum_i g_i y_i). Each
// look-alike is named only when it gives all three entries (on this row,
// with distinct g, they all differ).
TEST(ex12_softmax, softmax_backward_is_y_times_g_minus_its_weighted_sum) {
  AFTER_SOFTMAX_FORWARD();
  // The row x = 0.5, -1, 2 with g = 1.5, -0.5, 0.25, then a second row with
  // larger g (3, -2.5, 4) where a look-alike is confirmed before it is named.
  std::vector<double> xs = {0.5, -1, 2}, gs = {1.5, -0.5, 0.25}, y(3), ey(3), got;
  double gy = 0, gey = 0, gsum = 0;
  const auto measure = [&](const std::vector<double>& x_values, const std::vector<double>& g_values) {
    xs = x_values, gs = g_values;
    Tensor x = param(xs, {3});
    backward(softmax(x, 0), tensor(gs, {3}, kF64));
    if (!x.grad().defined()) return false;
    double z = 0;
    for (double v : xs) z += std::exp(v);
    gy = gey = gsum = 0;
    for (size_t i = 0; i < 3; ++i) {
      y[i] = std::exp(xs[i]) / z, ey[i] = std::exp(y[i]);
      gy += gs[i] * y[i], gey += gs[i] * ey[i], gsum += gs[i];
    }
    got = x.grad().to_vector<double>();
    return true;
  };
  if (!measure({0.5, -1, 2}, {1.5, -0.5, 0.25})) {
    ADD_FAILURE() << "softmax: no gradient reached x";
    return;
  }
  const auto gives = [&](const std::function<double(size_t)>& f) {
    for (size_t i = 0; i < 3; ++i)
      if (std::abs(got[i] - f(i)) > 1e-12 + 1e-10 * std::abs(f(i))) return false;
    return true;
  };
  if (gives([&](size_t j) { return y[j] * (gs[j] - gy); })) return;
  const std::vector<std::pair<std::string, std::function<double(size_t)>>> look_alikes = {
      {"exp(y_j) (g_j - sum_i g_i exp(y_i)): y read as log-probabilities (log_softmax's saved output), where y is "
       "already the softmax",
       [&](size_t j) { return ey[j] * (gs[j] - gey); }},
      {"g_j - y_j sum_i g_i: log_softmax's rule", [&](size_t j) { return gs[j] - y[j] * gsum; }},
      {"y_j (g_j - sum_i g_i): the sum of g not weighted by y", [&](size_t j) { return y[j] * (gs[j] - gsum); }},
      {"y_j g_j: the term through the normaliser left out", [&](size_t j) { return y[j] * gs[j]; }},
      {"y_j (y_j - sum_i y_i y_i): the rule with y read where g belongs",
       [&](size_t j) {
         double yy = 0;
         for (double v : y) yy += v * v;
         return y[j] * (y[j] - yy);
       }}};
  // The same x with the output gradient doubled: a rule that reads g gives twice the values.
  Tensor x2 = param(xs, {3});
  backward(softmax(x2, 0), tensor({2 * gs[0], 2 * gs[1], 2 * gs[2]}, {3}, kF64));
  const std::vector<double> got2 = x2.grad().defined() ? x2.grad().to_vector<double>() : std::vector<double>(3, NAN);
  bool ignores_g = true;
  for (size_t i = 0; i < 3; ++i) ignores_g = ignores_g && std::abs(got2[i] - got[i]) <= 1e-12 + 1e-10 * std::abs(got[i]);
  const std::string g_note = ignores_g ? " (with g doubled it gives the same values: the incoming gradient g is not read)" : "";
  const auto confirmed = [&](const std::function<double(size_t)>& f) {  // on the second row, then back
    const bool there = measure({1.2, -0.4, 0.3}, {3, -2.5, 4}) && gives(f);
    measure({0.5, -1, 2}, {1.5, -0.5, 0.25});
    return there;
  };
  for (const auto& [text, f] : look_alikes) {
    if (gives(f) && confirmed(f)) {
      ADD_FAILURE() << fmt::format("softmax's backward on x = 0.5, -1, 2 with g = 1.5, -0.5, 0.25 gives {:.8g}, "
                                   "{:.8g}, {:.8g}: that is {}{}; dx_j = y_j (g_j - sum_i g_i y_i)",
                                   got[0], got[1], got[2], text, g_note);
      return;
    }
  }
  ADD_FAILURE() << fmt::format("softmax's backward on x = 0.5, -1, 2 with g = 1.5, -0.5, 0.25 gives {:.8g}, {:.8g}, "
                               "{:.8g}{}, expected y_j (g_j - sum_i g_i y_i) = {:.8g}, {:.8g}, {:.8g}{}",
                               got[0], got[1], got[2], g_note, y[0] * (gs[0] - gy), y[1] * (gs[1] - gy),
                               y[2] * (gs[2] - gy), backward_form(softmax, "y g - y S"));
}

}  // namespace
}  // namespace ropegrad::course
