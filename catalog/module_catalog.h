// The catalogue of modules and nn functions with the float64 inputs each is
// gradchecked on (the modules' counterpart of catalog/op_catalog.h). The
// `ropegrad gradcheck` report and tests/test_modules_gradcheck.cpp read it.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "autograd/gradcheck.h"

namespace ropegrad::nn {

struct ModuleCheck {
  GradcheckFn fn;              // keeps its module alive
  std::vector<Tensor> inputs;  // input tensors and every parameter, float64 leaves
};

struct ModuleCase {
  std::string name;    // e.g. "rope", "w2_attention"
  std::string shapes;  // what the case exercises
  std::function<ModuleCheck()> make;
};

const std::vector<ModuleCase>& module_catalog();

}  // namespace ropegrad::nn
