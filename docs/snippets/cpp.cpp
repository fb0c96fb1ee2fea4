// The C++ ideas of chapter 0, each printed by a few lines of real ropegrad
// code; the docs test compares the output with the chapter.
// Usage: snippet_cpp handles | view | lambda | dispatch | error
#include <iostream>
#include <string>

#include "autograd/ops.h"

using namespace ropegrad;

int main(int argc, char** argv) {
  const std::string what = argc > 1 ? argv[1] : "";
  if (what == "handles") {
    // A Tensor is a handle: copying it copies a shared_ptr, not the numbers.
    Tensor a = zeros({3});
    Tensor b = a;        // same storage, like `b = a` in Python
    Tensor c = clone(a); // a real copy, like `a.clone()`
    fill_(b, 7);
    std::cout << "a = " << a << "\n"
              << "c = " << c << "\n";
  } else if (what == "view") {
    // A view shares storage too; the storage lives while any handle does.
    Tensor row;
    {
      Tensor m = arange(6.0, 12.0, 1.0); // float32 [6]
      row = view(m, {2, 3});
    } // m's handle is gone, not its storage
    std::cout << "row = " << row << "\n";
  } else if (what == "lambda") {
    Tensor row = view(arange(6.0, 12.0, 1.0), {2, 3});
    // A lambda with captures: here one that scales by a captured factor.
    double factor = 0.5;
    auto scale = [factor](const Tensor& t) { return t * factor; };
    std::cout << "scale(row) = " << scale(row) << "\n";
  } else if (what == "dispatch") {
    // Templates: one generic lambda, instantiated for float and for double.
    for (DType dt : {DType::Float32, DType::Float64}) {
      dispatch_floating(dt, "demo", [&](auto tag) {
        using T = decltype(tag);
        std::cout << dtype_name(dt) << ": sizeof(T) = " << sizeof(T) << "\n";
      });
    }
  } else if (what == "error") {
    // Errors are exceptions: ropegrad::Error with the op's name and the values.
    try {
      (void)matmul(ones({2, 3}), ones({2, 3}));
    } catch (const Error& e) {
      std::cout << "Error: " << e.what() << "\n";
    }
  } else {
    std::cerr << "usage: snippet_cpp handles | view | lambda | dispatch | error\n";
    return 2;
  }
  return 0;
}
