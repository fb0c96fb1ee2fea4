// What a failing check says, when it cannot name a cause: the structure of
// the difference between what the learner's code gave and what was expected,
// each statement verified on every element (course/checks/check_util.h).
//
//   first non-finite value at [1, 2]: nan (3 of 12 elements are not finite; every expected value is finite)
//   every element is -1 x the expected (the sign of each is flipped)
//   every element is 0.25 x the expected
//   each row (along the last dim) is the expected plus a number of its own (row [0, 0]: +1.66, ...)
//   wrong exactly where dim 1's index is 0 (of 4), right elsewhere; there each is 2 x the expected
//   right only where dim 1's index is 4 (of 5), wrong elsewhere
//   it is the expected with dims 1 and 2 swapped (a transpose)
//   along dim 1 (size 4), index 0 holds the expected's 1, ...; the other indices are right
//   each row (along the last dim) is the expected times a number of its own (row [0]: 2, ...)
//   (nothing: no simple structure; the caller then gives the count and the worst element)
//
// A check names a cause only when it has tested it on inputs where its
// look-alikes give other values; these statements name none.
#pragma once

#include <cmath>
#include <cstdint>
#include <set>
#include <string>
#include <vector>

#include "tensor/tensor.h"

namespace ropegrad::course {

namespace findings_detail {

inline std::vector<int64_t> unravel(const Shape& shape, size_t flat) {
  std::vector<int64_t> idx(shape.size());
  for (size_t d = shape.size(); d-- > 0;) {
    const auto n = static_cast<size_t>(std::max<int64_t>(shape[d], 1));
    idx[d] = static_cast<int64_t>(flat % n);
    flat /= n;
  }
  return idx;
}

inline std::string index_text(const std::vector<int64_t>& idx) {
  std::string s = "[";
  for (size_t d = 0; d < idx.size(); ++d) s += (d ? ", " : "") + std::to_string(idx[d]);
  return s + "]";
}

// c when got[i] = c want[i] at every listed element (relative 1e-9), else NaN.
inline double common_ratio(const std::vector<double>& got, const std::vector<double>& want,
                           const std::vector<size_t>& at) {
  double c = NAN;
  for (size_t i : at) {
    if (want[i] == 0) {
      if (got[i] != 0) return NAN;
      continue;
    }
    const double r = got[i] / want[i];
    if (std::isnan(c)) c = r;
    if (!std::isfinite(r) || std::abs(r - c) > 1e-9 * std::max(1.0, std::abs(c))) return NAN;
  }
  return c;
}

inline std::string ratio_text(double c) {
  if (c == -1) return "-1 x the expected (the sign of each is flipped)";
  return fmt::format("{:.6g} x the expected", c);
}

// The dim along which the wrong elements are exactly those whose index lies
// in a proper subset of that dim's indices (the smallest such subset), or,
// failing that, the right elements are; the text, or "" when no dim explains
// them all.
inline std::string wrong_slices(const Shape& shape, const std::vector<bool>& wrong) {
  std::string best;
  size_t best_size = SIZE_MAX;
  for (int pass = 0; pass < 2 && best.empty(); ++pass) {
    const bool marked = pass == 0;  // pass 0: the wrong elements' indices; pass 1: the right ones'
    for (size_t d = 0; d < shape.size(); ++d) {
      std::set<int64_t> where;
      for (size_t i = 0; i < wrong.size(); ++i)
        if (wrong[i] == marked) where.insert(unravel(shape, i)[d]);
      // A proper subset of at most half of the dim's indices (more is no pattern worth saying).
      if (where.empty() || 2 * where.size() > static_cast<size_t>(shape[d]) || where.size() >= best_size) continue;
      bool exact = true;
      for (size_t i = 0; i < wrong.size() && exact; ++i)
        exact = (wrong[i] == marked) == (where.count(unravel(shape, i)[d]) > 0);
      if (!exact) continue;
      std::string list;
      for (int64_t v : where) list += (list.empty() ? "" : ", ") + std::to_string(v);
      best = marked ? fmt::format("wrong exactly where dim {}'s index is {} (of {}), right elsewhere", d, list, shape[d])
                    : fmt::format("right only where dim {}'s index is {} (of {}), wrong elsewhere", d, list, shape[d]);
      best_size = where.size();
    }
  }
  return best;
}

// When every row (slice along the last dim) of got is its row of want plus
// one number (got - want constant across the row, and not 0 in every row):
// "each row is the expected plus a number of its own (row [0]: +1.66, ...)".
inline std::string row_offsets(const std::vector<double>& got, const std::vector<double>& want, const Shape& shape) {
  if (shape.empty() || shape.back() < 2) return "";
  const auto n = static_cast<size_t>(shape.back());
  std::string shown;
  bool any = false;
  for (size_t r = 0; r * n < got.size(); ++r) {
    const double d = got[r * n] - want[r * n];
    for (size_t j = 1; j < n; ++j) {
      const double e = got[r * n + j] - want[r * n + j];
      if (!(std::abs(e - d) <= 1e-9 * std::max({1.0, std::abs(d), std::abs(want[r * n + j])}))) return "";
    }
    any = any || d != 0;
    std::vector<int64_t> row = unravel(shape, r * n);
    row.pop_back();
    if (r < 3) shown += fmt::format("{}row {}: {:+.6g}", r ? ", " : "", index_text(row), d);
  }
  return any ? "each row (along the last dim) is the expected plus a number of its own (" + shown +
                   (got.size() / n > 3 ? ", ..." : "") + ")"
             : "";
}

// The index of element `flat` of `shape` with dims a and b swapped (equal sizes).
inline size_t swapped_flat(const Shape& shape, size_t flat, size_t a, size_t b) {
  std::vector<int64_t> idx = unravel(shape, flat);
  std::swap(idx[a], idx[b]);
  size_t out = 0;
  for (size_t d = 0; d < shape.size(); ++d) out = out * static_cast<size_t>(shape[d]) + static_cast<size_t>(idx[d]);
  return out;
}

// Equal as the structures below compare: within 1e-6 of the largest expected magnitude (float32 rounding).
inline bool same_value(double g, double w, double scale) { return std::abs(g - w) <= 1e-6 * std::max(1.0, scale); }

// "it is the expected with dims 1 and 2 swapped (a transpose)" when got[i] is
// want at i with two dims of the same size swapped, at every element.
inline std::string dims_swapped(const std::vector<double>& got, const std::vector<double>& want, const Shape& shape,
                                double scale) {
  for (size_t a = 0; a < shape.size(); ++a) {
    for (size_t b = a + 1; b < shape.size(); ++b) {
      if (shape[a] != shape[b] || shape[a] < 2) continue;
      bool all = true;
      for (size_t i = 0; i < got.size() && all; ++i)
        all = same_value(got[i], want[swapped_flat(shape, i, a, b)], scale);
      if (all) return fmt::format("it is the expected with dims {} and {} swapped (a transpose)", a, b);
    }
  }
  return "";
}

// Along one dim, each wrong slice is the expected's slice at another index
// (one only) and the others are right: "along dim 1 (size 4), index 0 holds
// the expected's index 1, index 1 the expected's 2, index 3 none of them".
// At most one wrong slice may match none (the end of a shifted range).
inline std::string slices_moved(const std::vector<double>& got, const std::vector<double>& want, const Shape& shape,
                                const std::vector<bool>& wrong, double scale) {
  for (size_t d = 0; d < shape.size(); ++d) {
    const auto n = static_cast<size_t>(shape[d]);
    if (n < 2) continue;
    // For each index k along d, the elements of slice k in order.
    std::vector<std::vector<size_t>> slice(n);
    std::vector<bool> slice_wrong(n, false);
    for (size_t i = 0; i < got.size(); ++i) {
      const auto k = static_cast<size_t>(unravel(shape, i)[d]);
      slice[k].push_back(i);
      if (wrong[i]) slice_wrong[k] = true;
    }
    const auto got_is_want = [&](size_t k, size_t m) {
      for (size_t j = 0; j < slice[k].size(); ++j) {
        if (!same_value(got[slice[k][j]], want[slice[m][j]], scale)) return false;
      }
      return true;
    };
    std::string text;
    size_t moved = 0, unmatched = 0;
    for (size_t k = 0; k < n; ++k) {
      if (!slice_wrong[k]) continue;
      std::vector<size_t> matches;
      for (size_t m = 0; m < n; ++m) {
        if (m != k && got_is_want(k, m)) matches.push_back(m);
      }
      if (matches.size() > 1) return "";  // slices of the expected alike: no telling which
      const std::string what = matches.empty() ? "none of them" : fmt::format("the expected's {}", matches[0]);
      text += fmt::format("{}index {} holds {}", text.empty() ? "" : ", ", k, what);
      moved += !matches.empty(), unmatched += matches.empty();
    }
    if (unmatched <= 1 && moved > unmatched) {
      return fmt::format("along dim {} (size {}), {}; the other indices are right", d, n, text);
    }
  }
  return "";
}

// Each row (along the last dim) is its row of the expected times a number of
// its own, not one number for all: "each row is the expected times a number
// of its own (row [0]: 2, row [1]: 0.5, ...)".
inline std::string row_factors(const std::vector<double>& got, const std::vector<double>& want, const Shape& shape) {
  if (shape.empty() || shape.back() < 3) return "";
  const auto n = static_cast<size_t>(shape.back());
  std::string shown;
  std::set<double> distinct;
  for (size_t r = 0; r * n < got.size(); ++r) {
    std::vector<size_t> at(n);
    for (size_t j = 0; j < n; ++j) at[j] = r * n + j;
    const double c = common_ratio(got, want, at);
    if (std::isnan(c)) return "";
    distinct.insert(std::round(c * 1e6) / 1e6);
    std::vector<int64_t> row = unravel(shape, r * n);
    row.pop_back();
    if (r < 3) shown += fmt::format("{}row {}: {:.6g}", r ? ", " : "", index_text(row), c);
  }
  if (distinct.size() < 2) return "";
  return "each row (along the last dim) is the expected times a number of its own (" + shown +
         (got.size() / n > 3 ? ", ..." : "") + ")";
}

// "every element is 1 / the expected" (or its square, its square root, its
// negative reciprocal) when one such function of the expected gives every
// element; "" otherwise.
inline std::string function_of_expected(const std::vector<double>& got, const std::vector<double>& want) {
  const std::pair<const char*, double (*)(double)> forms[] = {
      {"1 / the expected (the reciprocal)", [](double w) { return 1 / w; }},
      {"-1 / the expected", [](double w) { return -1 / w; }},
      {"the expected squared", [](double w) { return w * w; }},
      {"the square root of the expected", [](double w) { return std::sqrt(w); }}};
  for (const auto& [text, f] : forms) {
    bool all = true;
    for (size_t i = 0; i < got.size() && all; ++i) {
      const double v = f(want[i]);
      all = std::isfinite(v) && std::abs(got[i] - v) <= 1e-9 * std::max(1.0, std::abs(v));
    }
    if (all) return std::string("every element is ") + text;
  }
  return "";
}

// Every wrong element within float32's rounding of the expected (relative
// 1e-6: a few roundings of 6e-8 each) in a float64 comparison: "each wrong
// element is the expected to float32 precision only (...)"; "" otherwise.
inline std::string float32_precision(const std::vector<double>& got, const std::vector<double>& want,
                                     const std::vector<size_t>& bad) {
  double worst = 0;
  for (size_t i : bad) {
    const double off = std::abs(got[i] - want[i]), scale = std::abs(want[i]);
    if (!(off <= 1e-6 * scale)) return "";
    worst = std::max(worst, off / scale);
  }
  return fmt::format("each wrong element is the expected to float32 precision only (relative differences up to "
                     "{:.2g}, where float64 keeps 1e-16): a value passes through float",
                     worst);
}

}  // namespace findings_detail

// The structure of the difference of `got` from `want` (same shape), where
// `wrong[i]` marks the elements outside the tolerance; "" when none is wrong
// or no structure above fits every wrong element.
inline std::string difference_structure(const std::vector<double>& got, const std::vector<double>& want,
                                        const Shape& shape, const std::vector<bool>& wrong) {
  using namespace findings_detail;
  std::vector<size_t> bad;
  for (size_t i = 0; i < wrong.size(); ++i)
    if (wrong[i]) bad.push_back(i);
  if (bad.empty()) return "";
  size_t non_finite = 0, first = SIZE_MAX;
  bool want_finite = true;
  for (size_t i = 0; i < got.size(); ++i) {
    want_finite = want_finite && std::isfinite(want[i]);
    if (!std::isfinite(got[i])) {
      ++non_finite;
      first = std::min(first, i);
    }
  }
  if (non_finite > 0 && want_finite)
    return fmt::format("first non-finite value at {}: {} ({} of {} elements are not finite; every expected value is "
                       "finite)",
                       index_text(unravel(shape, first)), got[first], non_finite, got.size());
  if (const std::string f = float32_precision(got, want, bad); !f.empty()) return f;
  double c = common_ratio(got, want, bad);
  if (bad.size() == 1 && c != -1) c = NAN;  // one value has a ratio to anything: no structure unless a sign
  if (bad.size() == got.size() && !std::isnan(c)) return "every element is " + ratio_text(c);
  if (bad.size() == got.size() && got.size() > 1) {
    if (const std::string f = function_of_expected(got, want); !f.empty()) return f;
  }
  if (const std::string offsets = row_offsets(got, want, shape); !offsets.empty()) return offsets;
  double scale = 0;
  for (double w : want) scale = std::max(scale, std::abs(w));
  if (const std::string swapped = dims_swapped(got, want, shape, scale); !swapped.empty()) return swapped;
  if (const std::string moved = slices_moved(got, want, shape, wrong, scale); !moved.empty()) return moved;
  if (const std::string factors = row_factors(got, want, shape); !factors.empty()) return factors;
  if (bad.size() == got.size()) return "";
  std::string where = wrong_slices(shape, wrong);
  if (!std::isnan(c)) where += (where.empty() ? "" : "; ") + fmt::format("each wrong element is {}", ratio_text(c));
  return where;  // "" when nothing simple explains them: the caller's count and worst element say the rest
}

}  // namespace ropegrad::course
