// gradcheck's internals (not part of the API; autograd/gradcheck.h is): the
// Jacobian blocks it builds, the comparison of one entry, and the diagnoses
// read from the structure of the two Jacobians (gradcheck_diagnose.cpp).
//
// Every diagnosis here is named only when it fits every entry of the block
// within gradcheck's tolerance; otherwise it returns "" and the caller tries
// the next. describe_wrong_entries() always says what was observed.
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "autograd/gradcheck.h"

namespace ropegrad::gradcheck_detail {

// Row-major Jacobian block for one input: rows = output elements, cols = input elements.
struct Jacobian {
  int64_t rows = 0, cols = 0;
  std::vector<double> values;
  bool reached = false;  // an analytical block: some backward gave the input a gradient (a defined .grad)
  double& at(int64_t r, int64_t c) { return values[r * cols + c]; }
  double at(int64_t r, int64_t c) const { return values[r * cols + c]; }
};

// torch.autograd.gradcheck's test: |analytical - numerical| <= atol + rtol |numerical|.
bool close(double analytical, double numerical, const GradcheckOptions& o);

// Does every entry of A match the one of B (with the usual tolerance, B as
// the reference)? False when any entry of B is not finite.
bool matches(const Jacobian& a, const Jacobian& b, const GradcheckOptions& o);

// The index of element `flat` of a row-major tensor of `shape`.
Shape unflatten(int64_t flat, const Shape& shape);

// One failing input's two blocks, with what the structural diagnoses relate
// their entries to: the inputs' values and the output's.
struct FailingBlock {
  const Jacobian& analytical;
  const Jacobian& numerical;
  size_t input;                      // k: which input the block belongs to
  const std::vector<Tensor>& inputs; // all of f's inputs (masks and ids too)
  Shape output_shape;
  std::vector<double> output;        // f's output at the inputs, flat
  GradcheckOptions options;
};

// The forward's first non-finite value on finite inputs, or "".
std::string diagnose_non_finite_output(const FailingBlock& b);

// The first entry that is finite on one side and not on the other, or "".
std::string diagnose_non_finite_entry(const FailingBlock& b);

// Input k's analytical block is input j's numerical one and the reverse
// (same shapes), for some other checked input j; "" when none is.
std::string diagnose_exchanged(const std::vector<Jacobian>& analytical, const std::vector<Jacobian>& numerical,
                               const std::vector<size_t>& checked, const std::vector<Tensor>& inputs, size_t k,
                               const GradcheckOptions& o);

// The constant factor A = c N, said as a fraction of the shapes' sizes when
// it is one (e.g. "0.25 = 1/4, and 4 is the size of the output's dim 0").
std::string explain_constant_factor(double factor, const FailingBlock& b);

// What the structure says, the most specific verified pattern first: every
// output's row the sum of the numerical rows; a factor or an added term of a
// simple form (a constant per group of entries, a multiple of an input's or
// the output's values); a coupling term missing, or only the diagonal or only
// the coupling wrong; the wrong entries confined to one place (an output or
// input element, a slice, a mask, a sign of the input, the diagonal); an
// elementwise derivative wrong throughout. "" when none fits.
std::string diagnose_structure(const FailingBlock& b);

// What was observed, always, as facts separated by "; ", the most telling
// first: which input's gradient is wrong at how many entries, and which of
// the other inputs' are right (`wrong_counts`: each checked input and how
// many of its entries are wrong); how the wrong entries sit against the
// numerical Jacobian's nonzero entries (where the output does not depend on
// the input, which rows and columns are right); where they are.
std::string describe_wrong_entries(const FailingBlock& b,
                                   const std::vector<std::pair<size_t, int64_t>>& wrong_counts);

}  // namespace ropegrad::gradcheck_detail
