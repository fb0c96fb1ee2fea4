#include "autograd/gradcheck.h"

#include <algorithm>
#include <cmath>

#include "autograd/engine.h"
#include "autograd/gradcheck_diagnose.h"
#include "tensor/kernels.h"

namespace ropegrad {

using gradcheck_detail::close;
using gradcheck_detail::FailingBlock;
using gradcheck_detail::Jacobian;
using gradcheck_detail::matches;
using gradcheck_detail::unflatten;

namespace {

// Does A match `scale` * N (entry by entry, with the usual tolerance)?
bool matches_scaled(const Jacobian& a, const Jacobian& n, double scale, const GradcheckOptions& o) {
  for (size_t i = 0; i < a.values.size(); ++i) {
    if (!close(a.values[i], scale * n.values[i], o)) return false;
  }
  return true;
}

// Does A match N with the input's last two dims swapped (a transposed gradient)?
bool matches_transposed(const Jacobian& a, const Jacobian& n, const Shape& shape, const GradcheckOptions& o) {
  if (shape.size() < 2 || shape[shape.size() - 1] != shape[shape.size() - 2]) return false;
  const int64_t side = shape.back();
  for (int64_t r = 0; r < a.rows; ++r) {
    for (int64_t c = 0; c < a.cols; ++c) {
      const int64_t block = c / (side * side), i = (c / side) % side, j = c % side;
      const int64_t swapped = block * side * side + j * side + i;
      if (!close(a.at(r, c), n.at(r, swapped), o)) return false;
    }
  }
  return true;
}

void write_value(const Tensor& t, int64_t flat, double value) {
  const int64_t off = detail::flat_to_offset(t, flat);
  reinterpret_cast<double*>(t.raw_data())[off] = value;
}

std::vector<double> read_values(const Tensor& t) {
  std::vector<double> v(static_cast<size_t>(t.numel()));
  for (int64_t i = 0; i < t.numel(); ++i) v[i] = detail::element_as_double(t, detail::flat_to_offset(t, i));
  return v;
}

void write_values(const Tensor& t, const std::vector<double>& v) {
  for (int64_t i = 0; i < t.numel(); ++i) write_value(t, i, v[i]);
}

std::vector<double> evaluate(const GradcheckFn& f, const std::vector<Tensor>& inputs) {
  NoGradGuard no_grad;
  return f(inputs).to_vector<double>();
}

// Column i of input k's block: the central difference along e_i, with step eps.
Jacobian numerical_jacobian(const GradcheckFn& f, const std::vector<Tensor>& inputs, size_t k, int64_t n_out,
                            double eps) {
  const Tensor& in = inputs[k];
  Jacobian n{n_out, in.numel(), std::vector<double>(n_out * in.numel(), 0.0)};
  for (int64_t i = 0; i < in.numel(); ++i) {
    const double original = detail::element_as_double(in, detail::flat_to_offset(in, i));
    std::vector<double> plus, minus;
    try {
      write_value(in, i, original + eps);
      plus = evaluate(f, inputs);
      write_value(in, i, original - eps);
      minus = evaluate(f, inputs);
    } catch (...) {
      write_value(in, i, original);
      throw;
    }
    write_value(in, i, original);
    for (int64_t j = 0; j < n_out; ++j) n.at(j, i) = (plus[j] - minus[j]) / (2 * eps);
  }
  return n;
}

// Row j of each checked input's Jacobian (preallocated, n_out x numel) from
// the backward of the one-hot gradient e_j. Throws what backward throws.
void fill_analytical(const Tensor& output, const std::vector<Tensor>& inputs, const std::vector<size_t>& checked,
                     std::vector<Jacobian>& a) {
  for (int64_t j = 0; j < output.numel(); ++j) {
    for (size_t k : checked) inputs[k].set_grad(Tensor());
    Tensor one_hot = zeros(output.shape(), DType::Float64);
    reinterpret_cast<double*>(one_hot.raw_data())[j] = 1.0;
    backward(output, one_hot, /*retain_graph=*/true);
    for (size_t k : checked) {
      const Tensor g = inputs[k].grad();
      if (!g.defined()) continue;
      a[k].reached = true;
      const std::vector<double> row = g.to_vector<double>();
      std::copy(row.begin(), row.end(), a[k].values.begin() + j * inputs[k].numel());
    }
  }
}

// Row j of each checked input's block: the backward of the one-hot gradient
// e_j. Throws what backward throws; leaves the inputs' .grad undefined.
std::vector<Jacobian> analytical_jacobians(const GradcheckFn& f, const std::vector<Tensor>& inputs,
                                           const std::vector<size_t>& checked) {
  const Tensor output = f(inputs);
  const int64_t n_out = output.numel();
  std::vector<Jacobian> a(inputs.size());
  for (size_t k : checked) a[k] = {n_out, inputs[k].numel(), std::vector<double>(n_out * inputs[k].numel(), 0.0)};
  if (!output.requires_grad()) return a;
  fill_analytical(output, inputs, checked, a);
  for (size_t k : checked) inputs[k].set_grad(Tensor());
  return a;
}

// The Jacobians and what the diagnoses evaluate f again with.
struct Checked {
  const GradcheckFn& f;
  const std::vector<Tensor>& inputs;
  const std::vector<size_t>& checked;
  const std::vector<Jacobian>& analytical;
  const std::vector<Jacobian>& numerical;
  Shape output_shape;
  std::vector<double> output;  // f at the inputs, flat
  const GradcheckOptions& o;
  FailingBlock block(size_t k) const { return {analytical[k], numerical[k], k, inputs, output_shape, output, o}; }
};

// The numerical Jacobian is only a reference when the forward is smooth at
// the scale of eps: a forward that rounds like float32 (on float64 input)
// puts an error of u32 / eps ~ 6e-2 into every difference. Then a larger
// step, 1e-3, must agree with the analytical gradient where eps does not.
std::string diagnose_not_smooth(const Checked& c, size_t k) {
  const GradcheckOptions& o = c.o;
  const double eps_large = std::max(1e-3, o.eps);
  if (eps_large <= o.eps) return "";
  const Jacobian& a = c.analytical[k];
  const Jacobian& n = c.numerical[k];
  Jacobian wide;
  try {
    wide = numerical_jacobian(c.f, c.inputs, k, n.rows, eps_large);
  } catch (const Error&) {
    return "";  // f is not defined that far from the input: no test
  }
  GradcheckOptions loose = o;
  loose.rtol = std::max(o.rtol, 1e-2);
  loose.atol = std::max(o.atol, 1e-3);
  if (matches(n, wide, loose) || !matches(a, wide, loose)) return "";
  double worst = 0;
  for (size_t i = 0; i < n.values.size(); ++i) worst = std::max(worst, std::abs(n.values[i] - wide.values[i]));
  return fmt::format(
      "the forward is not smooth at the scale of eps: finite differences with eps={} and eps={} differ by up to "
      "{:.3g}, and the analytical gradient matches the wider ones; the forward rounds far more than float64 "
      "does (computed in float32 on float64 input?): check the forward's values before its gradient",
      o.eps, eps_large, worst);
}

// A = s N for a sign, a factor two, a constant; or A = N with the input's last two dims swapped.
std::string diagnose_scaled(const Checked& c, size_t k) {
  const Jacobian& a = c.analytical[k];
  const Jacobian& n = c.numerical[k];
  const GradcheckOptions& o = c.o;
  if (matches_scaled(a, n, -1.0, o)) return "wrong sign: the analytical gradient is -1 x the numerical one";
  // The factor is all that was measured: which term of the rule is doubled
  // (or halved), if any, the Jacobians cannot tell (an extra 1/tau with tau =
  // 0.5 gives the same 2 as a term counted twice).
  if (matches_scaled(a, n, 2.0, o)) return "a factor of two: the analytical gradient is 2 x the numerical one";
  if (matches_scaled(a, n, 0.5, o)) return "a factor of two: the analytical gradient is 1/2 x the numerical one";
  if (matches_transposed(a, n, c.inputs[k].shape(), o)) {
    return "a transposed gradient: it matches the numerical one with the input's last two dims "
           "swapped (B^T where B was meant, or the operands of a matmul swapped)";
  }
  double norm_n = 0, dot = 0;
  for (size_t i = 0; i < a.values.size(); ++i) {
    norm_n += n.values[i] * n.values[i];
    dot += a.values[i] * n.values[i];
  }
  if (norm_n == 0) return "";
  const double scale = dot / norm_n;
  if (std::abs(scale - 1) <= 1e-3 || !matches_scaled(a, n, scale, o)) return "";
  return fmt::format("off by a constant factor: the analytical gradient is {:.6g} x the numerical one{}", scale,
                     gradcheck_detail::explain_constant_factor(scale, c.block(k)));
}

// Input j with its last two dims swapped (square), as values.
std::vector<double> swapped_last_two(const Tensor& t) {
  const std::vector<double> original = read_values(t);
  const int64_t side = t.size(-1);
  std::vector<double> swapped(original.size());
  for (size_t c = 0; c < original.size(); ++c) {
    const int64_t i = static_cast<int64_t>(c);
    const int64_t block = i / (side * side), r = (i / side) % side, q = i % side;
    swapped[c] = original[block * side * side + q * side + r];
  }
  return swapped;
}

// The right gradient of the function with an operand transposed: the rule
// used B where it needed B^T (g B for g B^T), or the reverse.
std::string diagnose_operand_transposed(const Checked& c, size_t k) {
  for (size_t j = 0; j < c.inputs.size(); ++j) {
    const Tensor& other = c.inputs[j];
    if (!other.defined() || other.dtype() != DType::Float64 || other.dim() < 2 || other.size(-1) != other.size(-2))
      continue;
    const std::vector<double> original = read_values(other);
    Jacobian with_swap;
    try {
      write_values(other, swapped_last_two(other));
      with_swap = numerical_jacobian(c.f, c.inputs, k, c.numerical[k].rows, c.o.eps);
    } catch (const Error&) {
      with_swap = {};
    }
    write_values(other, original);
    if (matches(c.analytical[k], with_swap, c.o)) {
      return fmt::format(
          "an operand transposed: the analytical gradient for input {} is the right one of the function with input "
          "{}'s last two dims swapped (the rule uses B where it needs B^T, e.g. g B for g B^T, or the reverse)",
          k, j);
    }
  }
  return "";
}

// With input k set to y: is A there N (a derivative written with the output,
// evaluated at the input), or is A the N taken there (the reverse)?
std::string derivative_at_output_test(const Checked& c, size_t k) {
  const std::vector<Jacobian> at_output = analytical_jacobians(c.f, c.inputs, c.checked);
  if (matches(at_output[k], c.numerical[k], c.o)) {
    return "the derivative taken at the input where it needs the output: the analytical gradient is the right "
           "one when the backward is run at x = y (the output's values), so its rule evaluates at the input x a "
           "derivative written with the output y (exp's g x for g exp(x), tanh's 1 - x^2 for 1 - y^2)";
  }
  if (matches(c.analytical[k], numerical_jacobian(c.f, c.inputs, k, c.numerical[k].rows, c.o.eps), c.o)) {
    return "the derivative taken at the output where it needs the input: the analytical gradient matches the "
           "numerical one taken at x = y (the output's values), so its rule evaluates at the output y a "
           "derivative written with the input x (log's g / y for g / x)";
  }
  return "";
}

// A derivative written with the output, evaluated at the input (exp's g x
// for g exp(x), tanh's 1 - x^2 for 1 - y^2), or the reverse: run the
// backward with the input set to the output's values, or differentiate at
// them. Only when the output has the input's shape.
std::string diagnose_derivative_at_output(const Checked& c, size_t k) {
  const Tensor& in = c.inputs[k];
  if (c.output_shape != in.shape()) return "";
  const std::vector<double>& y = c.output;
  if (!std::all_of(y.begin(), y.end(), [](double v) { return std::isfinite(v); })) return "";
  const std::vector<double> x = read_values(in);
  std::vector<Tensor> saved_grads;
  for (const Tensor& t : c.inputs) saved_grads.push_back(t.grad());
  std::string found;
  try {
    write_values(in, y);
    found = derivative_at_output_test(c, k);
  } catch (const Error&) {
  }
  write_values(in, x);
  for (size_t i = 0; i < c.inputs.size(); ++i) c.inputs[i].set_grad(saved_grads[i]);
  return found;
}

// Input k's gradient is another input's, and the reverse.
std::string diagnose_exchanged_inputs(const Checked& c, size_t k) {
  return gradcheck_detail::diagnose_exchanged(c.analytical, c.numerical, c.checked, c.inputs, k, c.o);
}

// What the pattern of A against N says for input k, when every compared
// entry fits it; "" when no known mistake fits them all (the caller lists the
// worst entries and what was observed). The first tests need f again: the
// numerical Jacobian with a larger step (is the forward itself smooth?), with
// another operand transposed, and the analytical one at the output's values;
// the structural ones (gradcheck_diagnose.cpp) read the Jacobians alone.
std::string diagnose(const Checked& c, size_t k) {
  const FailingBlock block = c.block(k);
  if (std::string s = gradcheck_detail::diagnose_non_finite_output(block); !s.empty()) return s;
  if (std::string s = gradcheck_detail::diagnose_non_finite_entry(block); !s.empty()) return s;
  const std::vector<double>& a = c.analytical[k].values;
  if (std::all_of(a.begin(), a.end(), [](double v) { return v == 0; }) &&
      std::any_of(c.numerical[k].values.begin(), c.numerical[k].values.end(), [](double v) { return v != 0; })) {
    return c.analytical[k].reached
               ? "the analytical gradient is all zeros: the backward reaches this input and gives it 0 for every "
                 "output, where the numerical one is not 0"
               : "the analytical gradient is all zeros: no backward gives this input a gradient (its .grad stays "
                 "undefined: no node records it, or a rule returns no tensor for it)";
  }
  using Test = std::string (*)(const Checked&, size_t);
  for (Test test : {Test{diagnose_exchanged_inputs}, Test{diagnose_not_smooth}, Test{diagnose_scaled},
                    Test{diagnose_operand_transposed}, Test{diagnose_derivative_at_output}}) {
    if (std::string s = test(c, k); !s.empty()) return s;
  }
  return gradcheck_detail::diagnose_structure(block);
}

// The analytical Jacobians (row j = backward of the one-hot gradient e_j),
// with the inputs' .grad kept as the caller left it; the error backward
// raised, or "".
std::string fill_all_analytical(const Tensor& output, const std::vector<Tensor>& inputs,
                                const std::vector<size_t>& checked, std::vector<Jacobian>& analytical) {
  std::vector<Tensor> saved_grads;
  for (const Tensor& in : inputs) saved_grads.push_back(in.grad());
  std::string backward_error;
  if (output.requires_grad()) {
    try {
      fill_analytical(output, inputs, checked, analytical);
    } catch (const Error& e) {
      backward_error = e.what();
    }
  }
  for (size_t k = 0; k < inputs.size(); ++k) inputs[k].set_grad(saved_grads[k]);
  return backward_error;
}

// The entries of input k's block that fail the test, worst first.
std::vector<GradcheckEntry> failing_entries(const Checked& c, size_t k, double& max_abs_error) {
  const Jacobian& a = c.analytical[k];
  const Jacobian& n = c.numerical[k];
  std::vector<GradcheckEntry> bad;
  for (int64_t r = 0; r < a.rows; ++r) {
    for (int64_t col = 0; col < a.cols; ++col) {
      const double diff = std::abs(a.at(r, col) - n.at(r, col));
      max_abs_error = std::max(max_abs_error, diff);
      if (!close(a.at(r, col), n.at(r, col), c.o) || std::isnan(a.at(r, col)) != std::isnan(n.at(r, col))) {
        bad.push_back({k, unflatten(r, c.output_shape), unflatten(col, c.inputs[k].shape()), n.at(r, col),
                       a.at(r, col)});
      }
    }
  }
  std::stable_sort(bad.begin(), bad.end(), [](const GradcheckEntry& x, const GradcheckEntry& y) {
    return std::abs(x.analytical - x.numerical) > std::abs(y.analytical - y.numerical);
  });
  return bad;
}

// Input k's part of the report: the count, the worst entries, then the
// diagnosis, or what was observed when no diagnosis fits.
std::string input_report(const Checked& c, size_t k, const std::vector<GradcheckEntry>& bad,
                         const std::string& diagnosis, const std::string& observed) {
  const GradcheckOptions& o = c.o;
  std::string report = fmt::format(
      "gradcheck failed for input {} (shape {}): {} of {} Jacobian entries differ (eps={}, "
      "atol={}, rtol={})\n  worst entries:\n",
      k, shape_str(c.inputs[k].shape()), bad.size(), c.analytical[k].values.size(), o.eps, o.atol, o.rtol);
  for (size_t e = 0; e < bad.size() && static_cast<int>(e) < o.max_reported; ++e) {
    report += fmt::format("    d output{} / d input{}{}: numerical {:.8g}, analytical {:.8g}\n",
                          shape_str(bad[e].output_index), k, shape_str(bad[e].input_index), bad[e].numerical,
                          bad[e].analytical);
  }
  if (!diagnosis.empty()) {
    report += "  diagnosis: " + diagnosis + "\n";
  } else if (!observed.empty()) {
    report += "  observed: " + observed + "\n";
  }
  return report;
}

}  // namespace

namespace {

// The inputs to check: those that require grad, each a float64 leaf.
std::vector<size_t> checked_inputs(const std::vector<Tensor>& inputs) {
  std::vector<size_t> checked;
  for (size_t k = 0; k < inputs.size(); ++k) {
    const Tensor& in = inputs[k];
    RG_CHECK(in.defined(), "gradcheck", "input {} is an undefined tensor", k);
    if (!in.requires_grad()) continue;
    RG_CHECK(in.dtype() == DType::Float64, "gradcheck",
             "input {} (shape {}) has dtype {}; gradcheck needs float64 (in float32 a finite "
             "difference with eps=1e-6 keeps only a digit or two)",
             k, shape_str(in.shape()), dtype_name(in.dtype()));
    RG_CHECK(in.is_leaf(), "gradcheck", "input {} is not a leaf tensor; pass leaves (detach() and requires_grad_())", k);
    checked.push_back(k);
  }
  RG_CHECK(!checked.empty(), "gradcheck", "no input requires grad: nothing to check");
  return checked;
}

}  // namespace

GradcheckResult gradcheck(const GradcheckFn& f, const std::vector<Tensor>& inputs, const GradcheckOptions& o) {
  const std::vector<size_t> checked = checked_inputs(inputs);
  GradcheckResult result;
  const Tensor output = f(inputs);
  RG_CHECK(output.dtype() == DType::Float64, "gradcheck", "the function returned dtype {}; it must return float64",
           dtype_name(output.dtype()));
  const int64_t n_out = output.numel();

  // Analytical Jacobian: row j = backward of the one-hot gradient e_j.
  std::vector<Jacobian> analytical(inputs.size()), numerical(inputs.size());
  for (size_t k : checked) {
    analytical[k] = {n_out, inputs[k].numel(), std::vector<double>(n_out * inputs[k].numel(), 0.0)};
    numerical[k] = analytical[k];
  }
  const std::string backward_error = fill_all_analytical(output, inputs, checked, analytical);
  if (!backward_error.empty()) {
    result.diagnosis = "backward raised an error";
    result.report = fmt::format("gradcheck failed: backward raised an error:\n  {}", backward_error);
    return result;
  }

  // Numerical Jacobian: column i = central difference along e_i.
  for (size_t k : checked) numerical[k] = numerical_jacobian(f, inputs, k, n_out, o.eps);

  // Compare, input by input.
  const Checked c{f, inputs, checked, analytical, numerical, output.shape(), output.detach().to_vector<double>(), o};
  // Every input's failing entries first: what is observed about one input
  // says whether the others are right.
  std::vector<std::vector<GradcheckEntry>> bad_of(inputs.size());
  std::vector<std::pair<size_t, int64_t>> wrong_counts;
  for (size_t k : checked) {
    bad_of[k] = failing_entries(c, k, result.max_abs_error);
    wrong_counts.push_back({k, static_cast<int64_t>(bad_of[k].size())});
  }
  result.passed = true;
  std::string report;
  for (size_t k : checked) {
    const std::vector<GradcheckEntry>& bad = bad_of[k];
    if (bad.empty()) continue;
    result.passed = false;
    std::string diagnosis;
    try {
      diagnosis = diagnose(c, k);
    } catch (const Error&) {
      // A further evaluation failed (e.g. outside f's domain): no diagnosis.
    }
    const std::string observed = gradcheck_detail::describe_wrong_entries(c.block(k), wrong_counts);
    if (result.diagnosis.empty()) result.diagnosis = diagnosis;
    if (result.observed.empty()) result.observed = observed;
    report += input_report(c, k, bad, diagnosis, observed);
    result.worst.insert(result.worst.end(), bad.begin(),
                        bad.begin() + std::min<size_t>(bad.size(), static_cast<size_t>(o.max_reported)));
  }
  result.report = result.passed ? fmt::format("gradcheck passed (max |analytical - numerical| = {:.3g})",
                                              result.max_abs_error)
                                : report;
  return result;
}

}  // namespace ropegrad
