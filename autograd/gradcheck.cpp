#include "autograd/gradcheck.h"

#include <algorithm>
#include <cmath>

#include "autograd/engine.h"
#include "tensor/kernels.h"

namespace ropegrad {

namespace {

// Row-major Jacobian block for one input: rows = output elements, cols = input elements.
struct Jacobian {
  int64_t rows = 0, cols = 0;
  std::vector<double> values;
  double& at(int64_t r, int64_t c) { return values[r * cols + c]; }
  double at(int64_t r, int64_t c) const { return values[r * cols + c]; }
};

Shape unflatten(int64_t flat, const Shape& shape) {
  Shape index(shape.size());
  for (int64_t d = static_cast<int64_t>(shape.size()) - 1; d >= 0; --d) {
    index[d] = flat % shape[d];
    flat /= shape[d];
  }
  return index;
}

bool close(double analytical, double numerical, const GradcheckOptions& o) {
  return std::abs(analytical - numerical) <= o.atol + o.rtol * std::abs(numerical);
}

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

// Does every entry of A match the one of B (with the usual tolerance, B as
// the reference)? False when any entry of B is not finite.
bool matches(const Jacobian& a, const Jacobian& b, const GradcheckOptions& o) {
  if (a.values.size() != b.values.size()) return false;
  for (size_t i = 0; i < a.values.size(); ++i) {
    if (!std::isfinite(b.values[i]) || !close(a.values[i], b.values[i], o)) return false;
  }
  return true;
}

// What the pattern of A against N says, when every compared entry fits it;
// "" when no known mistake fits them all (the caller lists the worst entries).
// f and inputs allow the tests that need more evaluations: the numerical
// Jacobian with a larger step (is the forward itself smooth?), with another
// operand transposed, and the analytical one at the output's values.
std::string diagnose(const Jacobian& a, const Jacobian& n, const GradcheckFn& f, const std::vector<Tensor>& inputs,
                     size_t k, const std::vector<size_t>& checked, const GradcheckOptions& o) {
  const Shape& shape = inputs[k].shape();
  double norm_a = 0, norm_n = 0, dot = 0;
  for (size_t i = 0; i < a.values.size(); ++i) {
    norm_a += a.values[i] * a.values[i];
    norm_n += n.values[i] * n.values[i];
    dot += a.values[i] * n.values[i];
  }
  if (norm_a == 0 && norm_n > 0) {
    return "the analytical gradient is all zeros: the backward never reaches this input (a "
           "missing gradient, a detach(), or a rule that returns nothing for it)";
  }
  // The numerical Jacobian is only a reference when the forward is smooth at
  // the scale of eps: a forward that rounds like float32 (on float64 input)
  // puts an error of u32 / eps ~ 6e-2 into every difference. Then a larger
  // step, 1e-3, must agree with the analytical gradient where eps does not.
  const double eps_large = std::max(1e-3, o.eps);
  if (eps_large > o.eps) {
    Jacobian wide;
    try {
      wide = numerical_jacobian(f, inputs, k, n.rows, eps_large);
    } catch (const Error&) {
      wide = {};  // f is not defined that far from the input: no test
    }
    GradcheckOptions loose = o;
    loose.rtol = std::max(o.rtol, 1e-2);
    loose.atol = std::max(o.atol, 1e-3);
    if (!wide.values.empty() && !matches(n, wide, loose) && matches(a, wide, loose)) {
      double worst = 0;
      for (size_t i = 0; i < n.values.size(); ++i) worst = std::max(worst, std::abs(n.values[i] - wide.values[i]));
      return fmt::format(
          "the forward is not smooth at the scale of eps: finite differences with eps={} and eps={} differ by up to "
          "{:.3g}, and the analytical gradient matches the wider ones; the forward rounds far more than float64 "
          "does (computed in float32 on float64 input?): check the forward's values before its gradient",
          o.eps, eps_large, worst);
    }
  }
  if (matches_scaled(a, n, -1.0, o)) return "wrong sign: the analytical gradient is -1 x the numerical one";
  if (matches_scaled(a, n, 2.0, o)) {
    return "a factor of two: the analytical gradient is 2 x the numerical one (a term counted twice?)";
  }
  if (matches_scaled(a, n, 0.5, o)) {
    return "a factor of two: the analytical gradient is 1/2 x the numerical one (a term missing, "
           "e.g. d(x^2) = 2x written as x?)";
  }
  if (matches_transposed(a, n, shape, o)) {
    return "a transposed gradient: it matches the numerical one with the input's last two dims "
           "swapped (B^T where B was meant, or the operands of a matmul swapped)";
  }
  if (norm_n > 0) {
    const double scale = dot / norm_n;
    if (std::abs(scale - 1) > 1e-3 && matches_scaled(a, n, scale, o)) {
      return fmt::format(
          "off by a constant factor: the analytical gradient is {:.6g} x the numerical one (a "
          "broadcast gradient averaged instead of summed, or a missing scale?)",
          scale);
    }
  }
  // The right gradient of the function with an operand transposed: the rule
  // used B where it needed B^T (g B for g B^T), or the reverse.
  for (size_t j = 0; j < inputs.size(); ++j) {
    const Tensor& other = inputs[j];
    if (!other.defined() || other.dtype() != DType::Float64 || other.dim() < 2 || other.size(-1) != other.size(-2))
      continue;
    const std::vector<double> original = read_values(other);
    const int64_t side = other.size(-1);
    std::vector<double> swapped(original.size());
    for (size_t c = 0; c < original.size(); ++c) {
      const int64_t block = static_cast<int64_t>(c) / (side * side), r = (static_cast<int64_t>(c) / side) % side,
                    q = static_cast<int64_t>(c) % side;
      swapped[c] = original[block * side * side + q * side + r];
    }
    Jacobian with_swap;
    try {
      write_values(other, swapped);
      with_swap = numerical_jacobian(f, inputs, k, n.rows, o.eps);
    } catch (const Error&) {
      with_swap = {};
    }
    write_values(other, original);
    if (matches(a, with_swap, o)) {
      return fmt::format(
          "an operand transposed: the analytical gradient for input {} is the right one of the function with input "
          "{}'s last two dims swapped (the rule uses B where it needs B^T, e.g. g B for g B^T, or the reverse)",
          k, j);
    }
  }
  // A derivative written with the output, evaluated at the input (exp's g x
  // for g exp(x), tanh's 1 - x^2 for 1 - y^2), or the reverse: run the
  // backward with the input set to the output's values, or differentiate at
  // them. Only when the output has the input's shape.
  Tensor out;
  try {
    NoGradGuard no_grad;
    out = f(inputs);
  } catch (const Error&) {
    return "";
  }
  if (out.shape() != shape) return "";
  const std::vector<double> x = read_values(inputs[k]), y = out.to_vector<double>();
  if (!std::all_of(y.begin(), y.end(), [](double v) { return std::isfinite(v); })) return "";
  std::string found;
  std::vector<Tensor> saved_grads;
  for (const Tensor& in : inputs) saved_grads.push_back(in.grad());
  try {
    write_values(inputs[k], y);
    const std::vector<Jacobian> at_output = analytical_jacobians(f, inputs, checked);
    if (matches(at_output[k], n, o)) {
      found = "the derivative taken at the input where it needs the output: the analytical gradient is the right "
              "one when the backward is run at x = y (the output's values), so its rule evaluates at the input x a "
              "derivative written with the output y (exp's g x for g exp(x), tanh's 1 - x^2 for 1 - y^2)";
    } else if (matches(a, numerical_jacobian(f, inputs, k, n.rows, o.eps), o)) {
      found = "the derivative taken at the output where it needs the input: the analytical gradient matches the "
              "numerical one taken at x = y (the output's values), so its rule evaluates at the output y a "
              "derivative written with the input x (log's g / y for g / x)";
    }
  } catch (const Error&) {
  }
  write_values(inputs[k], x);
  for (size_t i = 0; i < inputs.size(); ++i) inputs[i].set_grad(saved_grads[i]);
  return found;
}

}  // namespace

GradcheckResult gradcheck(const GradcheckFn& f, const std::vector<Tensor>& inputs, const GradcheckOptions& o) {
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

  GradcheckResult result;
  Tensor output;
  {
    output = f(inputs);
  }
  RG_CHECK(output.dtype() == DType::Float64, "gradcheck", "the function returned dtype {}; it must return float64",
           dtype_name(output.dtype()));
  const int64_t n_out = output.numel();

  // Keep the inputs' .grad as the caller left it.
  std::vector<Tensor> saved_grads;
  for (const Tensor& in : inputs) saved_grads.push_back(in.grad());

  // Analytical Jacobian: row j = backward of the one-hot gradient e_j.
  std::vector<Jacobian> analytical(inputs.size()), numerical(inputs.size());
  for (size_t k : checked) {
    analytical[k] = {n_out, inputs[k].numel(), std::vector<double>(n_out * inputs[k].numel(), 0.0)};
    numerical[k] = analytical[k];
  }
  std::string backward_error;
  if (output.requires_grad()) {
    try {
      fill_analytical(output, inputs, checked, analytical);
    } catch (const Error& e) {
      backward_error = e.what();
    }
  }
  for (size_t k = 0; k < inputs.size(); ++k) inputs[k].set_grad(saved_grads[k]);

  if (!backward_error.empty()) {
    result.diagnosis = "backward raised an error";
    result.report = fmt::format("gradcheck failed: backward raised an error:\n  {}", backward_error);
    return result;
  }

  // Numerical Jacobian: column i = central difference along e_i.
  for (size_t k : checked) numerical[k] = numerical_jacobian(f, inputs, k, n_out, o.eps);

  // Compare, input by input.
  result.passed = true;
  std::string report;
  for (size_t k : checked) {
    const Jacobian& a = analytical[k];
    const Jacobian& n = numerical[k];
    std::vector<GradcheckEntry> bad;
    std::vector<double> excess;
    for (int64_t r = 0; r < a.rows; ++r) {
      for (int64_t c = 0; c < a.cols; ++c) {
        const double diff = std::abs(a.at(r, c) - n.at(r, c));
        result.max_abs_error = std::max(result.max_abs_error, diff);
        if (!close(a.at(r, c), n.at(r, c), o) || std::isnan(a.at(r, c)) != std::isnan(n.at(r, c))) {
          bad.push_back({k, unflatten(r, output.shape()), unflatten(c, inputs[k].shape()), n.at(r, c), a.at(r, c)});
        }
      }
    }
    if (bad.empty()) continue;
    result.passed = false;
    std::stable_sort(bad.begin(), bad.end(), [](const GradcheckEntry& x, const GradcheckEntry& y) {
      return std::abs(x.analytical - x.numerical) > std::abs(y.analytical - y.numerical);
    });
    std::string diagnosis;
    try {
      diagnosis = diagnose(a, n, f, inputs, k, checked, o);
    } catch (const Error&) {
      // A further evaluation failed (e.g. outside f's domain): no diagnosis.
    }
    if (result.diagnosis.empty()) result.diagnosis = diagnosis;
    report += fmt::format(
        "gradcheck failed for input {} (shape {}): {} of {} Jacobian entries differ (eps={}, "
        "atol={}, rtol={})\n  worst entries:\n",
        k, shape_str(inputs[k].shape()), bad.size(), a.values.size(), o.eps, o.atol, o.rtol);
    for (size_t e = 0; e < bad.size() && static_cast<int>(e) < o.max_reported; ++e) {
      report += fmt::format("    d output{} / d input{}{}: numerical {:.8g}, analytical {:.8g}\n",
                            shape_str(bad[e].output_index), k, shape_str(bad[e].input_index),
                            bad[e].numerical, bad[e].analytical);
    }
    if (!diagnosis.empty()) report += "  diagnosis: " + diagnosis + "\n";
    result.worst.insert(result.worst.end(), bad.begin(),
                        bad.begin() + std::min<size_t>(bad.size(), static_cast<size_t>(o.max_reported)));
  }
  result.report = result.passed ? fmt::format("gradcheck passed (max |analytical - numerical| = {:.3g})",
                                              result.max_abs_error)
                                : report;
  return result;
}

}  // namespace ropegrad
