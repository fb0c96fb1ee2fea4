// Export of an autograd graph to Graphviz DOT, for the docs and for learners:
//   std::ofstream("graph.dot") << ropegrad::to_dot(loss);   then  dot -Tsvg graph.dot
#pragma once

#include <string>

#include "tensor/tensor.h"

namespace ropegrad {

// Boxes are ops (their backward name and output shape), ellipses are leaves
// that receive a .grad (their shape); arrows follow the forward direction.
std::string to_dot(const Tensor& root);

}  // namespace ropegrad
