// gradcheck against the wrong backward rules in tests/gradcheck_mistakes/:
// each case is a custom Function with one mistake, written without looking at
// gradcheck. For each one gradcheck must fail, its diagnosis must name the
// structure of the mistake (the substrings the case declares, chosen from the
// truth it states), and no other diagnosis may be named. A case that declares
// no diagnosis must get none, and a report that says what was observed.
//
// GRADCHECK_MISTAKES_PRINT=1 ./build/tests/test_gradcheck_mistakes prints every case's report.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cctype>
#include <cstdlib>
#include <iostream>
#include <string>
#include <vector>

#include "autograd/gradcheck.h"
#include "tests/gradcheck_mistakes/case.h"

using namespace ropegrad;
using ::testing::HasSubstr;

namespace {

// Every diagnosis gradcheck can name: the text before its first ':'.
const std::vector<std::string>& diagnosis_names() {
  static const std::vector<std::string> names = {
      "backward raised an error",
      "the analytical gradient is all zeros",
      "the forward is not smooth at the scale of eps",
      "wrong sign",
      "a factor of two",
      "a transposed gradient",
      "off by a constant factor",
      "an operand transposed",
      "the derivative taken at the input where it needs the output",
      "the derivative taken at the output where it needs the input",
      "gradients exchanged",
      "a non-finite output",
      "a non-finite entry",
      "one gradient for every output",
      "dims swapped",
      "the nonzero entries inverted",
      "the gradient on the wrong entries",
      "the Jacobian transposed",
      "off by a varying factor",
      "off by an added term",
      "each branch's slope off",
      "a coupling term missing",
      "the coupling in the wrong place",
      "the diagonal right, the coupling wrong",
      "the coupling right, the diagonal wrong",
      "the coupling term scaled",
      "the elementwise derivative is wrong",
      "only some entries wrong",
      "wrong entries of a simple form",
      "the right values at the wrong inputs",
      "entries missing",
      "wrong by a few added numbers",
      "one reader's share kept",
  };
  return names;
}

// The known diagnosis names that open `diagnosis` or one of its clauses
// (after ": ", "; " or "("): where a second cause would be named. A name
// inside a clause is a word of its explanation, not a diagnosis: "a
// transposed gradient: it matches ... with the input's last two dims swapped"
// names one diagnosis, not also "dims swapped".
std::vector<std::string> names_in(const std::string& diagnosis) {
  std::vector<std::string> found;
  for (const std::string& name : diagnosis_names()) {
    for (size_t at = diagnosis.find(name); at != std::string::npos; at = diagnosis.find(name, at + 1)) {
      const bool opens = at == 0 || diagnosis[at - 1] == '(' ||
                         (at >= 2 && (diagnosis.compare(at - 2, 2, ": ") == 0 || diagnosis.compare(at - 2, 2, "; ") == 0));
      if (opens) {
        found.push_back(name);
        break;
      }
    }
  }
  return found;
}

// A backward that raised an error has no Jacobian entries to list: the
// error itself, on the report's second line, is what explains the failure.
bool explained_by_error(const GradcheckResult& r) {
  const std::string prefix = "gradcheck failed: backward raised an error:\n  ";
  return r.diagnosis == "backward raised an error" && r.report.rfind(prefix, 0) == 0 &&
         r.report.size() > prefix.size();
}

class GradcheckMistake : public ::testing::TestWithParam<size_t> {
 protected:
  const mistakes::Case& the_case() const { return mistakes::registry()[GetParam()]; }
};

TEST_P(GradcheckMistake, FailsAndNamesTheMistake) {
  const mistakes::Case& c = the_case();
  SCOPED_TRACE(c.name + ": " + c.mistake);
  const GradcheckResult r = gradcheck(c.f, c.inputs);
  if (std::getenv("GRADCHECK_MISTAKES_PRINT")) std::cout << "=== " << c.name << "\n" << r.report;
  ASSERT_FALSE(r.passed) << r.report;
  if (!explained_by_error(r)) {
    EXPECT_FALSE(r.worst.empty()) << r.report;
  }
  const std::vector<std::string> named = names_in(r.diagnosis);
  if (!c.diagnosis_says) {
    EXPECT_LE(named.size(), 1u) << r.diagnosis;
    return;
  }
  if (c.diagnosis_says->empty()) {
    EXPECT_EQ(r.diagnosis, "") << r.report;
    EXPECT_THAT(r.report, HasSubstr("observed: "));
  } else {
    const std::string& expected_name = c.diagnosis_says->front();
    ASSERT_NE(std::find(diagnosis_names().begin(), diagnosis_names().end(), expected_name),
              diagnosis_names().end())
        << "the case expects '" << expected_name << "', which is no diagnosis name";
    EXPECT_EQ(r.diagnosis.substr(0, r.diagnosis.find(':')), expected_name) << r.report;
    EXPECT_EQ(named, std::vector<std::string>{expected_name}) << r.diagnosis;
    for (const std::string& part : *c.diagnosis_says) EXPECT_THAT(r.diagnosis, HasSubstr(part));
    // A raised error is the report's own first line (no Jacobian to diagnose).
    if (!explained_by_error(r)) {
      EXPECT_THAT(r.report, HasSubstr("diagnosis: " + r.diagnosis));
    }
  }
  for (const std::string& part : c.report_says) EXPECT_THAT(r.report, HasSubstr(part));
}

TEST_P(GradcheckMistake, LeavesTheInputsAsTheyWere) {
  const mistakes::Case& c = the_case();
  std::vector<std::vector<double>> before;
  for (const Tensor& in : c.inputs) before.push_back(to(in, DType::Float64).to_vector<double>());
  (void)gradcheck(c.f, c.inputs);
  for (size_t k = 0; k < c.inputs.size(); ++k) {
    EXPECT_EQ(to(c.inputs[k], DType::Float64).to_vector<double>(), before[k]) << "input " << k;
    EXPECT_FALSE(c.inputs[k].grad().defined()) << "input " << k;
  }
}

// "layernorm_missing_mean_term": the case's name with anything but letters and digits as '_'.
std::string case_name(const ::testing::TestParamInfo<size_t>& info) {
  std::string name = mistakes::registry()[info.param].name;
  for (char& ch : name) {
    if (!std::isalnum(static_cast<unsigned char>(ch))) ch = '_';
  }
  return name;
}

INSTANTIATE_TEST_SUITE_P(Cases, GradcheckMistake, ::testing::Range<size_t>(0, mistakes::registry().size()),
                         case_name);

TEST(GradcheckMistakeCases, EveryCaseIsRegisteredOnceUnderItsOwnName) {
  std::vector<std::string> names;
  for (const mistakes::Case& c : mistakes::registry()) names.push_back(c.name);
  std::sort(names.begin(), names.end());
  EXPECT_EQ(std::adjacent_find(names.begin(), names.end()), names.end());
  EXPECT_GE(names.size(), 36u);  // the 12 first cases, 12 held-out ones, and at least 12 more
}

}  // namespace
