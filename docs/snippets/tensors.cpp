// The outputs chapter 1 (docs/01-tensors.md) shows, printed by the library
// itself; the docs test compares them with the chapter.
// Usage: snippet_tensors MODE, one mode per block:
//   views            shape, strides, offset and is_contiguous() of each view
//   broadcast        u + v, [2, 1, 3] + [4, 1]
//   broadcast-error  shapes that do not broadcast
//   sum-precision    1e7 x 0.1f summed by ropegrad and by a float loop
//   masked-softmax   softmax, log_softmax, logsumexp of an all -inf row
//   random           manual_seed(0) twice
//   print            the print format of a few tensors
#include <cstdio>
#include <iostream>
#include <limits>
#include <string>

#include <fmt/format.h>

#include "autograd/engine.h"
#include "autograd/ops.h"
#include "tensor/print.h"
#include "tensor/random.h"

using namespace ropegrad;

namespace {

// One line: label, then the view's geometry, then an optional note.
void geometry(const std::string& label, const Tensor& t, const std::string& note = "") {
  std::string line = fmt::format("{:<19}shape {} strides {} offset {} contiguous {}", label, shape_str(t.shape()),
                                 shape_str(t.strides()), t.offset(), t.is_contiguous());
  if (!note.empty()) line += "   " + note;
  std::cout << line << "\n";
}

}  // namespace

int main(int argc, char** argv) {
  const std::string what = argc > 1 ? argv[1] : "";
  if (what == "views") {
    Tensor x = arange(0.0, 6.0, 1.0, DType::Float32);
    Tensor a = view(x, {2, 3});
    Tensor col = view(arange(0.0, 3.0, 1.0, DType::Float32), {3, 1});
    geometry("a:", a);
    geometry("transpose(a,0,1):", transpose(a, 0, 1));
    geometry("narrow(a,1,1,2):", narrow(a, 1, 1, 2));
    geometry("slice(x,0,1,6,2):", slice(x, 0, 1, 6, 2), "x = the 6 numbers");
    geometry("select(a,1,2):", select(a, 1, 2));
    geometry("unsqueeze(a,1):", unsqueeze(a, 1));
    geometry("col.expand(3,4):", expand(col, {3, 4}), "col is [3, 1]");
  } else if (what == "broadcast") {
    Tensor u = view(arange(6), {2, 1, 3});       // int64 [2, 1, 3]
    Tensor v = view(arange(4) * 10, {4, 1});     // int64 [4, 1]
    std::cout << (u + v) << "\n";                // int64 [2, 4, 3]
  } else if (what == "broadcast-error") {
    try {
      (void)(ones({2, 3}) + ones({4}));
    } catch (const Error& e) {
      std::cout << e.what() << "\n";
    }
  } else if (what == "sum-precision") {
    const int64_t n = 10'000'000;
    const double total = sum(full({n}, 0.1, DType::Float32)).item<double>();  // accumulates in double
    float naive = 0.0f;
    for (int64_t i = 0; i < n; ++i) naive += 0.1f;  // a float accumulator
    std::printf("sum of 1e7 x 0.1f = %.6f     (ropegrad sum)\n", total);
    std::printf("naive float loop  = %.6f     (float accumulator)\n", static_cast<double>(naive));
  } else if (what == "masked-softmax") {
    const double inf = std::numeric_limits<double>::infinity();
    Tensor x = tensor({1, 2, 3, -inf, -inf, -inf}, {2, 3});
    std::cout << "x =\n" << x << "\n";
    std::cout << "softmax(x, -1) =\n" << softmax(x, -1) << "\n";
    std::cout << "log_softmax(x, -1) =\n" << log_softmax(x, -1) << "\n";
    std::cout << "logsumexp(x, {-1}) =\n" << logsumexp(x, {-1}) << "\n";
  } else if (what == "random") {
    manual_seed(0);
    std::cout << "manual_seed(0); rand({3})  -> " << rand({3}) << "\n";
    manual_seed(0);
    std::cout << "manual_seed(0); rand({3})  -> " << rand({3}) << "   (again)\n";
  } else if (what == "print") {
    std::cout << tensor({1, 2, 3, 4}, {2, 2}, DType::Float64).requires_grad_() << "\n";
    std::cout << tensor({1.5, -2.0, 1e-5}) << "\n";
    std::cout << tensor_bool({true, false}) << "\n";
    Tensor w = tensor({1, 2}).requires_grad_();
    std::cout << w * 2.0 << "\n";
    std::cout << zeros({0, 3}) << "\n";
  } else {
    std::cerr << "usage: snippet_tensors views | broadcast | broadcast-error | sum-precision | masked-softmax | random"
                 " | print\n";
    return 2;
  }
  return 0;
}
