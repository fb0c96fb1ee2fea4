// The outputs chapter 7 (docs/07-rmsnorm.md) shows; the docs test compares
// them with the chapter. Usage: snippet_ch07_rmsnorm MODE:
//   rows      rms_norm of an ordinary row, a small row (eps matters) and a zero row
//   overflow  rows of 1e20: the fused kernel against the formula in float32 ops
#include <iostream>
#include <string>

#include "autograd/ops.h"
#include "nn/functional.h"
#include "tensor/print.h"

using namespace ropegrad;

int main(int argc, char** argv) {
  const std::string what = argc > 1 ? argv[1] : "";
  const Tensor g = ones({4});
  if (what == "rows") {
    const Tensor ordinary = tensor({2, -2, 2, -2}, {1, 4});
    const Tensor small = tensor({1e-3, -1e-3, 1e-3, -1e-3}, {1, 4});  // ms = 1e-6 < eps
    std::cout << nn::rms_norm(ordinary, g) << "\n" << nn::rms_norm(small, g) << "\n" << nn::rms_norm(zeros({1, 4}), g) << "\n";
  } else if (what == "overflow") {
    const Tensor x = tensor({1e20, -1e20, 1e20, -1e20}, {1, 4});
    const Tensor naive = x * rsqrt(mean(x * x, {-1}, /*keepdim=*/true) + 1e-5) * g;  // x * x is inf in float32
    std::cout << "fused: " << nn::rms_norm(x, g) << "\n";
    std::cout << "naive float32 ops: " << naive << "\n";
  } else {
    std::cerr << "usage: snippet_ch07_rmsnorm rows | overflow\n";
    return 2;
  }
  return 0;
}
