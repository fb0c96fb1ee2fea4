// What a wrong value is made of: got = c1 t1 + c2 t2 (+ c3 t3) at every
// element, for the fewest of the named terms a check offers (the quantities
// its formula is built from: p, the one-hot, g y, ...), each coefficient fitted
// by least squares and the fit verified on every element:
//
//   "-(one-hot / p)"       (cross-entropy's gradient taken w.r.t. p)
//   "y g - y^2 g"          (softmax's backward without its coupling)
//   "0.5 x p - one-hot"
//
// It names no cause: the caller says where the right form differs. A form is
// given only when it is the only one of its size that fits, on at least three
// more elements than it has coefficients.
#pragma once

#include <cmath>
#include <string>
#include <vector>

#include "fmt/format.h"

namespace ropegrad::course {

struct FormTerm {
  std::string name;            // "one-hot / p"
  std::vector<double> values;  // one per element, as got
};

namespace linear_form_detail {

// Solves the k x k system a c = b (k <= 3) by elimination with pivoting;
// false when a column is (numerically) a combination of the others.
inline bool solve(std::vector<std::vector<double>> a, std::vector<double> b, std::vector<double>& c) {
  const size_t k = b.size();
  double scale = 0;
  for (const auto& row : a)
    for (double v : row) scale = std::max(scale, std::abs(v));
  for (size_t col = 0; col < k; ++col) {
    size_t pivot = col;
    for (size_t r = col + 1; r < k; ++r)
      if (std::abs(a[r][col]) > std::abs(a[pivot][col])) pivot = r;
    if (!(std::abs(a[pivot][col]) > 1e-10 * scale)) return false;
    std::swap(a[col], a[pivot]);
    std::swap(b[col], b[pivot]);
    for (size_t r = col + 1; r < k; ++r) {
      const double f = a[r][col] / a[col][col];
      for (size_t j = col; j < k; ++j) a[r][j] -= f * a[col][j];
      b[r] -= f * b[col];
    }
  }
  c.assign(k, 0);
  for (size_t r = k; r-- > 0;) {
    double s = b[r];
    for (size_t j = r + 1; j < k; ++j) s -= a[r][j] * c[j];
    c[r] = s / a[r][r];
  }
  return true;
}

// The least-squares coefficients of the terms `pick` for got, when they fit
// every element (|residual| <= 1e-9 of the largest |got|, or 1e-12) and none
// is 0; empty otherwise.
inline std::vector<double> fit(const std::vector<double>& got, const std::vector<FormTerm>& terms,
                               const std::vector<size_t>& pick) {
  const size_t k = pick.size();
  std::vector<std::vector<double>> a(k, std::vector<double>(k, 0));
  std::vector<double> b(k, 0), c;
  for (size_t i = 0; i < got.size(); ++i)
    for (size_t r = 0; r < k; ++r) {
      b[r] += terms[pick[r]].values[i] * got[i];
      for (size_t s = 0; s < k; ++s) a[r][s] += terms[pick[r]].values[i] * terms[pick[s]].values[i];
    }
  if (!solve(a, b, c)) return {};
  double largest = 0;
  for (double v : got) largest = std::max(largest, std::abs(v));
  const double tol = std::max(1e-12, 1e-9 * largest);
  for (size_t i = 0; i < got.size(); ++i) {
    double v = 0;
    for (size_t r = 0; r < k; ++r) v += c[r] * terms[pick[r]].values[i];
    if (!(std::abs(v - got[i]) <= tol)) return {};
  }
  for (double x : c)
    if (!(std::abs(x) > 1e-9)) return {};
  return c;
}

// "2", "-0.5", "0.333333": a whole number when it is one.
inline std::string coefficient(double c) {
  const double r = std::round(c);
  return std::abs(c - r) <= 1e-9 * std::max(1.0, std::abs(c)) ? fmt::format("{}", r) : fmt::format("{:.6g}", c);
}

}  // namespace linear_form_detail

// "c1 x t1 + c2 x t2" for the only set of the fewest terms (at most
// `max_terms`) that gives got at every element; "" when no set fits, or two
// of the same size do. Terms that are not finite everywhere are left out.
inline std::string linear_form(const std::vector<double>& got, const std::vector<FormTerm>& terms,
                               size_t max_terms = 3) {
  using namespace linear_form_detail;
  for (double v : got)
    if (!std::isfinite(v)) return "";
  std::vector<size_t> usable;
  for (size_t t = 0; t < terms.size(); ++t) {
    bool finite = terms[t].values.size() == got.size();
    for (size_t i = 0; finite && i < got.size(); ++i) finite = std::isfinite(terms[t].values[i]);
    if (finite) usable.push_back(t);
  }
  for (size_t k = 1; k <= max_terms && got.size() >= k + 3; ++k) {
    std::string found;
    int fits = 0;
    std::vector<size_t> at(k);
    for (size_t i = 0; i < k; ++i) at[i] = i;
    while (k <= usable.size()) {
      std::vector<size_t> pick(k);
      for (size_t i = 0; i < k; ++i) pick[i] = usable[at[i]];
      if (const std::vector<double> c = fit(got, terms, pick); !c.empty()) {
        ++fits;
        found.clear();
        for (size_t i = 0; i < k; ++i) {
          const std::string num = coefficient(std::abs(c[i]));
          const std::string& name = terms[pick[i]].name;
          const bool sum_or_ratio = name.find(" + ") != std::string::npos || name.find(" - ") != std::string::npos ||
                                    name.find(" / ") != std::string::npos;
          const bool alone = k == 1 && c[i] > 0 && num == "1";
          const std::string term = sum_or_ratio && !alone ? "(" + name + ")" : name;
          found += (i == 0 ? (c[i] < 0 ? "-" : "") : (c[i] < 0 ? " - " : " + ")) + (num == "1" ? term : num + " x " + term);
        }
      }
      size_t i = k;  // next combination of k of the usable terms, in order
      while (i > 0 && at[i - 1] == usable.size() - k + i - 1) --i;
      if (i == 0) break;
      ++at[i - 1];
      for (size_t j = i; j < k; ++j) at[j] = at[j - 1] + 1;
    }
    if (fits == 1) return found;
    if (fits > 1) return "";
  }
  return "";
}

}  // namespace ropegrad::course
