// gradcheck: is the backward rule the derivative of the forward?
//
// Builds the full Jacobian of f at `inputs` twice:
//   numerically, column by column, by central differences
//       J[:, i] = (f(x + eps e_i) - f(x - eps e_i)) / (2 eps),
//   analytically, row by row, by one backward pass per output element with a
//   one-hot gradient (a vector-Jacobian product picks out one row),
// and compares them entry by entry: |analytical - numerical| <= atol + rtol |numerical|
// (torch.autograd.gradcheck's test and defaults). Only float64 inputs are
// accepted: in float32 the finite difference itself is wrong in the third digit.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "tensor/tensor.h"

namespace ropegrad {

struct GradcheckOptions {
  double eps = 1e-6;
  double atol = 1e-5;
  double rtol = 1e-3;
  int max_reported = 5;  // worst entries listed per failing input
};

struct GradcheckEntry {
  size_t input;           // which input
  Shape output_index;     // Jacobian row, as an index into the output
  Shape input_index;      // Jacobian column, as an index into the input
  double numerical;
  double analytical;
};

struct GradcheckResult {
  bool passed = false;
  double max_abs_error = 0;           // largest |analytical - numerical| seen
  std::vector<GradcheckEntry> worst;  // failing entries, worst first
  std::string diagnosis;              // a known mistake the pattern matches, if any
  std::string observed;               // where the wrong entries are (counts, indices); the report
                                      // shows it when no diagnosis fits
  std::string report;                 // everything above, for a person to read
};

using GradcheckFn = std::function<Tensor(const std::vector<Tensor>&)>;

// Checks d f / d input for every input that requires grad. Inputs that do not
// require grad (int64 ids, masks) are passed through unchanged.
GradcheckResult gradcheck(const GradcheckFn& f, const std::vector<Tensor>& inputs,
                          const GradcheckOptions& options = {});

}  // namespace ropegrad
