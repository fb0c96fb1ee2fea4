// Every module and nn function of the catalogue (catalog/module_catalog.h) is
// gradchecked in float64: the analytical Jacobian from backward against
// central differences, input by input, parameter by parameter. The same list
// drives `ropegrad gradcheck`, so a case added there is tested here.
#include <gtest/gtest.h>

#include <algorithm>
#include <cctype>
#include <numeric>
#include <string>
#include <vector>

#include "autograd/gradcheck.h"
#include "catalog/module_catalog.h"

using namespace ropegrad;

namespace {

class ModuleGradcheck : public ::testing::TestWithParam<size_t> {};

TEST_P(ModuleGradcheck, AnalyticalJacobianMatchesNumerical) {
  const nn::ModuleCase& c = nn::module_catalog().at(GetParam());
  SCOPED_TRACE(c.name + " (" + c.shapes + ")");
  const nn::ModuleCheck check = c.make();
  ASSERT_FALSE(check.inputs.empty()) << "a case must check at least one tensor";
  for (const Tensor& t : check.inputs) {
    ASSERT_EQ(t.dtype(), DType::Float64) << "gradcheck needs float64 leaves";
    ASSERT_TRUE(t.requires_grad());
  }
  const GradcheckResult r = gradcheck(check.fn, check.inputs);
  EXPECT_TRUE(r.passed) << r.report;
  EXPECT_LT(r.max_abs_error, 1e-5) << r.report;
}

TEST(ModuleCatalog, CoversEveryModuleFamily) {
  // The catalogue must keep covering the model's building blocks and all
  // three attention variants; a deleted entry would silently lose coverage.
  std::vector<std::string> names;
  for (const nn::ModuleCase& c : nn::module_catalog()) names.push_back(c.name);
  for (const char* expected : {"linear", "embedding", "rmsnorm", "swiglu", "silu_ffn", "rope", "attention",
                               "multihead_attention", "w2_attention", "triple_attention", "transformer_block",
                               "transformer_lm"}) {
    EXPECT_NE(std::find(names.begin(), names.end(), expected), names.end()) << expected;
  }
  int lm_cases = 0;
  for (const std::string& n : names) lm_cases += n == "transformer_lm";
  EXPECT_EQ(lm_cases, 3) << "one whole-model case per attention variant";
}

// "w2_attention: causal, RoPE, scalar sigma: [2, 5, 8], H 2" -> "12_w2_attention_causal_RoPE_...".
std::string case_name(const ::testing::TestParamInfo<size_t>& info) {
  const nn::ModuleCase& c = nn::module_catalog().at(info.param);
  const std::string raw = std::to_string(info.param) + "_" + c.name + "_" + c.shapes;
  std::string out;
  for (char ch : raw) {
    if (std::isalnum(static_cast<unsigned char>(ch))) {
      out += ch;
    } else if (!out.empty() && out.back() != '_') {
      out += '_';
    }
  }
  while (!out.empty() && out.back() == '_') out.pop_back();
  return out;
}

std::vector<size_t> all_cases() {
  std::vector<size_t> idx(nn::module_catalog().size());
  std::iota(idx.begin(), idx.end(), size_t{0});
  return idx;
}

INSTANTIATE_TEST_SUITE_P(Catalog, ModuleGradcheck, ::testing::ValuesIn(all_cases()), case_name);

}  // namespace
