// The catalogue of differentiable ops with the inputs each is gradchecked on.
//
// One list serves two readers: tests/test_gradcheck.cpp runs gradcheck on
// every entry, and `ropegrad gradcheck` prints the table (op, shapes, max
// error, pass/fail). Adding an op means adding its entries here.
#pragma once

#include <string>
#include <vector>

#include "autograd/gradcheck.h"
#include "tensor/random.h"

namespace ropegrad {

// How a case's input is drawn (float64 unless stated).
enum class InputKind {
  Normal,        // N(0, 1)
  Positive,      // U(0.5, 2): for log, sqrt, pow, division
  AwayFromZero,  // |x| in [0.2, 1]: keeps abs, relu, clamp off their kinks
  Distinct,      // a shuffled grid with gaps of 0.1: max/min without ties
  Ids,           // int64 in [0, bound) (no gradient)
  Mask,          // bool, about half true (no gradient)
};

struct InputSpec {
  Shape shape;
  InputKind kind = InputKind::Normal;
  int64_t bound = 0;  // for Ids
};

struct OpCase {
  std::string op;      // e.g. "matmul"
  std::string shapes;  // e.g. "[2, 3] @ [3, 4]", what the case exercises
  std::vector<InputSpec> inputs;
  GradcheckFn fn;
};

const std::vector<OpCase>& op_catalog();

// Draws the inputs of a case (float inputs require grad), deterministically.
std::vector<Tensor> make_inputs(const OpCase& c, uint64_t seed = 0);

}  // namespace ropegrad
