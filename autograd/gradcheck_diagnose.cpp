// gradcheck's diagnoses from the structure of the two Jacobians (see
// gradcheck_diagnose.h). A is the analytical block of one input, N the
// numerical one, D = A - N; "zero" means |v| <= atol, "right" means the entry
// passes gradcheck's test. Each diagnosis below is named only after checking
// it on every entry of the block.
#include "autograd/gradcheck_diagnose.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <functional>
#include <map>
#include <numeric>
#include <optional>
#include <set>

namespace ropegrad::gradcheck_detail {

bool close(double analytical, double numerical, const GradcheckOptions& o) {
  return std::abs(analytical - numerical) <= o.atol + o.rtol * std::abs(numerical);
}

bool matches(const Jacobian& a, const Jacobian& b, const GradcheckOptions& o) {
  if (a.values.size() != b.values.size()) return false;
  for (size_t i = 0; i < a.values.size(); ++i) {
    if (!std::isfinite(b.values[i]) || !close(a.values[i], b.values[i], o)) return false;
  }
  return true;
}

Shape unflatten(int64_t flat, const Shape& shape) {
  Shape index(shape.size());
  for (int64_t d = static_cast<int64_t>(shape.size()) - 1; d >= 0; --d) {
    index[d] = flat % shape[d];
    flat /= shape[d];
  }
  return index;
}

namespace {

bool is_zero(double v, const GradcheckOptions& o) { return std::abs(v) <= o.atol; }

int64_t flatten(const Shape& index, const Shape& shape) {
  int64_t flat = 0;
  for (size_t d = 0; d < shape.size(); ++d) flat = flat * shape[d] + index[d];
  return flat;
}

// `index` without dim d, flattened in `shape` without dim d: which fibre along d it is in.
int64_t fibre_of(const Shape& index, const Shape& shape, size_t d) {
  int64_t flat = 0;
  for (size_t e = 0; e < shape.size(); ++e) {
    if (e != d) flat = flat * shape[e] + index[e];
  }
  return flat;
}

// "dim 1" or "dim 1 (the last, size 5)".
std::string dim_name(size_t d, const Shape& shape) {
  if (shape.size() > 1 && d + 1 == shape.size()) return fmt::format("dim {} (the last, size {})", d, shape[d]);
  return fmt::format("dim {} (size {})", d, shape[d]);
}

// "[i0, i1]" (letter 'i' for the output, 'j' for the input).
std::string index_names(char letter, size_t rank) {
  std::string s = "[";
  for (size_t d = 0; d < rank; ++d) s += fmt::format("{}{}{}", d ? ", " : "", letter, d);
  return s + "]";
}

// "[.., 0]", "[i0, ..]": the index v along dim d, any index along the others.
std::string slice_str(size_t d, const std::string& v, size_t rank) {
  std::string s = "[";
  for (size_t e = 0; e < rank; ++e) s += (e ? ", " : "") + (e == d ? v : std::string(".."));
  return s + "]";
}

// "1.5, 2.25, -0.5" for a few numbers, "12 values from -0.86 to -0.12" for many.
std::string list_values(const std::vector<double>& v) {
  if (v.size() <= 6) {
    std::string s;
    for (size_t i = 0; i < v.size(); ++i) s += fmt::format("{}{:.4g}", i ? ", " : "", v[i]);
    return s;
  }
  const auto [lo, hi] = std::minmax_element(v.begin(), v.end());
  return fmt::format("{} values from {:.4g} to {:.4g}", v.size(), *lo, *hi);
}

// "0.25", "inf", "nan" (never "-nan": the sign of a NaN means nothing here).
std::string number(double v) { return std::isnan(v) ? "nan" : fmt::format("{:.6g}", v); }

// Per-entry facts the analyses read, computed once per failing block.
struct Entries {
  const FailingBlock& b;
  const Jacobian& a;
  const Jacobian& n;
  const GradcheckOptions& o;
  Shape out_shape, in_shape;
  std::vector<Shape> out_index, in_index;  // of each row, of each column
  std::vector<char> wrong;                 // per entry, row-major
  int64_t wrong_count = 0;
  std::vector<double> x;  // input k's values
  bool wrong_at(int64_t r, int64_t c) const { return wrong[r * a.cols + c]; }
  // Nonzero on either side, or wrong: an entry that says something.
  bool active(int64_t r, int64_t c) const {
    return wrong_at(r, c) || !is_zero(a.at(r, c), o) || !is_zero(n.at(r, c), o);
  }
  bool same_shape() const { return out_shape == in_shape; }
  // "d output[i0, i1] / d input1[j0]": the entries a statement is about.
  std::string entry_names() const {
    return fmt::format("d output{} / d input{}{}", index_names('i', out_shape.size()), b.input,
                       index_names('j', in_shape.size()));
  }
};

Entries make_entries(const FailingBlock& b) {
  Entries e{b, b.analytical, b.numerical, b.options, b.output_shape, b.inputs[b.input].shape(), {}, {}, {}, 0, {}};
  for (int64_t r = 0; r < e.a.rows; ++r) e.out_index.push_back(unflatten(r, e.out_shape));
  for (int64_t c = 0; c < e.a.cols; ++c) e.in_index.push_back(unflatten(c, e.in_shape));
  e.wrong.resize(e.a.values.size());
  for (size_t i = 0; i < e.a.values.size(); ++i) {
    e.wrong[i] = !close(e.a.values[i], e.n.values[i], e.o);
    e.wrong_count += e.wrong[i];
  }
  e.x = b.inputs[b.input].to_vector<double>();
  return e;
}

// ---- groups, structures and features: what a simple form is made of ---------------------

// A partition of the Jacobian's rows (by_row) or columns: one constant per group.
struct Grouping {
  std::string each;  // completes "one constant per ...": "output element"
  bool by_row = true;
  std::vector<int64_t> key;  // the group of each row (or column)
  int64_t groups = 0;
  int64_t of(int64_t r, int64_t c) const { return key[by_row ? r : c]; }
};

// Slices and fibres along each dim of the output and of the input, then single elements.
std::vector<Grouping> groupings(const Entries& e) {
  std::vector<Grouping> out;
  for (int side = 0; side < 2; ++side) {
    const bool by_row = side == 0;
    const Shape& shape = by_row ? e.out_shape : e.in_shape;
    const std::vector<Shape>& index = by_row ? e.out_index : e.in_index;
    const std::string what = by_row ? "output" : fmt::format("input {}", e.b.input);
    const char letter = by_row ? 'i' : 'j';
    for (size_t d = 0; d < shape.size() && shape.size() > 1; ++d) {
      if (shape[d] < 2) continue;
      Grouping slice{fmt::format("{}{} ({}'s index along {})", letter, d, what, dim_name(d, shape)), by_row, {},
                     shape[d]};
      Grouping fibre{fmt::format("row of the {} along {}", what, dim_name(d, shape)), by_row, {},
                     static_cast<int64_t>(index.size()) / shape[d]};
      for (const Shape& i : index) {
        slice.key.push_back(i[d]);
        fibre.key.push_back(fibre_of(i, shape, d));
      }
      out.push_back(std::move(slice));
      out.push_back(std::move(fibre));
    }
    Grouping element{by_row ? "output element" : fmt::format("element of input {}", e.b.input), by_row, {},
                     static_cast<int64_t>(index.size())};
    for (size_t i = 0; i < index.size(); ++i) element.key.push_back(static_cast<int64_t>(i));
    out.push_back(std::move(element));
  }
  std::stable_sort(out.begin(), out.end(), [](const Grouping& p, const Grouping& q) { return p.groups < q.groups; });
  return out;
}

// The entries (r, c) with row_key[r] == col_key[c]: where a coupling can sit.
struct Structure {
  enum Kind { Diagonal, Fibre, Reduction, All };
  Kind kind;
  std::string only;   // "the diagonal, d output[i] / d input0[i]": what the entries are
  std::string where;  // completes "at every entry d output[i0, i1] / d input0[j0, j1] ...": "with j0 = i0 (...)"
  std::string span;   // completes "each output couples to the inputs of ..."
  std::string each;   // one block, completing "one constant per ..."
  std::vector<int64_t> row_key = {}, col_key = {};
  int64_t size = 0;  // how many entries
  bool contains(int64_t r, int64_t c) const { return row_key[r] == col_key[c]; }
};

int64_t count_entries(const Structure& s) {
  std::map<int64_t, int64_t> rows, cols;
  for (int64_t k : s.row_key) ++rows[k];
  for (int64_t k : s.col_key) ++cols[k];
  int64_t n = 0;
  for (const auto& [k, m] : rows) n += cols.count(k) ? m * cols[k] : 0;
  return n;
}

// "j0 = i0, j2 = i1" for the (input dim, output dim) pairs whose indices agree.
std::string equal_indices(const std::vector<std::pair<size_t, size_t>>& pairs) {
  std::string s;
  for (const auto& [in, out] : pairs) s += fmt::format("{}j{} = i{}", s.empty() ? "" : ", ", in, out);
  return s;
}

// Same shapes: the diagonal, and each fibre along a dim (a row along the last dim).
void same_shape_structures(const Entries& e, std::vector<Structure>& out) {
  const Shape& shape = e.out_shape;
  std::vector<std::pair<size_t, size_t>> all_dims;
  for (size_t d = 0; d < shape.size(); ++d) all_dims.push_back({d, d});
  Structure diagonal{Structure::Diagonal, fmt::format("the diagonal, d output[i] / d input{}[i]", e.b.input),
                     fmt::format("with {}: the diagonal", equal_indices(all_dims)), "itself", "element"};
  for (int64_t r = 0; r < e.a.rows; ++r) diagonal.row_key.push_back(r);
  diagonal.col_key = diagonal.row_key;
  out.push_back(std::move(diagonal));
  for (size_t d = 0; d < shape.size() && shape.size() > 1; ++d) {
    if (shape[d] < 2) continue;
    std::vector<std::pair<size_t, size_t>> others = all_dims;
    others.erase(others.begin() + static_cast<std::ptrdiff_t>(d));
    Structure fibre{Structure::Fibre, fmt::format("the entries within each row along {}", dim_name(d, shape)),
                    fmt::format("with {}: within a row along {}", equal_indices(others), dim_name(d, shape)),
                    fmt::format("its row along {}", dim_name(d, shape)), "row"};
    for (const Shape& i : e.out_index) fibre.row_key.push_back(fibre_of(i, shape, d));
    for (const Shape& i : e.in_index) fibre.col_key.push_back(fibre_of(i, shape, d));
    out.push_back(std::move(fibre));
  }
}

// The output is the input reduced over dim d (dropped or kept with size 1):
// each output with the row along d it reduces.
void reduction_structures(const Entries& e, std::vector<Structure>& out) {
  const Shape& in = e.in_shape;
  for (size_t d = 0; d < in.size(); ++d) {
    Shape dropped = in, kept = in;
    dropped.erase(dropped.begin() + static_cast<std::ptrdiff_t>(d));
    kept[d] = 1;
    if (in[d] < 2 || (e.out_shape != dropped && e.out_shape != kept)) continue;
    std::vector<std::pair<size_t, size_t>> pairs;
    for (size_t f = 0; f < in.size(); ++f) {
      if (f != d) pairs.push_back({f, e.out_shape == kept || f < d ? f : f - 1});
    }
    Structure s{Structure::Reduction, fmt::format("the entries of each output's own row along {}", dim_name(d, in)),
                fmt::format("with {}: each output and the row along {} it reduces", equal_indices(pairs),
                            dim_name(d, in)),
                fmt::format("the row along {} it reduces", dim_name(d, in)), "output element"};
    for (int64_t r = 0; r < e.a.rows; ++r) s.row_key.push_back(r);
    for (const Shape& i : e.in_index) s.col_key.push_back(fibre_of(i, in, d));
    out.push_back(std::move(s));
  }
}

// The structures that apply to this block, the smallest first; the last is every entry.
std::vector<Structure> structures(const Entries& e) {
  std::vector<Structure> out;
  if (e.same_shape()) same_shape_structures(e, out);
  reduction_structures(e, out);
  Structure all{Structure::All, "every entry", "", "", "", std::vector<int64_t>(e.a.rows, 0),
                std::vector<int64_t>(e.a.cols, 0)};
  out.push_back(std::move(all));
  for (Structure& s : out) s.size = count_entries(s);
  std::stable_sort(out.begin(), out.end(), [](const Structure& p, const Structure& q) { return p.size < q.size; });
  return out;
}

// A value per row or per column that a factor or a term may be a multiple of.
struct Feature {
  std::string symbol;  // "input0[i0]": what the value is, in the entries' index names
  bool by_row = true;
  std::vector<double> v;
};

// The order-preserving ways to place the dims of `from` (size-1 dims left
// out) on dims of `to` of the same size.
void place_dims(const Shape& from, const Shape& to, size_t d, size_t start, std::vector<int64_t>& placed,
                std::vector<std::vector<int64_t>>& out) {
  if (d == from.size()) {
    out.push_back(placed);
    return;
  }
  if (from[d] == 1) {
    placed.push_back(-1);
    place_dims(from, to, d + 1, start, placed, out);
    placed.pop_back();
    return;
  }
  for (size_t e = start; e < to.size(); ++e) {
    if (to[e] != from[d]) continue;
    placed.push_back(static_cast<int64_t>(e));
    place_dims(from, to, d + 1, e + 1, placed, out);
    placed.pop_back();
  }
}

// Input t's values read at the entries' output (by_row) or input indices, one per placement.
void add_placed_features(const Entries& e, size_t t, bool by_row, std::vector<Feature>& out) {
  const Tensor& in = e.b.inputs[t];
  const Shape& to = by_row ? e.out_shape : e.in_shape;
  const std::vector<Shape>& index = by_row ? e.out_index : e.in_index;
  std::vector<std::vector<int64_t>> placements;
  std::vector<int64_t> placed;
  place_dims(in.shape(), to, 0, 0, placed, placements);
  const std::vector<double> values = in.to_vector<double>();
  for (const std::vector<int64_t>& p : placements) {
    Feature f{fmt::format("input{}[", t), by_row, {}};
    for (size_t d = 0; d < p.size(); ++d) {
      f.symbol += (d ? ", " : "") + (p[d] < 0 ? std::string("0") : fmt::format("{}{}", by_row ? 'i' : 'j', p[d]));
    }
    f.symbol += "]";
    for (const Shape& i : index) {
      Shape at(p.size(), 0);
      for (size_t d = 0; d < p.size(); ++d) at[d] = p[d] < 0 ? 0 : i[p[d]];
      f.v.push_back(values[flatten(at, in.shape())]);
    }
    out.push_back(std::move(f));
  }
}

// The output's values, and every float input's values placed on the output's
// or the input's index (the input itself, x, among them).
std::vector<Feature> features(const Entries& e) {
  std::vector<Feature> out;
  if (e.b.output.size() == static_cast<size_t>(e.a.rows)) {
    out.push_back({"output" + index_names('i', e.out_shape.size()), true, e.b.output});
  }
  for (size_t t = 0; t < e.b.inputs.size(); ++t) {
    const Tensor& in = e.b.inputs[t];
    if (!in.defined() || !in.is_floating_point() || in.numel() < 2) continue;
    add_placed_features(e, t, /*by_row=*/false, out);
    add_placed_features(e, t, /*by_row=*/true, out);
  }
  // The log of an input that is positive everywhere (a derivative x^y log x, say),
  // and each index plus one along a dim of 3 or more (a count: a mean's 1 / (j + 1)).
  const size_t placed = out.size();
  for (size_t k = 0; k < placed; ++k) {
    const Feature& f = out[k];
    if (f.symbol.rfind("input", 0) != 0) continue;
    if (!std::all_of(f.v.begin(), f.v.end(), [](double v) { return v > 0; })) continue;
    Feature g{"log(" + f.symbol + ")", f.by_row, {}};
    for (double v : f.v) g.v.push_back(std::log(v));
    out.push_back(std::move(g));
  }
  for (const bool by_row : {true, false}) {
    const Shape& shape = by_row ? e.out_shape : e.in_shape;
    const std::vector<Shape>& index = by_row ? e.out_index : e.in_index;
    for (size_t d = 0; d < shape.size(); ++d) {
      if (shape[d] < 3) continue;
      Feature f{fmt::format("({}{} + 1)", by_row ? 'i' : 'j', d), by_row, {}};
      for (const Shape& i : index) f.v.push_back(static_cast<double>(i[d] + 1));
      out.push_back(std::move(f));
    }
  }
  // The output over an input read at the output's index (y / x: the quotient
  // rule's term of a sin(x) / x, say).
  if (!out.empty() && out[0].symbol.rfind("output", 0) == 0) {
    const Feature y = out[0];
    for (size_t k = 1; k < placed; ++k) {
      const Feature& f = out[k];
      if (!f.by_row || f.symbol.rfind("input", 0) != 0 || f.v.size() != y.v.size()) continue;
      Feature q{"(" + y.symbol + " / " + f.symbol + ")", true, {}};
      for (size_t i = 0; i < y.v.size(); ++i) q.v.push_back(y.v[i] / f.v[i]);
      out.push_back(std::move(q));
    }
  }
  std::erase_if(out, [](const Feature& f) {
    return !std::all_of(f.v.begin(), f.v.end(), [](double v) { return std::isfinite(v); });
  });
  return out;
}

// ---- simple forms: A = factor * N, or A = N + term ----------------------------------------

struct Fit {
  int64_t params = 0;  // how many numbers the form needed: fewer is more specific
  std::string text;
};

// "numerical" followed by this is the fitted form: " / input0[i0]", " x 2.5 x input0[i0]".
std::string scaled_by(double alpha, const std::string& symbol, int power) {
  const std::string coef = std::abs(alpha - 1) < 1e-6 ? "" : fmt::format(" x {:.4g}", alpha);
  return coef + (power > 0 ? " x " : " / ") + symbol;
}

// "input0[j0]", "-input0[j0]", "0.5 x input0[j0]"
std::string multiple(double alpha, const std::string& symbol) {
  if (std::abs(alpha - 1) < 1e-6) return symbol;
  if (std::abs(alpha + 1) < 1e-6) return "-" + symbol;
  return fmt::format("{:.4g} x {}", alpha, symbol);
}

// A = alpha * f^power * N on every entry, alpha by least squares.
std::optional<Fit> factor_of_feature(const Entries& e, const Feature& f, int power) {
  std::vector<double> scaled(e.a.values.size());
  double num = 0, den = 0;
  for (int64_t r = 0; r < e.a.rows; ++r) {
    for (int64_t c = 0; c < e.a.cols; ++c) {
      const double n = e.n.at(r, c);
      const double s = n == 0 ? 0 : std::pow(f.v[f.by_row ? r : c], power) * n;
      if (!std::isfinite(s)) return std::nullopt;
      scaled[r * e.a.cols + c] = s;
      num += e.a.at(r, c) * s;
      den += s * s;
    }
  }
  if (den == 0 || num == 0) return std::nullopt;
  const double alpha = num / den;
  for (size_t i = 0; i < scaled.size(); ++i) {
    if (!close(e.a.values[i], alpha * scaled[i], e.o)) return std::nullopt;
  }
  return Fit{1, fmt::format("off by a varying factor: analytical = numerical{} at every entry {}: {}",
                            scaled_by(alpha, f.symbol, power),
                            e.entry_names(),
                            power < 0 ? fmt::format("a factor {} that the rule leaves out?", f.symbol)
                                      : fmt::format("a factor {} too many in the rule?", f.symbol))};
}

// What the constants of a grouping are, when they are one statistic of one
// tensor over each group: the output or an input of the grouped side's shape,
// its elements in group k against factor[k] (groups with a factor only),
// relative 1e-3 (an eps inside a root moves it a little): ": c is the rms
// (root of the mean of the squares) of input0 over each group".
std::string group_statistic(const Entries& e, const Grouping& g, const std::vector<double>& factor,
                            const std::vector<char>& has) {
  const Shape& shape = g.by_row ? e.out_shape : e.in_shape;
  std::vector<std::pair<std::string, std::vector<double>>> tensors;
  if (g.by_row && e.b.output.size() == static_cast<size_t>(e.a.rows)) tensors.emplace_back("output", e.b.output);
  for (size_t t = 0; t < e.b.inputs.size(); ++t) {
    const Tensor& in = e.b.inputs[t];
    if (in.defined() && in.is_floating_point() && in.shape() == shape) {
      tensors.emplace_back(fmt::format("input{}", t), in.to_vector<double>());
    }
  }
  using Stat = std::function<double(const std::vector<double>&)>;
  const auto sum = [](const std::vector<double>& v) { return std::accumulate(v.begin(), v.end(), 0.0); };
  const auto variance = [&](const std::vector<double>& v) {
    const double mean = sum(v) / static_cast<double>(v.size());
    double sq = 0;
    for (const double x : v) sq += (x - mean) * (x - mean);
    return sq / static_cast<double>(v.size());
  };
  const auto sum_sq = [](const std::vector<double>& v) {
    return std::inner_product(v.begin(), v.end(), v.begin(), 0.0);
  };
  const std::vector<std::pair<std::string, Stat>> stats = {
      {"the sum", sum},
      {"the mean", [&](const std::vector<double>& v) { return sum(v) / static_cast<double>(v.size()); }},
      {"the sum of the squares", sum_sq},
      {"the norm (root of the sum of the squares)", [&](const std::vector<double>& v) { return std::sqrt(sum_sq(v)); }},
      {"the rms (root of the mean of the squares)",
       [&](const std::vector<double>& v) { return std::sqrt(sum_sq(v) / static_cast<double>(v.size())); }},
      {"the variance (the mean of the squared deviations from the mean)", variance},
      {"the standard deviation (the root of the variance, the mean of the squared deviations from the mean)",
       [&](const std::vector<double>& v) { return std::sqrt(variance(v)); }},
      {"the largest value", [](const std::vector<double>& v) { return *std::max_element(v.begin(), v.end()); }},
      {"the number of elements", [](const std::vector<double>& v) { return static_cast<double>(v.size()); }},
  };
  for (const auto& [name, values] : tensors) {
    std::vector<std::vector<double>> members(static_cast<size_t>(g.groups));
    for (size_t i = 0; i < values.size(); ++i) members[static_cast<size_t>(g.key[i])].push_back(values[i]);
    for (const auto& [stat_name, stat] : stats) {
      for (const int power : {1, -1}) {
        bool all = true;
        for (int64_t k = 0; k < g.groups && all; ++k) {
          if (!has[static_cast<size_t>(k)]) continue;
          const double v = std::pow(stat(members[static_cast<size_t>(k)]), power);
          all = std::isfinite(v) && std::abs(v - factor[static_cast<size_t>(k)]) <= 1e-3 * std::abs(v);
        }
        if (all) {
          return fmt::format(": c is {}{} of {} over each group", power < 0 ? "1 / " : "", stat_name, name);
        }
      }
    }
  }
  return "";
}

// A = c_g * N with one constant per group; every group that has nonzero
// numerical entries has at least two, so each constant is seen twice.
std::optional<Fit> factor_per_group(const Entries& e, const Grouping& g) {
  std::vector<double> num(g.groups, 0), den(g.groups, 0);
  std::vector<int64_t> seen(g.groups, 0);
  for (int64_t r = 0; r < e.a.rows; ++r) {
    for (int64_t c = 0; c < e.a.cols; ++c) {
      const int64_t k = g.of(r, c);
      num[k] += e.a.at(r, c) * e.n.at(r, c);
      den[k] += e.n.at(r, c) * e.n.at(r, c);
      seen[k] += !is_zero(e.n.at(r, c), e.o);
    }
  }
  std::vector<double> factor(g.groups, 0), shown;
  for (int64_t k = 0; k < g.groups; ++k) {
    if (seen[k] == 1) return std::nullopt;
    if (den[k] > 0) factor[k] = num[k] / den[k];
    // A group whose factor is 1 is right: then the wrong entries are in one
    // place, which wrong_only_in_one_place says better.
    if (seen[k] > 0 && std::abs(factor[k] - 1) <= e.o.rtol) return std::nullopt;
    if (seen[k] > 0) shown.push_back(factor[k]);
  }
  if (shown.size() < 2) return std::nullopt;
  for (int64_t r = 0; r < e.a.rows; ++r) {
    for (int64_t c = 0; c < e.a.cols; ++c) {
      if (!close(e.a.at(r, c), factor[g.of(r, c)] * e.n.at(r, c), e.o)) return std::nullopt;
    }
  }
  std::vector<char> has(static_cast<size_t>(g.groups), 0);
  for (int64_t k = 0; k < g.groups; ++k) has[static_cast<size_t>(k)] = seen[k] > 0;
  return Fit{static_cast<int64_t>(shown.size()),
             fmt::format("off by a varying factor: analytical = numerical x c at every entry {}, with one constant c "
                         "per {} (c = {}){}",
                         e.entry_names(), g.each, list_values(shown), group_statistic(e, g, factor, has))};
}

// A = N + term(r, c) inside structure s, A = N outside it.
bool added_fits(const Entries& e, const Structure& s, const std::function<double(int64_t, int64_t)>& term) {
  for (int64_t r = 0; r < e.a.rows; ++r) {
    for (int64_t c = 0; c < e.a.cols; ++c) {
      const double t = s.contains(r, c) ? term(r, c) : 0.0;
      if (!close(e.a.at(r, c), e.n.at(r, c) + t, e.o)) return false;
    }
  }
  return true;
}

// A = N + alpha * f on the entries of s (alpha by least squares), A = N elsewhere.
std::optional<Fit> added_feature(const Entries& e, const Structure& s, const Feature& f) {
  double num = 0, den = 0;
  for (int64_t r = 0; r < e.a.rows; ++r) {
    for (int64_t c = 0; c < e.a.cols; ++c) {
      if (!s.contains(r, c)) continue;
      const double v = f.v[f.by_row ? r : c];
      num += (e.a.at(r, c) - e.n.at(r, c)) * v;
      den += v * v;
    }
  }
  if (den == 0 || num == 0) return std::nullopt;
  const double alpha = num / den;
  if (!added_fits(e, s, [&](int64_t r, int64_t c) { return alpha * f.v[f.by_row ? r : c]; })) return std::nullopt;
  return Fit{1, fmt::format("off by an added term: analytical = numerical + {} at every entry {}{}{}{}: a term {} too "
                            "many in the rule, or its opposite missing?",
                            multiple(alpha, f.symbol), e.entry_names(), s.where.empty() ? "" : " ", s.where,
                            s.kind == Structure::All ? "" : ", and equal elsewhere", multiple(alpha, f.symbol))};
}

// What an added term constant per group of s means for the rule, whose dx
// then gains, for each input, the sum over its block of g times the constant.
std::string added_term_meaning(const Structure& s, const Grouping* g, const std::vector<double>& c) {
  const bool per_block = g == nullptr || g->groups == 1;
  switch (s.kind) {
    case Structure::Diagonal:
      // What c = 1 or -1 means is a fact about the rule's result, not a guess at its cause.
      if (c.size() == 1 && std::abs(c[0] - 1) < 1e-6) {
        return "each element's gradient holds its own g[i] once too often (what an identity path, such as a "
               "residual, adds)";
      }
      if (c.size() == 1 && std::abs(c[0] + 1) < 1e-6) {
        return "each element's own g[i] is missing from its gradient (what an identity path, such as a residual, "
               "adds)";
      }
      return "a term c x g[i] added to, or missing from, the gradient of each element";
    case Structure::Reduction:
      if (per_block) return "a term c x g[i] added to, or missing from, every input of the row output i reduces";
      break;
    case Structure::Fibre:
      if (per_block) {
        return "a term c x (the sum of g over the row), the same for every input of the row, is extra or missing in "
               "the rule (the derivative of a mean or a sum over the row?)";
      }
      if (g->by_row) {
        return "the difference is the same for every input of the row: the rule's term that sums over the row (the "
               "coupling term, a sum of g[i] w[i]) has wrong weights w, off by c";
      }
      return "the difference is the same for every output of the row: a term c[j] x (the sum of g over the row) has "
             "the wrong coefficient";
    case Structure::All:
      break;
  }
  return "a term the rule adds, or misses, with these values";
}

// When the numerical derivative takes only two values on s (a piecewise
// linear function: one slope per branch), an added term and a wrong slope on
// each branch give the same numbers: "where the numerical derivative is
// -0.3 the analytical one is -0.7, where it is 0.7, 0.3 ...", naming neither;
// "" when it takes one value or more than two.
std::string piecewise_slopes(const Entries& e, const Structure& s, double c) {
  std::vector<double> slopes;
  for (int64_t r = 0; r < e.a.rows; ++r)
    for (int64_t col = 0; col < e.a.cols; ++col) {
      if (!s.contains(r, col)) continue;
      const double n = e.n.at(r, col);
      if (std::none_of(slopes.begin(), slopes.end(), [&](double v) { return std::abs(v - n) <= e.o.atol; }))
        slopes.push_back(n);
      if (slopes.size() > 2) return "";
    }
  if (slopes.size() != 2) return "";
  return fmt::format("the function is piecewise linear here (its derivative takes two values, one per branch): where "
                     "the numerical derivative is {} the analytical one is {}, where it is {}, {}; each branch's "
                     "slope is off by the same c (a wrong slope on each branch, or an added term, gives this)",
                     number(slopes[0]), number(slopes[0] + c), number(slopes[1]), number(slopes[1] + c));
}

// A = N + c_k on the entries of s, one constant per group (g, or s's blocks
// when g is null); each group has at least two entries in s.
std::optional<Fit> added_per_group(const Entries& e, const Structure& s, const Grouping* g) {
  std::map<int64_t, std::pair<double, int64_t>> sums;  // group -> (sum of D, entries)
  const auto group = [&](int64_t r, int64_t c) { return g ? g->of(r, c) : s.row_key[r]; };
  for (int64_t r = 0; r < e.a.rows; ++r) {
    for (int64_t c = 0; c < e.a.cols; ++c) {
      if (!s.contains(r, c)) continue;
      auto& [sum, count] = sums[group(r, c)];
      sum += e.a.at(r, c) - e.n.at(r, c);
      ++count;
    }
  }
  std::map<int64_t, double> term;
  std::vector<double> shown;
  bool nonzero = false;
  for (const auto& [k, sc] : sums) {
    if (sc.second < 2) return std::nullopt;
    term[k] = sc.first / static_cast<double>(sc.second);
    shown.push_back(term[k]);
    nonzero = nonzero || !is_zero(term[k], e.o);
    // As for factors: a group with no difference is right, the rest a place.
    if (sums.size() > 1 && is_zero(term[k], e.o)) return std::nullopt;
  }
  if (!nonzero || !added_fits(e, s, [&](int64_t r, int64_t c) { return term[group(r, c)]; })) return std::nullopt;
  const std::string per = shown.size() == 1 ? "one constant c" : "one constant c per " + (g ? g->each : s.each);
  if (s.kind == Structure::Diagonal && shown.size() == 1) {
    if (std::string branches = piecewise_slopes(e, s, shown[0]); !branches.empty())
      return Fit{1, fmt::format("each branch's slope off: analytical = numerical + c at every entry {}{}{}, one constant c "
                                "(c = {}), and equal elsewhere: {}",
                                e.entry_names(), s.where.empty() ? "" : " ", s.where, list_values(shown), branches)};
  }
  return Fit{static_cast<int64_t>(shown.size()),
             fmt::format("off by an added term: analytical = numerical + c at every entry {}{}{}, {} (c = {}){}: {}",
                         e.entry_names(), s.where.empty() ? "" : " ", s.where, per, list_values(shown),
                         s.kind == Structure::All ? "" : ", and equal elsewhere", added_term_meaning(s, g, shown))};
}

// Every simple form that fits, the one with the fewest numbers first.
std::optional<Fit> simplest_form(const Entries& e) {
  std::vector<Fit> fits;
  const auto keep = [&](std::optional<Fit> f) {
    if (f) fits.push_back(std::move(*f));
  };
  const std::vector<Feature> fs = features(e);
  const std::vector<Structure> ss = structures(e);
  for (const Feature& f : fs) {
    keep(factor_of_feature(e, f, 1));
    keep(factor_of_feature(e, f, -1));
  }
  const Grouping one{"", true, std::vector<int64_t>(e.a.rows, 0), 1};
  for (const Structure& s : ss) {
    for (const Feature& f : fs) keep(added_feature(e, s, f));
    keep(added_per_group(e, s, &one));
    keep(added_per_group(e, s, nullptr));
  }
  for (const Grouping& g : groupings(e)) {
    keep(factor_per_group(e, g));
    for (const Structure& s : ss) keep(added_per_group(e, s, &g));
  }
  // A form is only a finding when the entries outnumber its numbers by two
  // or more: with as many numbers as entries anything fits.
  int64_t active = 0;
  for (int64_t r = 0; r < e.a.rows; ++r) {
    for (int64_t c = 0; c < e.a.cols; ++c) active += e.active(r, c);
  }
  std::erase_if(fits, [active](const Fit& f) { return f.params + 2 > active; });
  if (fits.empty()) return std::nullopt;
  return *std::min_element(fits.begin(), fits.end(), [](const Fit& p, const Fit& q) { return p.params < q.params; });
}

// A = N + c_k f on the entries of s, one constant per group of g (each by
// least squares, seen on two entries or more, none 0: a group with no
// difference is right, and the rest a place), A = N elsewhere.
std::optional<Fit> added_feature_per_group(const Entries& e, const Structure& s, const Feature& f, const Grouping& g) {
  std::vector<double> num(g.groups, 0), den(g.groups, 0);
  std::vector<int64_t> seen(g.groups, 0);
  for (int64_t r = 0; r < e.a.rows; ++r) {
    for (int64_t c = 0; c < e.a.cols; ++c) {
      if (!s.contains(r, c)) continue;
      const double v = f.v[f.by_row ? r : c];
      const int64_t k = g.of(r, c);
      num[k] += (e.a.at(r, c) - e.n.at(r, c)) * v;
      den[k] += v * v;
      seen[k] += !is_zero(v, e.o);
    }
  }
  std::vector<double> coef(g.groups, 0), shown;
  for (int64_t k = 0; k < g.groups; ++k) {
    if (seen[k] == 0) continue;
    if (seen[k] < 2) return std::nullopt;
    coef[k] = num[k] / den[k];
    if (is_zero(coef[k], e.o)) return std::nullopt;
    shown.push_back(coef[k]);
  }
  if (shown.size() < 2) return std::nullopt;
  if (!added_fits(e, s, [&](int64_t r, int64_t c) { return coef[g.of(r, c)] * f.v[f.by_row ? r : c]; })) {
    return std::nullopt;
  }
  return Fit{static_cast<int64_t>(shown.size()),
             fmt::format("off by an added term: analytical = numerical + c x {} at every entry {}{}{}, with one "
                         "constant c per {} (c = {}){}: a term c x {} too many in the rule, or its opposite missing?",
                         f.symbol, e.entry_names(), s.where.empty() ? "" : " ", s.where, g.each, list_values(shown),
                         s.kind == Structure::All ? "" : ", and equal elsewhere", f.symbol)};
}

// The simplest A = N + c_k f, one constant per group: more numbers than the
// forms of simplest_form, so tried only after the coupling and the places.
std::optional<Fit> added_feature_per_group_form(const Entries& e) {
  std::vector<Fit> fits;
  int64_t active = 0;
  for (int64_t r = 0; r < e.a.rows; ++r) {
    for (int64_t c = 0; c < e.a.cols; ++c) active += e.active(r, c);
  }
  const std::vector<Feature> fs = features(e);
  for (const Structure& s : structures(e)) {
    for (const Grouping& g : groupings(e)) {
      for (const Feature& f : fs) {
        if (std::optional<Fit> fit = added_feature_per_group(e, s, f, g); fit && fit->params + 2 <= active) {
          fits.push_back(std::move(*fit));
        }
      }
    }
  }
  if (fits.empty()) return std::nullopt;
  return *std::min_element(fits.begin(), fits.end(), [](const Fit& p, const Fit& q) { return p.params < q.params; });
}

// ---- relations with no fitted number -----------------------------------------------------

// A[r, c] = sum of N[r', c] over the rows r' with the same key as r: the
// backward answers each one-hot gradient with the one for all ones over a
// group of outputs.
bool rows_are_group_sums(const Entries& e, const std::vector<int64_t>& key, int64_t groups) {
  std::vector<double> total(static_cast<size_t>(groups * e.a.cols), 0);
  for (int64_t r = 0; r < e.a.rows; ++r) {
    for (int64_t c = 0; c < e.a.cols; ++c) total[key[r] * e.a.cols + c] += e.n.at(r, c);
  }
  for (int64_t r = 0; r < e.a.rows; ++r) {
    for (int64_t c = 0; c < e.a.cols; ++c) {
      if (!close(e.a.at(r, c), total[key[r] * e.a.cols + c], e.o)) return false;
    }
  }
  return true;
}

// Every row of A is the sum of all N's rows, or of the rows along one dim of the output.
std::string rows_are_the_sum(const Entries& e) {
  if (e.a.rows < 2) return "";
  if (rows_are_group_sums(e, std::vector<int64_t>(e.a.rows, 0), 1)) {
    return fmt::format(
        "one gradient for every output: every row of the analytical Jacobian is the sum of all the numerical rows, "
        "d output[i] / d input{}[j] = sum over i' of the numerical d output[i'] / d input{}[j] for each of the {} "
        "outputs i: the backward answers each output's own gradient with the one for a gradient of all ones, "
        "whichever output's g is 1 (either g left out of the rule, or its total sum(g) used where each output's own "
        "g[i] belongs: the two give the same here)",
        e.b.input, e.b.input, e.a.rows);
  }
  const Shape& shape = e.out_shape;
  for (size_t d = 0; d < shape.size(); ++d) {
    if (shape[d] < 2) continue;
    std::vector<int64_t> key;
    for (const Shape& i : e.out_index) key.push_back(fibre_of(i, shape, d));
    if (!rows_are_group_sums(e, key, e.a.rows / shape[d])) continue;
    const std::string i = fmt::format("i{}", d);
    return fmt::format(
        "one gradient for every output: each row of the analytical Jacobian is the sum of the numerical rows over "
        "the output's {}, d output{} / d input{}[j] = sum over {}' of the numerical d output{} / d input{}[j]: as "
        "if g were summed over dim {} (sum(g, {}), broadcast back) where each output's own g belongs",
        dim_name(d, shape), slice_str(d, i, shape.size()), e.b.input, i, slice_str(d, i + "'", shape.size()),
        e.b.input, d, d);
  }
  return "";
}

// The index of the same element with dims a and b swapped (equal sizes).
int64_t swapped_index(const Shape& index, const Shape& shape, size_t a, size_t b) {
  Shape swapped = index;
  std::swap(swapped[a], swapped[b]);
  return flatten(swapped, shape);
}

// A = N with two dims of the same size of the output (or of the input) swapped.
std::string dims_swapped(const Entries& e) {
  for (int side = 0; side < 2; ++side) {
    const bool output = side == 0;
    const Shape& shape = output ? e.out_shape : e.in_shape;
    const std::vector<Shape>& index = output ? e.out_index : e.in_index;
    for (size_t a = 0; a < shape.size(); ++a) {
      for (size_t b = a + 1; b < shape.size(); ++b) {
        if (shape[a] != shape[b] || shape[a] < 2) continue;
        bool fits = true;
        for (int64_t r = 0; r < e.a.rows && fits; ++r) {
          for (int64_t c = 0; c < e.a.cols && fits; ++c) {
            const double n = output ? e.n.at(swapped_index(index[r], shape, a, b), c)
                                    : e.n.at(r, swapped_index(index[c], shape, a, b));
            fits = close(e.a.at(r, c), n, e.o);
          }
        }
        if (!fits) continue;
        const std::string whose = output ? "the output's" : fmt::format("input {}'s", e.b.input);
        return fmt::format("dims swapped: the analytical Jacobian is the numerical one with {} dims {} and {} (both "
                           "of size {}) exchanged, on every entry: the rule {} with those dims swapped (transposed, "
                           "or summed over the wrong one of two dims of the same size?)",
                           whose, a, b, shape[a], output ? "reads g" : "writes the gradient");
      }
    }
  }
  return "";
}

// Does the set of entries nonzero in A or in N fill s exactly (all of s, nothing outside)?
bool union_fills(const Entries& e, const Structure& s) {
  for (int64_t r = 0; r < e.a.rows; ++r) {
    for (int64_t c = 0; c < e.a.cols; ++c) {
      const bool any = !is_zero(e.a.at(r, c), e.o) || !is_zero(e.n.at(r, c), e.o);
      if (any != s.contains(r, c)) return false;
    }
  }
  return true;
}

// "; each output's total over its row is right" when every row of A sums to its row of N.
std::string row_totals_right(const Entries& e) {
  for (int64_t r = 0; r < e.a.rows; ++r) {
    double a = 0, n = 0;
    for (int64_t c = 0; c < e.a.cols; ++c) a += e.a.at(r, c), n += e.n.at(r, c);
    if (!close(a, n, e.o)) return "";
  }
  return "; each output's gradient has the right total, on the wrong entries";
}

// No entry is nonzero in both A and N. When the two together fill a
// structure (every element of an elementwise function, every entry of each
// row), a condition is inverted; otherwise the gradient went elsewhere.
std::string nonzeros_disjoint(const Entries& e) {
  int64_t only_a = 0, only_n = 0;
  for (int64_t r = 0; r < e.a.rows; ++r) {
    for (int64_t c = 0; c < e.a.cols; ++c) {
      const bool a = !is_zero(e.a.at(r, c), e.o), n = !is_zero(e.n.at(r, c), e.o);
      if (a && n) return "";
      only_a += a;
      only_n += n;
    }
  }
  if (only_a == 0 || only_n == 0) return "";
  for (const Structure& s : structures(e)) {
    if (!union_fills(e, s)) continue;
    return fmt::format("the nonzero entries inverted: the analytical Jacobian is 0 at each of the {} entries where "
                       "the numerical one is not, and nonzero at each of the {} where the numerical one is 0, and "
                       "together they fill {}: a mask or a condition inverted in the rule (where(m, g, 0) for "
                       "where(m, 0, g)?)", only_n, only_a, s.only);
  }
  return fmt::format("the gradient on the wrong entries: no entry is nonzero in both Jacobians; the analytical one is "
                     "nonzero at {} entries where the numerical one is 0, and 0 at the {} where it is not{}: the "
                     "gradient routed to the wrong elements (a wrong index, argmax or gather?)",
                     only_a, only_n, row_totals_right(e));
}

// "[1, 0]": one element's index.
std::string index_text(const Shape& index) {
  std::string text = "[";
  for (size_t d = 0; d < index.size(); ++d) text += (d ? ", " : "") + std::to_string(index[d]);
  return text + "]";
}

// Within each row of the Jacobian (one output) that has a wrong entry, the
// analytical entries are the numerical ones in another order (at least two
// distinct values moved): the right values at the wrong inputs. Names the
// first moved entry and where its value belongs.
std::string values_reordered(const Entries& e) {
  const auto same = [&e](double p, double q) { return close(p, q, e.o) && close(q, p, e.o); };
  int64_t rows = 0, moved = 0;
  std::string example;
  for (int64_t r = 0; r < e.a.rows; ++r) {
    std::vector<double> a_row, n_row;
    bool wrong_row = false;
    for (int64_t c = 0; c < e.a.cols; ++c) {
      a_row.push_back(e.a.at(r, c)), n_row.push_back(e.n.at(r, c));
      wrong_row = wrong_row || e.wrong_at(r, c);
    }
    if (!wrong_row) continue;
    std::vector<double> a_sorted = a_row, n_sorted = n_row;
    std::sort(a_sorted.begin(), a_sorted.end()), std::sort(n_sorted.begin(), n_sorted.end());
    for (size_t k = 0; k < a_sorted.size(); ++k) {
      if (!same(a_sorted[k], n_sorted[k])) return "";
    }
    ++rows;
    for (int64_t c = 0; c < e.a.cols; ++c) {
      if (!e.wrong_at(r, c)) continue;
      ++moved;
      if (!example.empty()) continue;
      for (int64_t c2 = 0; c2 < e.a.cols; ++c2) {
        if (c2 == c || !same(e.a.at(r, c), e.n.at(r, c2))) continue;
        example = fmt::format("d output{} / d input{}{} is {}, the numerical value of d output{} / d input{}{}",
                              index_text(e.out_index[r]), e.b.input, index_text(e.in_index[c]), number(e.a.at(r, c)),
                              index_text(e.out_index[r]), e.b.input, index_text(e.in_index[c2]));
        break;
      }
    }
  }
  if (rows == 0 || moved < 2 || example.empty()) return "";
  return fmt::format(
      "the right values at the wrong inputs: in each of the {} outputs with a wrong entry, the "
      "analytical entries over input {} are the numerical ones in another order ({} entries moved); "
      "e.g. {}",
      rows, e.b.input, moved, example);
}

// A = N^T (same shapes): the rule multiplies g by J where J^T belongs.
std::string jacobian_transposed(const Entries& e) {
  if (!e.same_shape()) return "";
  for (int64_t r = 0; r < e.a.rows; ++r) {
    for (int64_t c = 0; c < e.a.cols; ++c) {
      if (!close(e.a.at(r, c), e.n.at(c, r), e.o)) return "";
    }
  }
  return fmt::format("the Jacobian transposed: the analytical Jacobian is the numerical one transposed, d output[i] / "
                     "d input{}[j] = the numerical d output[j] / d input{}[i] on every entry: the rule multiplies g "
                     "by the Jacobian J where J^T belongs (a rotation R for R^T, a conjugate left out, a prefix sum "
                     "for a suffix sum?)", e.b.input, e.b.input);
}

// ---- coupling: which part of the Jacobian is right ------------------------------------------

// Is A (or N) zero outside s?
bool zero_outside(const Entries& e, const Jacobian& j, const Structure& s) {
  for (int64_t r = 0; r < e.a.rows; ++r) {
    for (int64_t c = 0; c < e.a.cols; ++c) {
      if (!s.contains(r, c) && !is_zero(j.at(r, c), e.o)) return false;
    }
  }
  return true;
}

// (wrong entries inside s, entries inside s that are nonzero or wrong)
std::pair<int64_t, int64_t> wrong_inside(const Entries& e, const Structure& s) {
  int64_t wrong = 0, active = 0;
  for (int64_t r = 0; r < e.a.rows; ++r) {
    for (int64_t c = 0; c < e.a.cols; ++c) {
      if (!s.contains(r, c)) continue;
      wrong += e.wrong_at(r, c);
      active += e.active(r, c);
    }
  }
  return {wrong, active};
}

// "every input of its row along dim 1 (the last, size 5)": where N couples, in
// the smallest structure that holds all of N.
std::string coupled_span(const Entries& e, const std::vector<Structure>& ss) {
  for (const Structure& s : ss) {
    if (s.kind == Structure::All || s.kind == Structure::Diagonal || !zero_outside(e, e.n, s)) continue;
    bool every = true;
    for (int64_t r = 0; r < e.a.rows && every; ++r) {
      for (int64_t c = 0; c < e.a.cols && every; ++c) every = !s.contains(r, c) || !is_zero(e.n.at(r, c), e.o);
    }
    return (every ? "every input of " : "inputs of ") + s.span;
  }
  return fmt::format("inputs across the whole of input {}", e.b.input);
}

// A is zero outside the smallest structure that holds it, where N is not.
std::string coupling_missing(const Entries& e, const std::vector<Structure>& ss) {
  for (const Structure& s : ss) {
    if (s.kind == Structure::All || !zero_outside(e, e.a, s) || zero_outside(e, e.n, s)) continue;
    const auto [wrong, active] = wrong_inside(e, s);
    const std::string inside =
        wrong == 0 ? "which is right" : fmt::format("wrong at {} of its {} nonzero entries there too", wrong, active);
    const std::string span = coupled_span(e, ss);
    // A nonzero where N is zero: not a term left out, the coupling placed elsewhere.
    int64_t misplaced = 0;
    for (int64_t r = 0; r < e.a.rows; ++r) {
      for (int64_t c = 0; c < e.a.cols; ++c) misplaced += !is_zero(e.a.at(r, c), e.o) && is_zero(e.n.at(r, c), e.o);
    }
    if (misplaced > 0) {
      return fmt::format("the coupling in the wrong place: in the numerical Jacobian each output couples to {}, but "
                         "the analytical one has only {} instead, nonzero at {} entries where the numerical one is 0: "
                         "it couples each output to other inputs than the function does",
                         span, s.only, misplaced);
    }
    return fmt::format("a coupling term missing: in the numerical Jacobian each output couples to {}, but the "
                       "analytical one has only {} ({}), and 0 at the {} coupling entries outside it: the rule has no "
                       "term for how each output depends on the other inputs of {}",
                       span, s.only, inside, e.wrong_count - wrong,
                       span.find("row") != std::string::npos ? "its row" : "the coupled span");
  }
  return "";
}

// ---- the coupling term scaled --------------------------------------------------------------
//
// The Jacobian of softmax, of a normalisation (x / ||x||, layer norm, RMS
// norm) within a row is a diagonal part plus a coupling part of rank one,
// u[i] w[j]: its backward's term that sums g over the row, w[j] sum_i g[i]
// u[i]. When the off-diagonal entries of A are c x those of N (c one number
// per row, per output or per input element) and the diagonal of A is N's plus
// (c - 1) x the coupling's own diagonal entry u[i] w[i] (its rank-one
// extension, from the off-diagonal entries), the rule's direct term is right
// and its coupling term is c times the right one.

// u and w of a block's off-diagonal entries M[i][j] = N at (members[i],
// members[j]), i != j, verified on every one of them; nullopt when the block
// has no coupling (every entry zero), or it is not of rank one.
std::optional<std::pair<std::vector<double>, std::vector<double>>> rank_one_coupling(
    const Entries& e, const std::vector<int64_t>& members) {
  const size_t m = members.size();
  if (m < 3) return std::nullopt;
  const auto at = [&](size_t i, size_t j) { return e.n.at(members[i], members[j]); };
  size_t p = 0, q = 1;
  for (size_t i = 0; i < m; ++i) {
    for (size_t j = 0; j < m; ++j) {
      if (i != j && std::abs(at(i, j)) > std::abs(at(p, q))) p = i, q = j;
    }
  }
  if (is_zero(at(p, q), e.o)) return std::nullopt;
  std::vector<double> u(m), w(m);
  for (size_t j = 0; j < m; ++j) w[j] = j == p ? 0 : at(p, j) / at(p, q);
  for (size_t i = 0; i < m; ++i) u[i] = i == q ? 0 : at(i, q);
  // u[q] and w[p] from a third index, the one with the largest w (or u).
  size_t jw = m, iu = m;
  for (size_t k = 0; k < m; ++k) {
    if (k == p || k == q) continue;
    if (jw == m || std::abs(w[k]) > std::abs(w[jw])) jw = k;
    if (iu == m || std::abs(u[k]) > std::abs(u[iu])) iu = k;
  }
  if (w[jw] == 0 || u[iu] == 0) return std::nullopt;
  u[q] = at(q, jw) / w[jw];
  w[p] = at(iu, p) / u[iu];
  for (size_t i = 0; i < m; ++i) {
    for (size_t j = 0; j < m; ++j) {
      if (i != j && !close(u[i] * w[j], at(i, j), e.o)) return std::nullopt;
    }
  }
  return std::pair{std::move(u), std::move(w)};
}

// "c = 1 / output[i0, i1]" when the constants are alpha f^power for a value f
// per group (groups.by_row: a row's, else a column's) with alpha 1 (or -1); "".
std::string factor_as_feature(const Entries& e, const std::vector<double>& c, const std::vector<int64_t>& of,
                              bool by_row) {
  for (const Feature& f : features(e)) {
    if (f.by_row != by_row) continue;
    for (int power : {1, -1}) {
      bool fits = true;
      for (size_t i = 0; i < of.size() && fits; ++i) {
        const double v = std::pow(f.v[of[i]], power);
        fits = std::isfinite(v) && std::abs(c[i] - v) <= e.o.rtol * std::abs(v) + 1e-9;
      }
      if (fits) return power > 0 ? f.symbol : "1 / " + f.symbol;
    }
  }
  return "";
}

// "c = the norm of input 0's row (sqrt of its sum of squares)" when the
// constant of each block is that of the block's input values (alpha 1, a
// power 1, -1, 2 or -2); "".
std::string factor_as_row_norm(const Entries& e, const std::vector<double>& c,
                               const std::vector<std::vector<int64_t>>& blocks) {
  if (blocks.size() < 3) return "";
  for (int power : {1, -1, 2, -2}) {
    bool fits = true;
    for (size_t b = 0; b < blocks.size() && fits; ++b) {
      double squares = 0;
      for (int64_t col : blocks[b]) squares += e.x[col] * e.x[col];
      const double v = std::pow(std::sqrt(squares), power);
      fits = std::isfinite(v) && std::abs(c[b] - v) <= e.o.rtol * std::abs(v) + 1e-9;
    }
    if (!fits) continue;
    const std::string norm = fmt::format("||input{}'s row||", e.b.input);
    return power == 1 ? norm : power == -1 ? "1 / " + norm : power == 2 ? norm + "^2" : "1 / " + norm + "^2";
  }
  return "";
}

// The blocks of structure s (same shape: a block's rows and columns are the same elements).
struct Blocks {
  std::vector<std::vector<int64_t>> members;  // each block's rows
  std::vector<int64_t> of_row;                // each row's block
};
Blocks blocks_of(const Entries& e, const Structure& s) {
  std::map<int64_t, std::vector<int64_t>> by_key;
  for (int64_t r = 0; r < e.a.rows; ++r) by_key[s.row_key[r]].push_back(r);
  Blocks blocks{{}, std::vector<int64_t>(e.a.rows)};
  for (auto& kv : by_key) {
    for (int64_t r : kv.second) blocks.of_row[r] = static_cast<int64_t>(blocks.members.size());
    blocks.members.push_back(kv.second);
  }
  return blocks;
}

// The diagonal of N's coupling part u[i] w[i], when outside the blocks A = N
// and inside each block N's off-diagonal part is of rank one; else nothing.
std::optional<std::vector<double>> coupling_diagonal(const Entries& e, const Structure& s, const Blocks& blocks) {
  for (int64_t r = 0; r < e.a.rows; ++r) {
    for (int64_t c = 0; c < e.a.cols; ++c) {
      if (!s.contains(r, c) && e.wrong_at(r, c)) return std::nullopt;
    }
  }
  std::vector<double> diag_coupling(e.a.rows, 0);
  for (const std::vector<int64_t>& members : blocks.members) {
    const auto uw = rank_one_coupling(e, members);
    if (!uw) return std::nullopt;
    for (size_t i = 0; i < members.size(); ++i) diag_coupling[members[i]] = uw->first[i] * uw->second[i];
  }
  return diag_coupling;
}

// A = N + (c - 1) x the coupling part, with one c per group: per block
// (grouping 0), per output element (1) or per input element (2). The finding,
// or "" when no such c fits every entry.
std::string coupling_factor_per_group(const Entries& e, const Structure& s, const Blocks& blocks,
                                      const std::vector<double>& diag_coupling, int grouping) {
  const auto group = [&](int64_t r, int64_t c) { return grouping == 0 ? blocks.of_row[r] : grouping == 1 ? r : c; };
  const size_t groups = grouping == 0 ? blocks.members.size() : static_cast<size_t>(e.a.rows);
  std::vector<double> num(groups, 0), den(groups, 0);
  std::vector<int64_t> seen(groups, 0);
  for (int64_t r = 0; r < e.a.rows; ++r) {
    for (int64_t c = 0; c < e.a.cols; ++c) {
      if (r == c || !s.contains(r, c)) continue;
      const size_t k = static_cast<size_t>(group(r, c));
      num[k] += e.a.at(r, c) * e.n.at(r, c);
      den[k] += e.n.at(r, c) * e.n.at(r, c);
      seen[k] += !is_zero(e.n.at(r, c), e.o);
    }
  }
  std::vector<double> factor(groups, 1);
  for (size_t k = 0; k < groups; ++k) {
    if (seen[k] == 0) continue;
    factor[k] = num[k] / den[k];
    // Each constant seen at least twice, and none 1 (a right group: a place).
    if (seen[k] < 2 || std::abs(factor[k] - 1) <= e.o.rtol) return "";
  }
  for (int64_t r = 0; r < e.a.rows; ++r) {
    for (int64_t c = 0; c < e.a.cols; ++c) {
      if (!s.contains(r, c)) continue;
      const double f = factor[static_cast<size_t>(group(r, c))];
      const double expected = r == c ? e.n.at(r, c) + (f - 1) * diag_coupling[r] : f * e.n.at(r, c);
      if (!close(e.a.at(r, c), expected, e.o)) return "";
    }
  }
  std::vector<double> shown;
  std::vector<int64_t> of;
  for (size_t k = 0; k < groups; ++k) {
    if (seen[k] > 0) shown.push_back(factor[k]), of.push_back(static_cast<int64_t>(k));
  }
  const std::string named = grouping == 0 ? factor_as_row_norm(e, shown, blocks.members)
                                          : factor_as_feature(e, shown, of, grouping == 1);
  const std::string values = named.empty() ? list_values(shown) : named + ": " + list_values(shown);
  const std::string block = s.kind == Structure::All ? "the whole Jacobian" : "each row " +
                            s.only.substr(s.only.find("along"));
  static const char* const per[] = {"one c per row", "one c per output element i", "one c per input element j"};
  static const char* const meaning[] = {
      "the rule's coupling term (the one that sums g over the row) is c times the right one",
      "the rule's coupling term sums g[i] with c[i] times the right weight u[i]",
      "the rule's coupling term reaches each input j with c[j] times the right amount"};
  return fmt::format(
      "the coupling term scaled: within {}, the numerical Jacobian is a diagonal part plus a coupling part u[i] "
      "w[j] of rank one (as softmax's and a normalisation's are), and the analytical one is the same diagonal "
      "part plus c x the coupling part, on the diagonal too, with {} (c = {}): {}",
      block, per[grouping], values, meaning[grouping]);
}

std::string coupling_scaled(const Entries& e, const std::vector<Structure>& ss) {
  if (!e.same_shape()) return "";
  for (const Structure& s : ss) {
    if (s.kind != Structure::Fibre && s.kind != Structure::All) continue;
    const Blocks blocks = blocks_of(e, s);
    const std::optional<std::vector<double>> diag_coupling = coupling_diagonal(e, s, blocks);
    if (!diag_coupling) continue;
    for (int grouping = 0; grouping < 3; ++grouping) {
      const std::string finding = coupling_factor_per_group(e, s, blocks, *diag_coupling, grouping);
      if (!finding.empty()) return finding;
    }
  }
  return "";
}

// A statement about where the wrong entries are, and how many nonzero
// entries that place has (the fewer, the more specific the statement).
struct Place {
  std::string text;
  int64_t active = 0;
  bool copies = false;  // the place is a broadcast input's copies (it says which readers are wrong)
};

// "; there analytical = numerical x (i1 + 1) / (j1 + 1)" when, on the
// diagonal (or off it), A / N is a number times one feature (or its inverse)
// or times one feature over another, at every nonzero entry; "" otherwise.
std::string part_ratio_form(const Entries& e, bool diagonal) {
  std::vector<std::pair<int64_t, int64_t>> at;
  for (int64_t r = 0; r < e.a.rows; ++r) {
    for (int64_t c = 0; c < e.a.cols; ++c) {
      if ((r == c) == diagonal && !is_zero(e.n.at(r, c), e.o)) at.emplace_back(r, c);
    }
  }
  if (at.size() < 3) return "";
  const std::vector<Feature> fs = features(e);
  const auto value = [](const Feature& f, int64_t r, int64_t c) { return f.v[static_cast<size_t>(f.by_row ? r : c)]; };
  // A / N = alpha x top / bottom (nullptr: 1) at every entry, alpha from the first.
  const auto fits = [&](const Feature* top, const Feature* bottom) -> std::optional<double> {
    const auto shape_of = [&](int64_t r, int64_t c) {
      return (top ? value(*top, r, c) : 1.0) / (bottom ? value(*bottom, r, c) : 1.0);
    };
    const double f0 = shape_of(at[0].first, at[0].second);
    if (!std::isfinite(f0) || f0 == 0) return std::nullopt;
    const double alpha = e.a.at(at[0].first, at[0].second) / e.n.at(at[0].first, at[0].second) / f0;
    if (!(std::abs(alpha) > 1e-9)) return std::nullopt;  // A = 0 there: no ratio to state
    for (const auto& [r, c] : at) {
      if (!close(e.a.at(r, c), alpha * shape_of(r, c) * e.n.at(r, c), e.o)) return std::nullopt;
    }
    return alpha;
  };
  const auto text = [](double alpha, const Feature* top, const Feature* bottom) {
    std::string num = top ? top->symbol : "1";
    if (std::abs(alpha - 1) > 1e-6) num = fmt::format("{:.4g} x {}", alpha, num);
    return "; there analytical = numerical x " + num + (bottom ? " / " + bottom->symbol : "") + " at every entry";
  };
  for (const Feature& f : fs) {
    if (const auto alpha = fits(&f, nullptr)) return text(*alpha, &f, nullptr);
    if (const auto alpha = fits(nullptr, &f)) return text(*alpha, nullptr, &f);
  }
  for (const Feature& f : fs) {
    for (const Feature& g : fs) {
      if (&f == &g) continue;
      if (const auto alpha = fits(&f, &g)) return text(*alpha, &f, &g);
    }
  }
  return "";
}

// "; there the analytical is -1 x the numerical one (a sign flipped in that
// part)" when A = c N on the diagonal (or off it), c by least squares.
std::string part_factor(const Entries& e, bool diagonal) {
  double num = 0, den = 0;
  for (int64_t r = 0; r < e.a.rows; ++r) {
    for (int64_t c = 0; c < e.a.cols; ++c) {
      if ((r == c) != diagonal) continue;
      num += e.a.at(r, c) * e.n.at(r, c);
      den += e.n.at(r, c) * e.n.at(r, c);
    }
  }
  if (den == 0) return "";
  const double factor = num / den;
  for (int64_t r = 0; r < e.a.rows; ++r) {
    for (int64_t c = 0; c < e.a.cols; ++c) {
      if ((r == c) == diagonal && !close(e.a.at(r, c), factor * e.n.at(r, c), e.o)) return part_ratio_form(e, diagonal);
    }
  }
  return fmt::format("; there the analytical is {:.6g} x the numerical one{}", factor,
                     std::abs(factor + 1) < 1e-6 ? " (a sign flipped in that part)" : "");
}

// N has both diagonal and off-diagonal entries, and only one of the two parts is wrong.
std::optional<Place> one_part_wrong(const Entries& e, const std::vector<Structure>& ss) {
  const auto is_diagonal = [](const Structure& s) { return s.kind == Structure::Diagonal; };
  const auto diagonal = std::find_if(ss.begin(), ss.end(), is_diagonal);
  if (diagonal == ss.end() || zero_outside(e, e.n, *diagonal)) return std::nullopt;
  const auto [wrong, active] = wrong_inside(e, *diagonal);
  const std::string span = coupled_span(e, ss);
  if (wrong == 0) {
    int64_t off_diagonal = 0;
    for (int64_t r = 0; r < e.a.rows; ++r) {
      for (int64_t c = 0; c < e.a.cols; ++c) off_diagonal += r != c && e.active(r, c);
    }
    return Place{fmt::format("the diagonal right, the coupling wrong: every diagonal entry d output[i] / d input{}[i] "
                             "is right, and {} of the {} nonzero off-diagonal entries (each output couples to {}) "
                             "differ{}", e.b.input, e.wrong_count, off_diagonal, span, part_factor(e, false)),
                 off_diagonal};
  }
  if (wrong == e.wrong_count) {
    return Place{fmt::format("the coupling right, the diagonal wrong: every off-diagonal entry (each output couples "
                             "to {}) is right, and {} of the {} diagonal entries d output[i] / d input{}[i] differ{}",
                             span, wrong, active, e.b.input, part_factor(e, true)),
                 active};
  }
  return std::nullopt;
}

// ---- where the wrong entries are ----------------------------------------------------------

struct Region {
  std::string where;  // completes "wrong only ..."
  std::function<bool(int64_t, int64_t)> holds;
  bool copies = false;  // a broadcast input's copies: each copy is one reader of the input's element
};

// "the first of 4", "the last of 4", "the 2nd of 4"
std::string ordinal(int64_t v, int64_t size) {
  if (v == 0) return fmt::format("the first of {}", size);
  if (v == size - 1) return fmt::format("the last of {}", size);
  return fmt::format("number {} of {}, counting from 0", v, size);
}

// One output or input element, when every wrong entry has it.
void element_regions(const Entries& e, int64_t r0, int64_t c0, std::vector<Region>& out) {
  bool one_row = true, one_col = true;
  for (int64_t r = 0; r < e.a.rows; ++r) {
    for (int64_t c = 0; c < e.a.cols; ++c) {
      if (!e.wrong_at(r, c)) continue;
      one_row = one_row && r == r0;
      one_col = one_col && c == c0;
    }
  }
  if (e.wrong_count == 1) {
    out.push_back({fmt::format("at the one entry d output{} / d input{}{}", shape_str(e.out_index[r0]), e.b.input,
                               shape_str(e.in_index[c0])),
                   [r0, c0](int64_t r, int64_t c) { return r == r0 && c == c0; }});
  }
  if (one_row) {
    out.push_back({fmt::format("at output{} (one output element)", shape_str(e.out_index[r0])),
                   [r0](int64_t r, int64_t) { return r == r0; }});
  }
  if (one_col) {
    out.push_back({fmt::format("at input{}{} (one input element)", e.b.input, shape_str(e.in_index[c0])),
                   [c0](int64_t, int64_t c) { return c == c0; }});
  }
}

// One slice along a dim of the output or of the input (an off-by-one: the first or the last).
void slice_regions(const Entries& e, std::vector<Region>& out) {
  for (int side = 0; side < 2; ++side) {
    const bool by_row = side == 0;
    const Shape& shape = by_row ? e.out_shape : e.in_shape;
    const std::vector<Shape>* index = by_row ? &e.out_index : &e.in_index;
    const std::string name = by_row ? "output" : fmt::format("input {}", e.b.input);
    for (size_t d = 0; d < shape.size(); ++d) {
      for (int64_t v = 0; v < shape[d] && shape[d] > 1; ++v) {
        out.push_back({fmt::format("at {} index {} along {} ({})", name, slice_str(d, std::to_string(v), shape.size()),
                                   d + 1 == shape.size() && d > 0 ? fmt::format("the last dim, dim {}", d)
                                                                  : fmt::format("dim {}", d),
                                   ordinal(v, shape[d])),
                       [=](int64_t r, int64_t c) { return (*index)[by_row ? r : c][d] == v; }});
      }
    }
  }
}

// Every output index but 0 along a dim the input is broadcast over: only
// the first copy's gradient is right.
void broadcast_regions(const Entries& e, std::vector<Region>& out) {
  const Shape& in = e.in_shape;
  const Shape& shape = e.out_shape;
  if (in.size() > shape.size() || e.a.cols >= e.a.rows) return;
  for (size_t d = 0; d < shape.size(); ++d) {
    const int64_t at = static_cast<int64_t>(d) - static_cast<int64_t>(shape.size() - in.size());
    if (shape[d] < 2 || (at >= 0 && in[at] != 1)) continue;
    const std::vector<Shape>* index = &e.out_index;
    out.push_back({fmt::format("at every output index but 0 along dim {}, the dim input {} is broadcast over (all of "
                               "its {} copies but the first)", d, e.b.input, shape[d]),
                   [index, d](int64_t r, int64_t) { return (*index)[r][d] != 0; }, true});
  }
}

// Where the input's index along dim b equals, passes or precedes the output's
// along dim a (same size): a diagonal of two dims, or a causal mask's halves.
void index_pair_regions(const Entries& e, std::vector<Region>& out) {
  const std::vector<Shape>* oi = &e.out_index;
  const std::vector<Shape>* ii = &e.in_index;
  for (size_t a = 0; a < e.out_shape.size(); ++a) {
    for (size_t b = 0; b < e.in_shape.size(); ++b) {
      if (e.out_shape[a] != e.in_shape[b] || e.out_shape[a] < 2) continue;
      out.push_back({fmt::format("where j{} = i{} (the input's index along dim {} equals the output's along dim {})",
                                 b, a, b, a),
                     [=](int64_t r, int64_t c) { return (*ii)[c][b] == (*oi)[r][a]; }});
      out.push_back({fmt::format("where j{} != i{} (the input's index along dim {} differs from the output's along "
                                 "dim {})", b, a, b, a),
                     [=](int64_t r, int64_t c) { return (*ii)[c][b] != (*oi)[r][a]; }});
      out.push_back({fmt::format("where j{} > i{} (the input's index along dim {} after the output's along dim {}: "
                                 "the future, for a causal mask)", b, a, b, a),
                     [=](int64_t r, int64_t c) { return (*ii)[c][b] > (*oi)[r][a]; }});
      out.push_back({fmt::format("where j{} < i{} (the input's index along dim {} before the output's along dim {})",
                                 b, a, b, a),
                     [=](int64_t r, int64_t c) { return (*ii)[c][b] < (*oi)[r][a]; }});
    }
  }
}

// Where the index along dim d is the id an int64 input holds for the rest of
// the index (the entries a gather or a cross-entropy target picks).
void id_regions(const Entries& e, std::vector<Region>& out) {
  for (size_t t = 0; t < e.b.inputs.size(); ++t) {
    const Tensor& ids = e.b.inputs[t];
    if (!ids.defined() || ids.dtype() != DType::Int64) continue;
    const std::vector<double> v = ids.to_vector<double>();
    for (int side = 0; side < 2; ++side) {
      const bool by_row = side == 0;
      const Shape& shape = by_row ? e.out_shape : e.in_shape;
      const std::vector<Shape>* index = by_row ? &e.out_index : &e.in_index;
      for (size_t d = 0; d < shape.size(); ++d) {
        Shape rest = shape;
        rest.erase(rest.begin() + static_cast<std::ptrdiff_t>(d));
        if (ids.shape() != rest) continue;
        out.push_back({fmt::format("where {}'s index along dim {} is the id input {} holds there (the entries "
                                   "it picks)", by_row ? "the output" : fmt::format("input {}", e.b.input), d, t),
                       [=](int64_t r, int64_t c) {
                         const Shape& i = (*index)[by_row ? r : c];
                         return static_cast<double>(i[d]) == v[fibre_of(i, shape, d)];
                       }});
      }
    }
  }
}

// Where input k is below (or above) a value: when every wrong entry's input
// value lies below every right active entry's (or above), a branch's edge
// the rule puts in another place, or one branch of a piecewise rule wrong:
// "where input 0 is below a value between -1.21 and -0.64 (the largest
// input at a wrong entry, the smallest at a right one)".
void threshold_regions(const Entries& e, std::vector<Region>& out) {
  double wrong_lo = INFINITY, wrong_hi = -INFINITY, right_lo = INFINITY, right_hi = -INFINITY;
  int64_t wrong = 0, right = 0;
  for (int64_t r = 0; r < e.a.rows; ++r) {
    for (int64_t c = 0; c < e.a.cols; ++c) {
      if (!e.active(r, c)) continue;
      const double v = e.x[c];
      if (e.wrong_at(r, c)) wrong_lo = std::min(wrong_lo, v), wrong_hi = std::max(wrong_hi, v), ++wrong;
      else right_lo = std::min(right_lo, v), right_hi = std::max(right_hi, v), ++right;
    }
  }
  if (wrong < 3 || right < 3) return;  // fewer could sit at one end by chance
  const std::vector<double>& x = e.x;
  const std::string k = std::to_string(e.b.input);
  if (wrong_hi < right_lo) {
    const double cut = (wrong_hi + right_lo) / 2;
    out.push_back({fmt::format("where input {} is below a value between {} and {} (the largest input at a wrong "
                               "entry, the smallest at a right one)", k, number(wrong_hi), number(right_lo)),
                   [&x, cut](int64_t, int64_t c) { return x[c] < cut; }});
  }
  if (wrong_lo > right_hi) {
    const double cut = (wrong_lo + right_hi) / 2;
    out.push_back({fmt::format("where input {} is above a value between {} and {} (the largest input at a right "
                               "entry, the smallest at a wrong one)", k, number(right_hi), number(wrong_lo)),
                   [&x, cut](int64_t, int64_t c) { return x[c] > cut; }});
  }
}

// Where a bool, int64 or 0/1 float input of the same shape as the input (or
// the output) is true or false; where the input itself is positive, negative or zero.
void value_regions(const Entries& e, std::vector<Region>& out) {
  for (size_t t = 0; t < e.b.inputs.size(); ++t) {
    const Tensor& m = e.b.inputs[t];
    if (!m.defined() || m.requires_grad()) continue;
    const bool by_row = m.shape() != e.in_shape;
    if (by_row && m.shape() != e.out_shape) continue;
    const std::vector<double> v = m.to_vector<double>();
    // A float input that is not checked and holds only 0 and 1 is a mask too (dropout's).
    const bool zero_one = std::all_of(v.begin(), v.end(), [](double x) { return x == 0 || x == 1; });
    if (m.is_floating_point() && !zero_one) continue;
    const bool is_bool = m.dtype() == DType::Bool;
    for (bool set : {true, false}) {
      const char* value = is_bool ? (set ? "true" : "false") : zero_one ? (set ? "1" : "0") : (set ? "nonzero" : "0");
      out.push_back({fmt::format("where input {} ({}, matched to the {}) is {}", t, dtype_name(m.dtype()),
                                 by_row ? "output" : "input", value),
                     [v, by_row, set](int64_t r, int64_t c) { return (v[by_row ? r : c] != 0) == set; }});
    }
  }
  const std::vector<double>& x = e.x;
  const std::string k = std::to_string(e.b.input);
  out.push_back({"where input " + k + " is positive", [&x](int64_t, int64_t c) { return x[c] > 0; }});
  out.push_back({"where input " + k + " is negative", [&x](int64_t, int64_t c) { return x[c] < 0; }});
  out.push_back({"where input " + k + " is 0", [&x](int64_t, int64_t c) { return x[c] == 0; }});
  if (e.same_shape()) {
    out.push_back({"on the diagonal, d output[i] / d input" + k + "[i]", [](int64_t r, int64_t c) { return r == c; }});
  }
  threshold_regions(e, out);
}

// Where the output does not depend on the input: the columns of the input
// elements no output depends on, the rows of the outputs that depend on no
// input element (N zero throughout), and both. A mask or a constant inside f
// (not one of its inputs, so value_regions cannot name it) makes them.
std::string list_indices(const Entries& e, bool by_row, const std::vector<char>& which);

void dead_regions(const Entries& e, std::vector<Region>& out) {
  std::vector<char> dead_row(e.a.rows, 1), dead_col(e.a.cols, 1);
  for (int64_t r = 0; r < e.a.rows; ++r) {
    for (int64_t c = 0; c < e.a.cols; ++c) {
      if (!is_zero(e.n.at(r, c), e.o)) dead_row[r] = 0, dead_col[c] = 0;
    }
  }
  const bool any_col = std::any_of(dead_col.begin(), dead_col.end(), [](char v) { return v != 0; });
  const bool any_row = std::any_of(dead_row.begin(), dead_row.end(), [](char v) { return v != 0; });
  const std::string cols = fmt::format("the columns of the elements of input {} no output depends on ({})", e.b.input,
                                       list_indices(e, false, dead_col));
  const std::string rows = fmt::format("the rows of the outputs that depend on no element of input {} ({})",
                                       e.b.input, list_indices(e, true, dead_row));
  if (any_col) {
    out.push_back({"in " + cols + ", where the numerical Jacobian is 0 throughout",
                   [dead_col](int64_t, int64_t c) { return dead_col[c] != 0; }});
  }
  if (any_row) {
    out.push_back({"in " + rows + ", where the numerical Jacobian is 0 throughout",
                   [dead_row](int64_t r, int64_t) { return dead_row[r] != 0; }});
  }
  if (any_col && any_row) {
    out.push_back({"in " + cols + " and " + rows + ", where the numerical Jacobian is 0 throughout",
                   [dead_row, dead_col](int64_t r, int64_t c) { return dead_row[r] != 0 || dead_col[c] != 0; }});
  }
}

// "; there each is -1 x the numerical one (the sign flipped)", "; there each
// is the numerical one plus 0.025" when one factor (or one added number)
// gives every wrong entry; "" when none does.
std::string wrong_entries_relation(const Entries& e) {
  double num = 0, den = 0, first_diff = NAN;
  bool same_diff = true;
  for (int64_t r = 0; r < e.a.rows; ++r) {
    for (int64_t c = 0; c < e.a.cols; ++c) {
      if (!e.wrong_at(r, c)) continue;
      num += e.a.at(r, c) * e.n.at(r, c), den += e.n.at(r, c) * e.n.at(r, c);
      const double d = e.a.at(r, c) - e.n.at(r, c);
      if (std::isnan(first_diff)) first_diff = d;
      same_diff = same_diff && std::abs(d - first_diff) <= e.o.atol + e.o.rtol * std::abs(first_diff);
    }
  }
  if (e.wrong_count < 2) return "";
  if (den > 0) {
    const double factor = num / den;
    bool fits = true;
    for (int64_t r = 0; r < e.a.rows && fits; ++r) {
      for (int64_t c = 0; c < e.a.cols && fits; ++c) {
        fits = !e.wrong_at(r, c) || (!is_zero(e.n.at(r, c), e.o) && close(e.a.at(r, c), factor * e.n.at(r, c), e.o));
      }
    }
    if (fits && std::abs(factor) < 1e-9) return "; there the analytical one is 0 at each";
    if (fits) {
      return fmt::format("; there each is {:.6g} x the numerical one{}", factor,
                         std::abs(factor + 1) < 1e-6 ? " (the sign flipped)" : "");
    }
  }
  return same_diff ? fmt::format("; there each is the numerical one {:+.6g}", first_diff) : "";
}

// All wrong entries in one region, and right active entries outside it (so
// the region says where, not merely "where anything is"); the smallest region.
// A region that also holds right entries is said to: a constant inside f
// (targets, weights) can pick entries that the region only happens to hold.
std::optional<Place> wrong_only_in_one_place(const Entries& e) {
  int64_t r0 = -1, c0 = -1;
  for (size_t i = 0; i < e.wrong.size() && r0 < 0; ++i) {
    if (e.wrong[i]) r0 = static_cast<int64_t>(i) / e.a.cols, c0 = static_cast<int64_t>(i) % e.a.cols;
  }
  std::vector<Region> regions;
  element_regions(e, r0, c0, regions);
  slice_regions(e, regions);
  broadcast_regions(e, regions);
  index_pair_regions(e, regions);
  id_regions(e, regions);
  value_regions(e, regions);
  const size_t first_dead = regions.size();
  dead_regions(e, regions);
  const Region* best = nullptr;
  int64_t best_active = 0;
  for (const Region& g : regions) {
    int64_t active = 0;
    bool fits = true, right_outside = false;
    for (int64_t r = 0; r < e.a.rows && fits; ++r) {
      for (int64_t c = 0; c < e.a.cols && fits; ++c) {
        const bool in = g.holds(r, c);
        fits = in || !e.wrong_at(r, c);
        active += in && e.active(r, c);
        right_outside = right_outside || (!in && e.active(r, c));
      }
    }
    if (fits && right_outside && (best == nullptr || active < best_active)) best = &g, best_active = active;
  }
  if (best == nullptr) return std::nullopt;
  // Where N is 0 throughout, the wrong entries are gradients where there is
  // none to give; in the columns (or rows) of a dead input element (or
  // output), something inside f cut it off.
  bool n_zero = true;
  for (int64_t r = 0; r < e.a.rows && n_zero; ++r) {
    for (int64_t c = 0; c < e.a.cols && n_zero; ++c) n_zero = !best->holds(r, c) || is_zero(e.n.at(r, c), e.o);
  }
  const bool dead = best >= regions.data() + first_dead;
  const std::string none = dead ? ": the rule gives a gradient where the output does not depend on the input (a "
                                  "mask, or a constant?)"
                           : n_zero ? ", where the numerical Jacobian is 0: the rule gives a gradient where the output "
                                      "does not depend on the input"
                                    : "";
  const std::string count = best_active == e.wrong_count
                                ? fmt::format("all {} nonzero entries there", best_active)
                                : fmt::format("{} of the {} nonzero entries there; the other {} there are right, so "
                                              "this place alone does not pick them",
                                              e.wrong_count, best_active, best_active - e.wrong_count);
  const std::string relation = n_zero ? "" : wrong_entries_relation(e);
  return Place{fmt::format("only some entries wrong: wrong only {} ({}){}{}; every entry elsewhere is right",
                           best->where, count, none, relation),
               best_active, best->copies};
}

// "; the wrong ones are where |input0| is about 0.75 or less, the right ones
// where it is about 1.2 or more" (3 digits: "about") when |v| (v per diagonal element) separates the wrong diagonal
// entries from the right active ones; "" when it does not.
std::string separated_by(const Entries& e, const std::vector<double>& v, const std::string& what) {
  double wrong_lo = INFINITY, wrong_hi = -INFINITY, right_lo = INFINITY, right_hi = -INFINITY;
  for (int64_t i = 0; i < e.a.rows; ++i) {
    if (!e.active(i, i)) continue;
    const double m = std::abs(v[static_cast<size_t>(i)]);
    if (e.wrong_at(i, i)) {
      wrong_lo = std::min(wrong_lo, m), wrong_hi = std::max(wrong_hi, m);
    } else {
      right_lo = std::min(right_lo, m), right_hi = std::max(right_hi, m);
    }
  }
  if (right_lo > right_hi) return "";  // no right active entry to compare with
  if (wrong_hi < right_lo)
    return fmt::format("; the wrong ones are where |{}| is about {:.3g} or less, the right ones where it is about {:.3g} "
                       "or more",
                       what, wrong_hi, right_lo);
  if (wrong_lo > right_hi)
    return fmt::format("; the wrong ones are where |{}| is about {:.3g} or more, the right ones where it is about {:.3g} "
                       "or less",
                       what, wrong_lo, right_hi);
  return "";
}

// ---- an elementwise derivative of simple form ----------------------------------------------

// c[0] + c[1] f + ... + c[k] f^k by least squares (normal equations, k <= 2),
// or nothing when they are singular: f takes fewer distinct values than terms.
std::optional<std::vector<double>> least_squares_poly(const std::vector<double>& f, const std::vector<double>& y,
                                                      size_t terms) {
  std::vector<std::vector<double>> m(terms, std::vector<double>(terms + 1, 0.0));
  for (size_t i = 0; i < f.size(); ++i) {
    for (size_t r = 0; r < terms; ++r) {
      for (size_t c = 0; c < terms; ++c) m[r][c] += std::pow(f[i], static_cast<double>(r + c));
      m[r][terms] += std::pow(f[i], static_cast<double>(r)) * y[i];
    }
  }
  for (size_t col = 0; col < terms; ++col) {  // Gauss-Jordan with partial pivoting
    size_t pivot = col;
    for (size_t r = col + 1; r < terms; ++r) {
      if (std::abs(m[r][col]) > std::abs(m[pivot][col])) pivot = r;
    }
    if (std::abs(m[pivot][col]) < 1e-12) return std::nullopt;
    std::swap(m[col], m[pivot]);
    for (size_t r = 0; r < terms; ++r) {
      if (r == col) continue;
      const double k = m[r][col] / m[col][col];
      for (size_t c = col; c <= terms; ++c) m[r][c] -= k * m[col][c];
    }
  }
  std::vector<double> coef(terms);
  for (size_t r = 0; r < terms; ++r) coef[r] = m[r][terms] / m[r][r];
  return coef;
}

// "1 - output[i]^2", "2 x input0[i]", "0.5 + numerical": the polynomial with
// its coefficients as 4 digits (a coefficient under 1e-9 of the largest left out).
std::string poly_text(const std::vector<double>& c, const std::string& symbol) {
  double largest = 0;
  for (const double v : c) largest = std::max(largest, std::abs(v));
  std::string text;
  for (size_t k = 0; k < c.size(); ++k) {
    if (std::abs(c[k]) <= 1e-9 * largest) continue;
    const std::string power = k == 0 ? "" : k == 1 ? symbol : symbol + "^" + std::to_string(k);
    const double v = text.empty() ? c[k] : std::abs(c[k]);
    const std::string sign = text.empty() ? "" : c[k] < 0 ? " - " : " + ";
    const std::string digits = fmt::format("{:.4g}", v);  // as shown: 0.99999 is "1"
    const std::string coefficient = k == 0 ? digits : digits == "1" ? "" : digits == "-1" ? "-" : digits + " x ";
    text += sign + coefficient + power;
  }
  return text.empty() ? "0" : text;
}

// "input0[i] x input1[i]", "input1[i]^2", "input1[i] / input0[i]", "1 / (input0[i] x input1[i])".
std::string product_text(const std::string& p, const std::string& q) {
  const std::string inverse = "1 / ";
  const bool p_inv = p.rfind(inverse, 0) == 0, q_inv = q.rfind(inverse, 0) == 0;
  const std::string p_base = p_inv ? p.substr(inverse.size()) : p, q_base = q_inv ? q.substr(inverse.size()) : q;
  if (p == q) return p_inv ? "1 / " + p_base + "^2" : p + "^2";
  if (p_inv && q_inv) return "1 / (" + p_base + " x " + q_base + ")";
  if (p_inv) return q + " / " + p_base;
  if (q_inv) return p + " / " + q_base;
  return p + " x " + q;
}

// A value per entry of a set of entries, and its name there.
struct Candidate {
  std::string symbol;     // "output[i]", "input1[i0, j1]", "numerical"
  std::vector<double> v;  // one per entry of the set
};

// The analytical entries y_a (and the numerical ones y_n) of a set of
// entries, and the simplest form in the candidates that equals every one of
// y_a, in this order: one candidate times a number, then a product of two
// (one number: a rule that multiplies by the wrong input copies a
// neighbouring line), a sum of two (two numbers), a polynomial of degree 1,
// then 2, in one candidate (by least squares), and a + b x numerical (the last
// candidate). A polynomial is seen on two entries more than it has numbers,
// over as many distinct values. Nothing when nothing fits or N has A's form too.
struct SimpleForm {
  std::string analytical;     // "1 + output[i]^2", "input0[i] x input2[i]", "1 - numerical"
  std::string numerical;      // N's form in the same terms, or ""
  bool of_numerical = false;  // the analytical one's form is in the numerical one
};
// Fits of A (or N) to simple forms of the candidates, each checked at every
// element within the test's tolerance (twice that for the numerical one).
struct FormFitter {
  const Entries& e;
  const std::vector<Candidate>& candidates;
  size_t count;  // elements
  size_t named;  // candidates.size() - 1: the last is the numerical derivative itself

  bool within(double fitted, double y, bool loose) const {
    // The numerical derivative carries finite-difference error: the test's own tolerance, twice.
    return std::abs(fitted - y) <= (loose ? 2.0 : 1.0) * (e.o.atol + e.o.rtol * std::abs(y));
  }
  // c_0 + c_1 f + ... (terms coefficients) fitting y at every element.
  std::optional<std::vector<double>> poly_fit(const std::vector<double>& f, const std::vector<double>& y, size_t terms,
                                              bool loose) const {
    const std::set<double> distinct(f.begin(), f.end());
    if (distinct.size() < terms + 2 || count < terms + 2) return std::nullopt;
    const std::optional<std::vector<double>> c = least_squares_poly(f, y, terms);
    for (size_t i = 0; c && i < count; ++i) {
      double value = 0;
      for (size_t k = 0; k < terms; ++k) value += (*c)[k] * std::pow(f[i], static_cast<double>(k));
      if (!within(value, y[i], loose)) return std::nullopt;
    }
    return c;
  }
  // One candidate (q = named: times 1), or a product of two, times a number.
  std::string product_fit(const std::vector<double>& y, bool loose) const {
    std::vector<std::pair<size_t, size_t>> pairs;  // singles first, then products
    const auto inverse = [&](size_t c) { return candidates[c].symbol.rfind("1 / ", 0) == 0; };
    for (size_t p = 0; p < named; ++p) pairs.emplace_back(p, named);
    for (int inverses = 0; inverses <= 2; ++inverses) {  // products of fewer reciprocals first
      for (size_t p = 0; p < named; ++p) {
        for (size_t q = p; q < named; ++q) {
          if (static_cast<int>(inverse(p)) + static_cast<int>(inverse(q)) == inverses) pairs.emplace_back(p, q);
        }
      }
    }
    for (const auto& [p, q] : pairs) {
      std::vector<double> fg(count);
      double num = 0, den = 0;
      for (size_t i = 0; i < count; ++i) {
        fg[i] = candidates[p].v[i] * (q == named ? 1.0 : candidates[q].v[i]);
        num += fg[i] * y[i], den += fg[i] * fg[i];
      }
      if (den == 0 || num == 0 || count < 3) continue;
      const double alpha = num / den;
      bool ok = true;
      for (size_t i = 0; i < count && ok; ++i) ok = within(alpha * fg[i], y[i], loose);
      if (!ok) continue;
      const std::string fgs =
          q == named ? candidates[p].symbol : product_text(candidates[p].symbol, candidates[q].symbol);
      const std::string digits = fmt::format("{:.4g}", alpha);
      if (digits == "1") return fgs;
      if (digits == "-1") return "-" + fgs;
      return fgs.rfind("1 / ", 0) == 0 ? digits + " / " + fgs.substr(4) : digits + " x " + fgs;
    }
    return "";
  }
  // Two numbers: A = alpha f + beta g, a sum of two of them (p - t where p (1 - p) divides it).
  std::string sum_fit(const std::vector<double>& y, bool loose) const {
    if (count < 4) return "";
    for (size_t p = 0; p < named; ++p) {
      for (size_t q = p + 1; q < named; ++q) {
        const std::vector<double>& f = candidates[p].v;
        const std::vector<double>& h = candidates[q].v;
        double ff = 0, fh = 0, hh = 0, fy = 0, hy = 0;
        for (size_t i = 0; i < count; ++i) {
          ff += f[i] * f[i], fh += f[i] * h[i], hh += h[i] * h[i], fy += f[i] * y[i], hy += h[i] * y[i];
        }
        const double det = ff * hh - fh * fh;
        if (std::abs(det) <= 1e-12 * std::max(1.0, ff * hh)) continue;
        const double alpha = (fy * hh - hy * fh) / det, beta = (hy * ff - fy * fh) / det;
        bool ok = alpha != 0 && beta != 0;
        for (size_t i = 0; i < count && ok; ++i) ok = within(alpha * f[i] + beta * h[i], y[i], loose);
        if (!ok) continue;
        const auto term = [](double c, const std::string& sym, bool first) {
          const std::string digits = fmt::format("{:.4g}", std::abs(c));
          const std::string sign = first ? (c < 0 ? "-" : "") : (c < 0 ? " - " : " + ");
          return sign + (digits == "1" ? sym : digits + " x " + sym);
        };
        return term(alpha, candidates[p].symbol, true) + term(beta, candidates[q].symbol, false);
      }
    }
    return "";
  }
};

std::optional<SimpleForm> simple_form(const Entries& e, const std::vector<double>& y_a, const std::vector<double>& y_n,
                                      const std::vector<Candidate>& candidates) {
  const FormFitter fit{e, candidates, y_a.size(), candidates.size() - 1};
  if (const std::string form = fit.product_fit(y_a, false); !form.empty()) {
    const std::string numerical = fit.product_fit(y_n, true);
    if (form == numerical) return std::nullopt;
    return SimpleForm{form, numerical};
  }
  if (const std::string form = fit.sum_fit(y_a, false); !form.empty()) {
    const std::string numerical = fit.sum_fit(y_n, true);
    if (form != numerical) return SimpleForm{form, numerical};
  }
  std::vector<std::pair<size_t, const Candidate*>> order;  // degree 1 before 2; the numerical derivative last
  for (size_t terms = 2; terms <= 3; ++terms) {
    for (size_t c = 0; c < fit.named; ++c) order.emplace_back(terms, &candidates[c]);
  }
  order.emplace_back(2, &candidates.back());
  for (const auto& [terms, cand] : order) {
    const std::optional<std::vector<double>> ca = fit.poly_fit(cand->v, y_a, terms, false);
    if (!ca) continue;
    const std::string form = poly_text(*ca, cand->symbol);
    if (cand == &candidates.back()) return SimpleForm{form, "", true};
    if (const std::optional<std::vector<double>> cn = fit.poly_fit(cand->v, y_n, terms, true)) {
      const std::string numerical = poly_text(*cn, cand->symbol);
      if (numerical == form) continue;  // the numerical one's form too: no finding
      return SimpleForm{form, numerical};
    }
    return SimpleForm{form, ""};
  }
  return std::nullopt;
}

// An elementwise block: "the analytical derivative is 1 + output[i]^2 at
// every element, the numerical one 1 - output[i]^2" over the active diagonal
// entries, in the output and each input of the output's shape at [i].
std::string derivative_form(const Entries& e) {
  std::vector<int64_t> at;
  for (int64_t i = 0; i < e.a.rows; ++i) {
    if (e.active(i, i)) at.push_back(i);
  }
  const auto pick = [&at](const std::vector<double>& v) {
    std::vector<double> out;
    for (const int64_t i : at) out.push_back(v[static_cast<size_t>(i)]);
    return out;
  };
  std::vector<double> a, n;
  for (const int64_t i : at) a.push_back(e.a.at(i, i)), n.push_back(e.n.at(i, i));
  std::vector<Candidate> candidates;
  if (e.b.output.size() == static_cast<size_t>(e.a.rows)) candidates.push_back({"output[i]", pick(e.b.output)});
  for (size_t t = 0; t < e.b.inputs.size(); ++t) {
    const Tensor& in = e.b.inputs[t];
    if (!in.defined() || !in.is_floating_point() || in.shape() != e.out_shape) continue;
    candidates.push_back({fmt::format("input{}[i]", t), pick(in.to_vector<double>())});
  }
  // And their reciprocals, where none is 0 (a derivative of a quotient or a log),
  // and the logs of the inputs positive everywhere (a power's x^y log x).
  for (size_t c = 0, n_named = candidates.size(); c < n_named; ++c) {
    Candidate inverse{"1 / " + candidates[c].symbol, {}};
    for (const double v : candidates[c].v) inverse.v.push_back(1 / v);
    if (std::all_of(inverse.v.begin(), inverse.v.end(), [](double v) { return std::isfinite(v); })) {
      candidates.push_back(std::move(inverse));
    }
    if (candidates[c].symbol.rfind("input", 0) == 0 &&
        std::all_of(candidates[c].v.begin(), candidates[c].v.end(), [](double v) { return v > 0; })) {
      Candidate log_of{"log(" + candidates[c].symbol + ")", {}};
      for (const double v : candidates[c].v) log_of.v.push_back(std::log(v));
      candidates.push_back(std::move(log_of));
    }
  }
  candidates.push_back({"numerical", n});
  if (const std::optional<SimpleForm> form = simple_form(e, a, n, candidates)) {
    if (form->of_numerical) return "analytical = " + form->analytical + " at every element";
    return "the analytical derivative is " + form->analytical + " at every element" +
           (form->numerical.empty() ? "" : ", the numerical one " + form->numerical);
  }
  // Or both one over a simple form (a derivative 1 / (1 + x^2) written 1 / (1 - x^2)).
  std::vector<double> inv_a, inv_n;
  for (size_t i = 0; i < a.size(); ++i) inv_a.push_back(1 / a[i]), inv_n.push_back(1 / n[i]);
  const auto finite = [](const std::vector<double>& v) {
    return std::all_of(v.begin(), v.end(), [](double x) { return std::isfinite(x); });
  };
  if (!finite(inv_a) || !finite(inv_n)) return "";
  candidates.back() = {"1 / numerical", inv_n};
  const std::optional<SimpleForm> inverse = simple_form(e, inv_a, inv_n, candidates);
  if (!inverse || inverse->of_numerical) return "";
  return "the analytical derivative is 1 / (" + inverse->analytical + ") at every element" +
         (inverse->numerical.empty() ? "" : ", the numerical one 1 / (" + inverse->numerical + ")");
}

// Some entries wrong, the others right, and the analytical Jacobian 0 at
// every wrong one where the numerical one is not: "entries missing: the
// analytical Jacobian is 0 at the 3 wrong entries (d output[0] / d
// input0[0, 3], ...), where the numerical one is 1, 1, 1; every other entry
// is right".
std::string entries_missing(const Entries& e) {
  if (e.wrong_count == 0 || e.wrong_count == static_cast<int64_t>(e.a.values.size())) return "";
  std::string where;
  int64_t shown = 0;
  std::vector<double> numerical;
  for (int64_t r = 0; r < e.a.rows; ++r) {
    for (int64_t c = 0; c < e.a.cols; ++c) {
      if (!e.wrong_at(r, c)) continue;
      if (!is_zero(e.a.at(r, c), e.o) || is_zero(e.n.at(r, c), e.o)) return "";
      numerical.push_back(e.n.at(r, c));
      if (shown++ < 3) {
        where += fmt::format("{}d output{} / d input{}{}", shown > 1 ? ", " : "", index_text(e.out_index[r]),
                             e.b.input, index_text(e.in_index[c]));
      }
    }
  }
  if (shown > 3) where += ", ...";
  const bool equal = std::all_of(numerical.begin(), numerical.end(), [&](double v) {
    return std::abs(v - numerical.front()) <= 1e-6 * std::abs(numerical.front());
  });
  return fmt::format("entries missing: the analytical Jacobian is 0 at the {} wrong entries ({}), where the numerical "
                     "one is {}; every other entry is right",
                     e.wrong_count, where,
                     equal ? fmt::format("{:.4g} at each", numerical.front()) : list_values(numerical));
}

// Some entries wrong, the others right: the wrong entries' analytical values
// in a simple form of the features (the output at the entry's row, each input
// at the row's or the column's index): "wrong entries of a simple form: at
// the 6 wrong entries the analytical one is output[i0, i1] (the numerical one
// is not); the other entries are right".
std::string wrong_entries_form(const Entries& e) {
  if (e.wrong_count < 3) return "";
  std::vector<std::pair<int64_t, int64_t>> at;
  std::vector<double> a, n;
  for (int64_t r = 0; r < e.a.rows; ++r) {
    for (int64_t c = 0; c < e.a.cols; ++c) {
      if (!e.wrong_at(r, c)) continue;
      at.emplace_back(r, c);
      a.push_back(e.a.at(r, c)), n.push_back(e.n.at(r, c));
    }
  }
  std::vector<Candidate> candidates;
  for (const Feature& f : features(e)) {
    Candidate c{f.symbol, {}};
    for (const auto& [r, col] : at) c.v.push_back(f.v[static_cast<size_t>(f.by_row ? r : col)]);
    candidates.push_back(std::move(c));
  }
  candidates.push_back({"numerical", n});
  const std::optional<SimpleForm> form = simple_form(e, a, n, candidates);
  if (!form) return "";
  std::string first;  // where they are: the first three
  for (size_t k = 0; k < std::min<size_t>(3, at.size()); ++k) {
    first += fmt::format("{}d output{} / d input{}{}", k ? ", " : "", index_text(e.out_index[at[k].first]), e.b.input,
                         index_text(e.in_index[at[k].second]));
  }
  if (at.size() > 3) first += ", ...";
  if (form->of_numerical) {
    return fmt::format(
        "wrong entries of a simple form: at the {} wrong entries ({}), analytical = {}; every other "
        "entry is right",
        e.wrong_count, first, form->analytical);
  }
  return fmt::format(
      "wrong entries of a simple form: at the {} wrong entries ({}) the analytical one is {}{}; every "
      "other entry is right",
      e.wrong_count, first, form->analytical,
      form->numerical.empty() ? " (the numerical one is not)" : ", the numerical one " + form->numerical);
}

// "; the wrong ones are where input0 lies between -0.58 and 0.91, the
// right ones outside" (or the reverse) when an interval of v holds exactly
// the wrong (or exactly the right) active diagonal entries.
std::string inside_interval(const Entries& e, const std::vector<double>& v, const std::string& what) {
  for (const bool wrong_inside : {true, false}) {
    double lo = INFINITY, hi = -INFINITY;
    bool any_out = false;
    for (int64_t i = 0; i < e.a.rows; ++i) {
      if (!e.active(i, i)) continue;
      if (e.wrong_at(i, i) == wrong_inside) {
        lo = std::min(lo, v[static_cast<size_t>(i)]), hi = std::max(hi, v[static_cast<size_t>(i)]);
      } else {
        any_out = true;
      }
    }
    if (!any_out || lo > hi) continue;
    bool clean = true;
    for (int64_t i = 0; i < e.a.rows && clean; ++i) {
      if (!e.active(i, i) || e.wrong_at(i, i) == wrong_inside) continue;
      clean = v[static_cast<size_t>(i)] < lo || v[static_cast<size_t>(i)] > hi;
    }
    if (clean) {
      return fmt::format("; the {} ones are where {} lies between {:.3g} and {:.3g}, the {} ones outside",
                         wrong_inside ? "wrong" : "right", what, lo, hi, wrong_inside ? "right" : "wrong");
    }
  }
  return "";
}

bool both_diagonal(const Entries& e, const std::vector<Structure>& ss) {
  return !ss.empty() && ss.front().kind == Structure::Diagonal && zero_outside(e, e.a, ss.front()) &&
         zero_outside(e, e.n, ss.front());
}

std::string elementwise_head(const Entries& e) {
  return fmt::format(
      "the elementwise derivative is wrong: both Jacobians are diagonal (output[i] depends on input{}[i] alone), and "
      "d output[i] / d input{}[i] differs at {} of the {} elements",
      e.b.input, e.b.input, e.wrong_count, e.a.rows);
}

// An elementwise block whose analytical and numerical derivatives both have a simple form.
std::string elementwise_forms(const Entries& e, const std::vector<Structure>& ss) {
  if (!both_diagonal(e, ss)) return "";
  for (int64_t i = 0; i < e.a.rows; ++i) {
    if (e.active(i, i) && !e.wrong_at(i, i)) return "";  // some right: where they are says more
  }
  const std::string form = derivative_form(e);
  return form.find(", the numerical one ") == std::string::npos ? "" : elementwise_head(e) + ": " + form;
}

// Both Jacobians diagonal, the wrong entries on the diagonal.
std::string elementwise_wrong(const Entries& e, const std::vector<Structure>& ss) {
  if (!both_diagonal(e, ss)) return "";
  const std::string head = elementwise_head(e);
  // One factor for every wrong entry (least squares over them), the others right.
  double num = 0, den = 0;
  for (int64_t i = 0; i < e.a.rows; ++i) {
    if (!e.wrong_at(i, i)) continue;
    num += e.a.at(i, i) * e.n.at(i, i);
    den += e.n.at(i, i) * e.n.at(i, i);
  }
  bool fits = den > 0 && e.wrong_count < e.a.rows;
  const double factor = fits ? num / den : 0;
  for (int64_t i = 0; i < e.a.rows && fits; ++i) {
    fits = !e.wrong_at(i, i) || (!is_zero(e.n.at(i, i), e.o) && close(e.a.at(i, i), factor * e.n.at(i, i), e.o));
  }
  if (fits) {
    std::vector<double> numerical_diagonal;
    for (int64_t i = 0; i < e.a.rows; ++i) numerical_diagonal.push_back(e.n.at(i, i));
    std::string where = separated_by(e, e.x, fmt::format("input{}", e.b.input));
    if (where.empty()) where = inside_interval(e, e.x, fmt::format("input{}", e.b.input));
    if (where.empty()) where = separated_by(e, numerical_diagonal, "the numerical derivative");
    return fmt::format("{}: {} {:.6g} x the numerical one{}; the other {} are right{}", head,
                       e.wrong_count == 1 ? std::string("the wrong entry is")
                                          : fmt::format("the {} wrong entries are each", e.wrong_count),
                       factor, std::abs(factor + 1) < 1e-6 ? " (the sign flipped there)" : "",
                       e.a.rows - e.wrong_count, where);
  }
  if (const std::string form = derivative_form(e); !form.empty()) return head + ": " + form;
  return head + " with no sign, factor, simple form or place that fits them all: the rule's formula for the "
                "derivative itself is wrong";
}

// "0..2", "3", "{0, 2..3}": a set of indices as runs.
std::string runs(const std::set<int64_t>& values) {
  std::string set;
  int64_t count = 0;
  for (auto it = values.begin(); it != values.end();) {
    auto run = it;
    while (std::next(run) != values.end() && *std::next(run) == *run + 1) ++run;
    set += fmt::format("{}{}", set.empty() ? "" : ", ", *it == *run ? std::to_string(*it)
                                                                     : fmt::format("{}..{}", *it, *run));
    ++count;
    it = std::next(run);
  }
  return count > 1 ? "{" + set + "}" : set;
}

// The indices (rows by_row, else columns) with `which` set, said as
// "output[0..1, ..]" when they are exactly every combination of their values
// along each dim (".." for every value of a dim); "" when they are not, or are
// every index.
std::string index_pattern(const Entries& e, bool by_row, const std::vector<char>& which) {
  const Shape& shape = by_row ? e.out_shape : e.in_shape;
  const std::vector<Shape>& index = by_row ? e.out_index : e.in_index;
  std::vector<std::set<int64_t>> seen(shape.size());
  int64_t count = 0;
  for (size_t i = 0; i < index.size(); ++i) {
    if (!which[i]) continue;
    ++count;
    for (size_t d = 0; d < shape.size(); ++d) seen[d].insert(index[i][d]);
  }
  int64_t product = count > 0 ? 1 : 0;
  bool everything = true;
  std::string s = by_row ? "output[" : fmt::format("input{}[", e.b.input);
  for (size_t d = 0; d < shape.size(); ++d) {
    product *= static_cast<int64_t>(seen[d].size());
    const bool all = static_cast<int64_t>(seen[d].size()) == shape[d];
    everything = everything && all;
    s += (d ? ", " : "") + (all ? std::string("..") : runs(seen[d]));
  }
  if (count == 0 || product != count || everything) return "";
  return s + "]";
}

// "input0[0, 1], input0[0, 4] and 3 more" for the indices with `which` set.
std::string list_indices(const Entries& e, bool by_row, const std::vector<char>& which) {
  const std::vector<Shape>& index = by_row ? e.out_index : e.in_index;
  const std::string name = by_row ? "output" : fmt::format("input{}", e.b.input);
  std::string s;
  int64_t shown = 0, more = 0;
  for (size_t i = 0; i < index.size(); ++i) {
    if (!which[i]) continue;
    if (shown < 4) {
      s += fmt::format("{}{}{}", shown ? ", " : "", name, shape_str(index[i]));
      ++shown;
    } else {
      ++more;
    }
  }
  return more > 0 ? fmt::format("{} and {} more", s, more) : s;
}

// "the numerical Jacobian sums to 0 over each row of input 0 along dim 1 ...;
// the analytical one does not (...)": the sum of a row of input entries is
// the derivative along a shift of that row of the input, the same for every
// output and row in N (0: the function ignores such a shift; 1: it follows
// it), and not in A. Only the (output, row) pairs where N is nonzero count.
std::string row_totals(const Entries& e) {
  const Shape& in = e.in_shape;
  for (size_t d = in.size(); d-- > 0;) {
    if (in[d] < 2) continue;
    const int64_t fibres = e.a.cols / in[d];
    std::vector<int64_t> key(e.a.cols);
    for (int64_t c = 0; c < e.a.cols; ++c) key[c] = fibre_of(e.in_index[c], in, d);
    std::vector<double> sum_n, sum_a, out_of;  // out_of: the output value of each sum's row
    for (int64_t r = 0; r < e.a.rows; ++r) {
      std::vector<double> n(fibres, 0), a(fibres, 0);
      std::vector<char> live(fibres, 0);
      for (int64_t c = 0; c < e.a.cols; ++c) {
        n[key[c]] += e.n.at(r, c);
        a[key[c]] += e.a.at(r, c);
        live[key[c]] = live[key[c]] || !is_zero(e.n.at(r, c), e.o);
      }
      for (int64_t f = 0; f < fibres; ++f) {
        if (!live[f]) continue;
        sum_n.push_back(n[f]), sum_a.push_back(a[f]);
        out_of.push_back(e.b.output.size() == static_cast<size_t>(e.a.rows) ? e.b.output[r] : NAN);
      }
    }
    if (sum_n.size() < 2) continue;
    const double k = std::round(sum_n.front() * 1e6) / 1e6 + 0.0;  // + 0.0: never "-0"
    const auto is_k = [&](double v) { return close(v, k, e.o); };
    if (!std::all_of(sum_n.begin(), sum_n.end(), is_k) || std::all_of(sum_a.begin(), sum_a.end(), is_k)) continue;
    const double ka = sum_a.front();
    const bool a_constant = std::all_of(sum_a.begin(), sum_a.end(), [&](double v) { return close(v, ka, e.o); });
    const std::string shift = k == 0   ? "shifting the row by a constant leaves the output as it is"
                              : k == 1 ? "shifting the row by t moves the output by t"
                                       : fmt::format("shifting the row by t moves the output by {} t", number(k));
    // The analytical sums as one multiple of the output at their rows, when that fits all.
    const double c = sum_a.front() / out_of.front();
    bool of_output = std::isfinite(c) && !a_constant;
    for (size_t i = 0; i < sum_a.size() && of_output; ++i) of_output = close(sum_a[i], c * out_of[i], e.o);
    const std::string sums = a_constant ? fmt::format("to {}", number(std::round(ka * 1e6) / 1e6 + 0.0))
                             : of_output ? fmt::format("does not (it sums to {} x the output at each row: {})",
                                                       number(std::round(c * 1e6) / 1e6), list_values(sum_a))
                                         : fmt::format("does not (it sums to {})", list_values(sum_a));
    return fmt::format("over each row of input {} along dim {}, the numerical Jacobian sums to {} ({}) and the "
                       "analytical one {}",
                       e.b.input, d, number(k), shift, sums);
  }
  return "";
}

// "input 1's is right", "input 1's and input 2's are right", "input 2's is wrong too".
std::string other_inputs(size_t k, const std::vector<std::pair<size_t, int64_t>>& wrong_counts) {
  std::vector<std::string> right, wrong;
  for (const auto& kc : wrong_counts) {
    if (kc.first == k) continue;
    (kc.second == 0 ? right : wrong).push_back(fmt::format("input {}'s", kc.first));
  }
  const auto join = [](const std::vector<std::string>& v) {
    std::string s;
    for (size_t i = 0; i < v.size(); ++i) s += (i == 0 ? "" : i + 1 == v.size() ? " and " : ", ") + v[i];
    return s;
  };
  std::string s;
  if (!right.empty()) s += join(right) + (right.size() == 1 ? " is right" : " are right");
  if (!wrong.empty()) s += (s.empty() ? "" : ", ") + join(wrong) + (wrong.size() == 1 ? " is wrong too" : " are wrong too");
  return s;
}

}  // namespace

// ---- the diagnoses ------------------------------------------------------------------------

std::string diagnose_non_finite_output(const FailingBlock& b) {
  for (const Tensor& in : b.inputs) {
    if (!in.defined() || !in.is_floating_point()) continue;
    const std::vector<double> v = in.to_vector<double>();
    if (!std::all_of(v.begin(), v.end(), [](double x) { return std::isfinite(x); })) return "";
  }
  const auto bad = [](double y) { return !std::isfinite(y); };
  const auto first = std::find_if(b.output.begin(), b.output.end(), bad);
  if (first == b.output.end()) return "";
  return fmt::format("a non-finite output: the forward gives output{} = {} on finite inputs (the first of {} "
                     "non-finite outputs): no derivative means anything there; fix the forward first",
                     shape_str(unflatten(first - b.output.begin(), b.output_shape)), number(*first),
                     std::count_if(b.output.begin(), b.output.end(), bad));
}

namespace {

// Where the finite/non-finite mismatches are, beyond the first: all in one
// input element's column, all where the input is 0, nothing else wrong.
std::string non_finite_pattern(const Entries& e, int64_t first, bool analytical) {
  const int64_t c0 = first % e.a.cols;
  int64_t count = 0, at_zero = 0, other_wrong = 0;
  bool one_column = true;
  for (size_t i = 0; i < e.a.values.size(); ++i) {
    const bool mismatch = std::isfinite(e.a.values[i]) != std::isfinite(e.n.values[i]);
    const int64_t c = static_cast<int64_t>(i) % e.a.cols;
    count += mismatch;
    at_zero += mismatch && e.x[c] == 0;
    one_column = one_column && (!mismatch || c == c0);
    other_wrong += !mismatch && e.wrong[i];
  }
  std::string text = fmt::format(" (the first of {} such entries, output index first{})", count,
                                 count > 1 && one_column ? fmt::format(", all in the column of input{}{}", e.b.input,
                                                                       shape_str(e.in_index[c0]))
                                                         : "");
  text += fmt::format("; input{}{} = {} there", e.b.input, shape_str(e.in_index[c0]), number(e.x[c0]));
  if (at_zero == count) {
    text += analytical ? fmt::format(", and input {} is 0 at every such entry: a division by the input, or a log or "
                                     "a root of it, at 0?", e.b.input)
                       : fmt::format(", and input {} is 0 at every such entry: the forward is not finite within eps "
                                     "of it (a singularity at 0)", e.b.input);
  }
  if (other_wrong == 0) text += "; every other entry is right";
  return text;
}

}  // namespace

std::string diagnose_non_finite_entry(const FailingBlock& b) {
  const Entries e = make_entries(b);
  int64_t first = -1;
  for (size_t i = 0; i < e.a.values.size() && first < 0; ++i) {
    if (std::isfinite(e.a.values[i]) != std::isfinite(e.n.values[i])) first = static_cast<int64_t>(i);
  }
  if (first < 0) return "";
  const int64_t r = first / e.a.cols, c = first % e.a.cols;
  const bool analytical = !std::isfinite(e.a.at(r, c));
  return fmt::format("a non-finite entry: the {} Jacobian is {} at d output{} / d input{}{}, where the {} one is {}{}",
                     analytical ? "analytical" : "numerical", number(analytical ? e.a.at(r, c) : e.n.at(r, c)),
                     shape_str(e.out_index[r]), b.input, shape_str(e.in_index[c]),
                     analytical ? "numerical" : "analytical", number(analytical ? e.n.at(r, c) : e.a.at(r, c)),
                     non_finite_pattern(e, first, analytical));
}

std::string diagnose_exchanged(const std::vector<Jacobian>& analytical, const std::vector<Jacobian>& numerical,
                               const std::vector<size_t>& checked, const std::vector<Tensor>& inputs, size_t k,
                               const GradcheckOptions& o) {
  for (size_t j : checked) {
    if (j == k || inputs[j].shape() != inputs[k].shape()) continue;
    if (matches(analytical[k], numerical[j], o) && matches(analytical[j], numerical[k], o)) {
      const size_t lo = std::min(j, k), hi = std::max(j, k);
      return fmt::format("gradients exchanged: the analytical gradient of input {} is the numerical one of input {} "
                         "and the reverse, on every entry (inputs {} and {}, both of shape {}): the rule returns the "
                         "two gradients in the wrong order, or computes each with the other's formula?",
                         k, j, lo, hi, shape_str(inputs[k].shape()));
    }
  }
  return "";
}

namespace {

// A size a constant factor may be made of, and what it is the size of.
struct NamedSize {
  int64_t n;
  std::string name;  // completes "4 is ...": "the size of the output's dim 0"
  int of = 0;        // 0: a size of the input, 1: of the output, 2: of both
};

// The dims of the input and of the output (a dim the input is broadcast
// over says so), the numbers of their elements, and the number of input
// elements per output element; one name per value, in that order.
std::vector<NamedSize> named_sizes(const FailingBlock& b) {
  const Shape& in = b.inputs[b.input].shape();
  const Shape& out = b.output_shape;
  std::vector<NamedSize> all;
  for (size_t d = 0; d < in.size(); ++d) {
    all.push_back({in[d], fmt::format("the size of input {}'s dim {}", b.input, d), 0});
  }
  for (size_t d = 0; d < out.size(); ++d) {
    // Right-aligned like broadcasting: the input lacks this dim or has size 1 there.
    const int64_t at = static_cast<int64_t>(d) - static_cast<int64_t>(out.size()) + static_cast<int64_t>(in.size());
    const bool broadcast = at < 0 || in[at] == 1;
    all.push_back({out[d], fmt::format("the size of the output's dim {}{}", d,
                                       broadcast ? fmt::format(" (input {} is broadcast over it)", b.input) : ""),
                   1});
  }
  const int64_t n_in = numel_of(in), n_out = numel_of(out);
  all.push_back({n_in, fmt::format("input {}'s number of elements", b.input), 0});
  all.push_back({n_out, "the output's number of elements", 1});
  if (out.size() > 1 && out.back() > 0) {
    all.push_back({n_out / out.back(), "the output's number of rows (its elements over its last dim)", 1});
  }
  if (in.size() > 1 && in.back() > 0) {
    all.push_back(
        {n_in / in.back(), fmt::format("input {}'s number of rows (its elements over its last dim)", b.input), 0});
  }
  if (n_out > 0 && n_in % n_out == 0) {
    all.push_back({n_in / n_out, fmt::format("the number of input {}'s elements per output element", b.input), 2});
  }
  std::vector<NamedSize> sizes;
  for (NamedSize& s : all) {
    const bool seen = std::any_of(sizes.begin(), sizes.end(), [&s](const NamedSize& t) { return t.n == s.n; });
    if (s.n > 1 && !seen) sizes.push_back(std::move(s));
  }
  return sizes;
}

// p/q with q <= 64 and |value - p/q| <= 1e-6 |value|: the simplest fraction it is.
std::optional<std::pair<int64_t, int64_t>> simple_fraction(double value) {
  for (int64_t q = 1; q <= 64; ++q) {
    const int64_t p = std::llround(value * static_cast<double>(q));
    if (p != 0 && std::abs(value - static_cast<double>(p) / static_cast<double>(q)) <= 1e-6 * std::abs(value)) {
      return std::pair{p, q};
    }
  }
  return std::nullopt;
}

bool equals(double value, double expected) { return std::abs(value - expected) <= 1e-6 * std::abs(expected); }

}  // namespace

std::string explain_constant_factor(double factor, const FailingBlock& b) {
  const double v = std::abs(factor);
  const std::string sign = factor < 0 ? "-" : "";
  const std::vector<NamedSize> sizes = named_sizes(b);
  // The simplest forms made of one size (s, 1/s, s^2, 1/s^2, sqrt(s), 1/sqrt(s)), then of two (p/q).
  std::vector<std::string> forms;
  std::vector<const NamedSize*> used;
  const auto use = [&used](const NamedSize& s) {
    if (std::find(used.begin(), used.end(), &s) == used.end()) used.push_back(&s);
  };
  for (int level = 0; level < 3 && forms.empty(); ++level) {
    for (const NamedSize& s : sizes) {
      const double n = static_cast<double>(s.n);
      const double up = level == 0 ? n : level == 1 ? n * n : std::sqrt(n);
      const std::string text = level == 0 ? std::to_string(s.n) : level == 1 ? fmt::format("{}^2", s.n)
                                                                             : fmt::format("sqrt({})", s.n);
      if (equals(v, up)) forms.push_back(sign + text), use(s);
      if (equals(v, 1 / up)) forms.push_back(sign + "1/" + text), use(s);
    }
  }
  // Two sizes of one tensor (a count of it where another count of it
  // belongs: its number of elements for a dim's size, one dim's size for
  // another's); a ratio of sizes of different tensors says little.
  for (const NamedSize& p : sizes) {
    for (const NamedSize& q : sizes) {
      if (forms.size() >= 3 || &p == &q || p.of != q.of || !equals(v, static_cast<double>(p.n) / static_cast<double>(q.n)))
        continue;
      forms.push_back(fmt::format("{}{}/{}", sign, p.n, q.n));
      use(p);
      use(q);
    }
  }
  if (forms.empty()) {
    // No size makes it: the fraction alone, when it is a simple one.
    const auto f = simple_fraction(factor);
    return f && f->second > 1 ? fmt::format("; {:.6g} = {}/{}", factor, f->first, f->second) : "";
  }
  // "; 0.125 = 1/8 = 3/24; 8 is ..., 3 is ...", or "; 3 is ..." when the factor is a size itself.
  std::string text;
  for (const std::string& form : forms) {
    if (form != fmt::format("{:.6g}", factor)) text += " = " + form;
  }
  text = text.empty() ? "; " : fmt::format("; {:.6g}{}; ", factor, text);
  for (size_t i = 0; i < used.size(); ++i) text += fmt::format("{}{} is {}", i ? ", " : "", used[i]->n, used[i]->name);
  return text;
}

// "d output[0] / d input0[0, 2], ... [1, 0]" for up to four entries; with
// "(one in each row of input0 along its last dim)" when their columns are.
std::string entries_text(const Entries& e, const std::vector<std::pair<int64_t, int64_t>>& at) {
  std::string s;
  for (size_t k = 0; k < std::min<size_t>(4, at.size()); ++k) {
    const Shape& row = e.out_index[at[k].first];
    s += fmt::format("{}d output{} / d input{}{}", k ? ", " : "", row.empty() ? "" : index_text(row), e.b.input,
                     index_text(e.in_index[at[k].second]));
  }
  if (at.size() > 4) s += ", ...";
  if (e.in_shape.size() < 2 || e.in_shape.back() < 2) return s;
  std::map<int64_t, int64_t> per_row;  // input row (fibre along the last dim) -> entries there
  for (const auto& [r, c] : at) ++per_row[fibre_of(e.in_index[c], e.in_shape, e.in_shape.size() - 1)];
  const int64_t rows = static_cast<int64_t>(e.a.cols) / e.in_shape.back();
  const bool one_each = static_cast<int64_t>(per_row.size()) == rows &&
                        std::all_of(per_row.begin(), per_row.end(), [](const auto& p) { return p.second == 1; });
  return one_each ? s + fmt::format(" (one in each row of input{} along its last dim)", e.b.input) : s;
}

// Every entry wrong by one of two or three numbers: "the analytical one is the
// numerical one plus one of 2 numbers: +0.00625 at 9 entries, -0.01875 at 3
// (d output[0] / d input0[0, 2], ...)". A constant term in the rule that one
// entry per row (a target's, say) has in another amount makes it.
std::string few_differences(const Entries& e) {
  struct Cluster {
    double d;
    std::vector<std::pair<int64_t, int64_t>> at;
  };
  std::vector<Cluster> clusters;
  for (int64_t r = 0; r < e.a.rows; ++r) {
    for (int64_t c = 0; c < e.a.cols; ++c) {
      if (!e.active(r, c)) continue;
      const double d = e.a.at(r, c) - e.n.at(r, c);
      auto it = std::find_if(clusters.begin(), clusters.end(), [&](const Cluster& k) {
        return std::abs(k.d - d) <= e.o.atol + e.o.rtol * std::abs(k.d);
      });
      if (it == clusters.end()) {
        if (clusters.size() == 3) return "";
        clusters.push_back({d, {}});
        it = std::prev(clusters.end());
      }
      it->at.emplace_back(r, c);
    }
  }
  if (clusters.size() < 2) return "";
  std::sort(clusters.begin(), clusters.end(), [](const Cluster& p, const Cluster& q) { return p.at.size() > q.at.size(); });
  std::string text;
  for (size_t k = 0; k < clusters.size(); ++k) {
    const Cluster& c = clusters[k];
    const std::string value = std::abs(c.d) <= e.o.atol ? "0 (right)" : fmt::format("{:+.6g}", c.d);
    text += fmt::format("{} {} at {} entr{}", k ? "," : "", value, c.at.size(), c.at.size() == 1 ? "y" : "ies");
    if (k > 0) text += " (" + entries_text(e, c.at) + ")";
  }
  return fmt::format("wrong by a few added numbers: the analytical one is the numerical one plus one of {} numbers:{}",
                     clusters.size(), text);
}

// Input elements that several outputs read (a gather with a repeated index,
// a shared weight) whose analytical column keeps one reader's share exactly
// and is 0 at every other reader, while every element read once is right:
// the shares of one element do not add up. "" unless that fits every entry.
// AS_CLAUSE: said after a place ("; these wrong entries are ..."), naming no
// diagnosis of its own.
std::string one_reader_kept(const Entries& e, bool as_clause) {
  std::vector<char> shared(static_cast<size_t>(e.a.cols), 0);
  bool any = false, all_last = true, all_first = true;
  for (int64_t c = 0; c < e.a.cols; ++c) {
    std::vector<int64_t> readers;
    bool wrong = false;
    for (int64_t r = 0; r < e.a.rows; ++r) {
      if (!is_zero(e.n.at(r, c), e.o)) readers.push_back(r);
      else if (e.wrong_at(r, c)) return "";  // a gradient where the output reads nothing
      wrong = wrong || e.wrong_at(r, c);
    }
    if (readers.size() < 2) {
      if (wrong) return "";
      continue;
    }
    int64_t kept = -1, kept_count = 0;
    for (const int64_t r : readers) {
      if (!e.wrong_at(r, c)) kept = r, ++kept_count;
      else if (!is_zero(e.a.at(r, c), e.o)) return "";
    }
    if (kept_count != 1) return "";
    shared[static_cast<size_t>(c)] = 1, any = true;
    all_last = all_last && kept == readers.back();
    all_first = all_first && kept == readers.front();
  }
  if (!any) return "";
  const std::string which = all_last && !all_first ? " (the last)" : all_first && !all_last ? " (the first)" : "";
  if (as_clause) {
    return fmt::format("; the wrong entries are those of the elements of input {} that several outputs read ({}): "
                       "each gets the share of one of those outputs{} and 0 from the others, where the numerical "
                       "gradient adds every reader's share",
                       e.b.input, list_indices(e, false, shared), which);
  }
  return fmt::format("one reader's share kept: each element of input {} that several outputs read ({}) gets, in the "
                     "analytical gradient, the share of one of those outputs{} and 0 from the others, where the "
                     "numerical one adds every reader's share; every element read once is right",
                     e.b.input, list_indices(e, false, shared), which);
}

std::string diagnose_structure(const FailingBlock& b) {
  const Entries e = make_entries(b);
  if (e.wrong_count == 0) return "";
  for (auto relation : {rows_are_the_sum, jacobian_transposed, dims_swapped, nonzeros_disjoint, values_reordered}) {
    if (std::string s = relation(e); !s.empty()) return s;
  }
  const std::vector<Structure> ss = structures(e);
  // An elementwise derivative whose analytical and numerical forms are both
  // found says more than a factor between them.
  if (const std::string both = elementwise_forms(e, ss); !both.empty()) return both;
  if (std::optional<Fit> fit = simplest_form(e)) return fit->text;
  if (std::string s = coupling_missing(e, ss); !s.empty()) return s;
  if (std::string s = coupling_scaled(e, ss); !s.empty()) return s;
  // Which part is right, or where the wrong entries are: the smaller place.
  const std::optional<Place> part = one_part_wrong(e, ss), place = wrong_only_in_one_place(e);
  if (part && (!place || part->active <= place->active)) return part->text;
  if (place) {
    const bool elementwise = !elementwise_wrong(e, ss).empty();
    // A broadcast input's copies are its readers: that place already says which copies are wrong.
    return elementwise ? place->text + " (the function is elementwise: both Jacobians are diagonal)"
                       : place->text + (place->copies ? "" : one_reader_kept(e, true));
  }
  if (std::string s = one_reader_kept(e, false); !s.empty()) return s;
  if (std::optional<Fit> fit = added_feature_per_group_form(e)) return fit->text;
  const std::string elementwise = elementwise_wrong(e, ss);
  if (elementwise.empty() && e.wrong_count < static_cast<int64_t>(e.a.values.size())) {
    if (std::string missing = entries_missing(e); !missing.empty()) return missing;
    if (std::string form = wrong_entries_form(e); !form.empty()) return form;
  }
  if (!elementwise.empty() && elementwise.find(" x the numerical one") != std::string::npos) return elementwise;
  if (std::string few = few_differences(e); !few.empty()) return few;
  return elementwise;
}

// The rows and columns where the numerical Jacobian is 0 throughout: an
// output that depends on no element of the input, an input element no output
// depends on.
struct DeadLines {
  std::vector<char> row, col;
};
DeadLines dead_lines(const Entries& e) {
  DeadLines dead{std::vector<char>(e.a.rows, 1), std::vector<char>(e.a.cols, 1)};
  for (int64_t r = 0; r < e.a.rows; ++r) {
    for (int64_t c = 0; c < e.a.cols; ++c) {
      if (!is_zero(e.n.at(r, c), e.o)) dead.row[r] = 0, dead.col[c] = 0;
    }
  }
  return dead;
}

// ", and 3 of its zeros: 2 in the columns of ..., 1 in the rows of ...".
std::string wrong_zeros_text(const Entries& e, const FailingBlock& b, const DeadLines& dead, int64_t wrong_zero) {
  int64_t in_dead_col = 0, in_dead_row = 0;
  std::vector<char> cols(e.a.cols, 0), rows(e.a.rows, 0);
  for (int64_t r = 0; r < e.a.rows; ++r) {
    for (int64_t c = 0; c < e.a.cols; ++c) {
      if (!e.wrong_at(r, c) || !is_zero(e.n.at(r, c), e.o)) continue;
      if (dead.col[c]) {
        ++in_dead_col, cols[c] = 1;
      } else if (dead.row[r]) {
        ++in_dead_row, rows[r] = 1;
      }
    }
  }
  std::string text = fmt::format(", and {} of its zeros", wrong_zero);
  std::vector<std::string> parts;
  if (in_dead_col > 0) {
    parts.push_back(fmt::format("{} in the columns of the elements of input {} no output depends on ({})",
                                in_dead_col, b.input, list_indices(e, false, cols)));
  }
  if (in_dead_row > 0) {
    parts.push_back(fmt::format("{} in the rows of the outputs that depend on no element of input {} ({})",
                                in_dead_row, b.input, list_indices(e, true, rows)));
  }
  for (size_t i = 0; i < parts.size(); ++i) text += (i == 0 ? ": " : ", ") + parts[i];
  return text;
}

// Which entries are wrong against the numerical Jacobian's nonzero ones and its zeros.
std::string wrong_counts_text(const Entries& e, const FailingBlock& b, const DeadLines& dead) {
  int64_t nonzero = 0, wrong_nonzero = 0, wrong_zero = 0, analytical_zero = 0;
  for (int64_t r = 0; r < e.a.rows; ++r) {
    for (int64_t c = 0; c < e.a.cols; ++c) {
      const bool nz = !is_zero(e.n.at(r, c), e.o);
      nonzero += nz;
      if (!e.wrong_at(r, c)) continue;
      wrong_nonzero += nz;
      wrong_zero += !nz;
      analytical_zero += nz && is_zero(e.a.at(r, c), e.o);
    }
  }
  std::string text = wrong_nonzero == nonzero
                         ? fmt::format(": all {} nonzero ones of the numerical Jacobian", nonzero)
                         : fmt::format(": {} of the numerical Jacobian's {} nonzero ones", wrong_nonzero, nonzero);
  if (analytical_zero > 0) {
    text += analytical_zero == wrong_nonzero ? " (all 0 in the analytical one)"
                                             : fmt::format(" ({} of them 0 in the analytical one)", analytical_zero);
  }
  if (wrong_zero > 0) text += wrong_zeros_text(e, b, dead, wrong_zero);
  return text;
}

// Where: the outputs (rows) and input elements (columns) with wrong entries,
// when they form a slice; and those whose nonzero entries are all right.
std::string wrong_places_text(const Entries& e, const FailingBlock& b, const DeadLines& dead) {
  std::vector<char> wrong_rows(e.a.rows, 0), wrong_cols(e.a.cols, 0), right_rows(e.a.rows, 0);
  int64_t diagonal = 0;
  for (int64_t r = 0; r < e.a.rows; ++r) {
    for (int64_t c = 0; c < e.a.cols; ++c) {
      if (!e.wrong_at(r, c)) continue;
      wrong_rows[r] = 1, wrong_cols[c] = 1;
      diagonal += e.same_shape() && r == c;
    }
  }
  for (int64_t r = 0; r < e.a.rows; ++r) right_rows[r] = !wrong_rows[r] && !dead.row[r];
  std::string text;
  const std::string rows_at = index_pattern(e, true, wrong_rows), cols_at = index_pattern(e, false, wrong_cols);
  if (!rows_at.empty()) {
    text += "; all in the rows of " + rows_at;
    if (const std::string right = index_pattern(e, true, right_rows); !right.empty()) {
      text += fmt::format(" (those of {} are right)", right);
    }
  }
  if (!cols_at.empty()) text += (rows_at.empty() ? "; all in the columns of " : ", and of ") + cols_at;
  if (e.same_shape()) {
    text += fmt::format("; {} of the {} diagonal entries d output[i] / d input{}[i] among them", diagonal, e.a.rows,
                        b.input);
  }
  return text;
}

std::string describe_wrong_entries(const FailingBlock& b,
                                   const std::vector<std::pair<size_t, int64_t>>& wrong_counts) {
  const Entries e = make_entries(b);
  const DeadLines dead = dead_lines(e);
  // Which input, how much of it, and the other inputs.
  std::string text = fmt::format("input {}'s gradient is wrong at {} of its {} entries", b.input, e.wrong_count,
                                 e.a.values.size());
  text += wrong_counts_text(e, b, dead);
  if (const std::string others = other_inputs(b.input, wrong_counts); !others.empty()) text += "; " + others;
  if (const std::string totals = row_totals(e); !totals.empty()) text += "; " + totals;
  return text + wrong_places_text(e, b, dead);
}

}  // namespace ropegrad::gradcheck_detail
