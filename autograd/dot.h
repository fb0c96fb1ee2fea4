// Export of an autograd graph to Graphviz DOT, for the docs and for learners:
//   std::ofstream("graph.dot") << ropegrad::to_dot(loss);   then  dot -Tsvg graph.dot
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "tensor/tensor.h"

namespace ropegrad {

// Boxes are ops (their backward name and output shape), ellipses are leaves
// that receive a .grad (their name from `names` and their shape, "leaf" for a
// leaf not named there); arrows follow the forward direction.
//   to_dot(loss, {{"X", X}, {"W", W}, {"b", b}})   leaves labelled "X [4, 3]", ...
std::string to_dot(const Tensor& root, const std::vector<std::pair<std::string, Tensor>>& names = {});

}  // namespace ropegrad
