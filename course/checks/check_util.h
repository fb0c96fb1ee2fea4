// What the course's checks share (course/checks/exNN_name.cpp).
//
// A check reports a failure with ADD_FAILURE() << "what is wrong": its first
// line is what `scripts/dev.sh course check` prints beside the check's name,
// so it must say what kind of wrong (a gradcheck diagnosis, the worst element
// and both values), not "Value of: ...". A stub's NotImplemented is never
// caught here: it propagates, and course-check turns it into "not written
// yet" or "blocked by exNN-...".
#pragma once

#include <gtest/gtest.h>

#include <functional>
#include <string>
#include <vector>

#include "autograd/gradcheck.h"
#include "tensor/exercise.h"
#include "tests/support/test_util.h"

namespace ropegrad::course {

using namespace ropegrad::testing;

// gradcheck of f at `inputs` (float64 leaves); on failure the diagnosis
// (wrong sign, factor two, transposed, broadcast not summed back, ...) first,
// then the worst Jacobian entries.
inline void expect_gradcheck(const GradcheckFn& f, const std::vector<Tensor>& inputs, const std::string& label,
                             GradcheckOptions options = {}) {
  const GradcheckResult r = gradcheck(f, inputs, options);
  if (r.passed) return;
  // A stub that threw inside backward: let course-check see its message.
  if (r.report.find("not implemented: ex") != std::string::npos) {
    ADD_FAILURE() << r.report;
    return;
  }
  std::string what = r.diagnosis.empty() ? "the gradient is wrong" : r.diagnosis;
  if (r.diagnosis == "backward raised an error") {
    // The report's second line is the error itself (e.g. a gradient of the wrong shape).
    const size_t start = r.report.find('\n');
    if (start != std::string::npos) {
      std::string line = r.report.substr(start + 1, r.report.find('\n', start + 1) - start - 1);
      what += ": " + line.substr(std::min(line.find_first_not_of(' '), line.size()));
    }
  }
  ADD_FAILURE() << label << ": " << what << "\n" << r.report;
}

// actual equals expected within tol; the failure names the worst element.
inline void expect_values(const Tensor& actual, const Tensor& expected, Tol tol, const std::string& label) {
  if (!actual.defined()) {
    ADD_FAILURE() << label << ": no tensor (an undefined result or a missing gradient)";
    return;
  }
  if (actual.dtype() != expected.dtype()) {
    ADD_FAILURE() << label << ": dtype " << dtype_name(actual.dtype()) << ", expected " << dtype_name(expected.dtype());
    return;
  }
  const ::testing::AssertionResult r = all_close(actual, expected, tol);
  if (!r) ADD_FAILURE() << label << ": " << r.message();
}

// The float64 tolerance of a parity check against PyTorch.
inline Tol f64_tol() { return {1e-10, 1e-12}; }

// f throws a ropegrad::Error naming every part. A stub's NotImplemented is
// not such an error: it propagates, so a bad-input check cannot pass on a stub.
inline void expect_error(const std::function<void()>& f, const std::vector<std::string>& parts,
                         const std::string& label) {
  try {
    f();
  } catch (const NotImplemented&) {
    throw;
  } catch (const Error& e) {
    const std::string msg = e.what();
    for (const std::string& part : parts) {
      if (msg.find(part) == std::string::npos) {
        ADD_FAILURE() << label << ": the error \"" << msg << "\" does not mention \"" << part << "\"";
      }
    }
    return;
  }
  ADD_FAILURE() << label << ": no error was raised";
}

}  // namespace ropegrad::course
