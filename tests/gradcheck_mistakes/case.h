// One wrong backward rule for gradcheck: a custom ropegrad::Function whose
// backward a learner got wrong, and what gradcheck must say about it.
//
// Every .cpp file in this folder defines one case and registers it with a
// file-scope `const mistakes::Register reg(make);`. tests/CMakeLists.txt
// compiles them all into test_gradcheck_mistakes, which runs gradcheck on each
// registered case (tests/test_gradcheck_mistakes.cpp): to add a case, drop a
// file here and re-run cmake.
//
// The first four fields are those of the cases the mistakes were written in
// (name, the truth, inputs, f); the last two say what the test requires.
#pragma once
#include <optional>
#include <string>
#include <vector>
#include "autograd/function.h"
#include "autograd/gradcheck.h"
#include "autograd/ops.h"
#include "tensor/tensor.h"

namespace mistakes {
struct Case {
  std::string name;     // short id, e.g. "softmax-diagonal-only"
  std::string mistake;  // the truth, in the learner's words: what is wrong in backward
  std::vector<ropegrad::Tensor> inputs;  // float64, requires_grad on those to check
  ropegrad::GradcheckFn f;               // applies the Function (and maybe a fixed reduction)
  // Substrings the diagnosis must hold, chosen from the truth above. The first
  // is the diagnosis's name (the text before its first ':'); no other
  // diagnosis's name may appear. {} (declared, empty): no diagnosis may be
  // named. std::nullopt (a case that declares nothing): the test only requires
  // that gradcheck fails and names at most one diagnosis.
  std::optional<std::vector<std::string>> diagnosis_says = std::nullopt;
  // Substrings the report must hold besides (e.g. the "observed:" line when no
  // diagnosis fits).
  std::vector<std::string> report_says = {};
};
std::vector<Case>& registry();
struct Register {
  explicit Register(Case (*make)()) { registry().push_back(make()); }
};
}  // namespace mistakes
