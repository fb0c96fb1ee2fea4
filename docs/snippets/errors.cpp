// Error messages the chapters quote, raised by the real ops; the docs test
// compares them with the chapters. Usage: snippet_errors NAME...
#include <functional>
#include <iostream>
#include <map>
#include <string>

#include "autograd/engine.h"
#include "autograd/ops.h"
#include "nn/functional.h"
#include "nn/layers.h"

using namespace ropegrad;

int main(int argc, char** argv) {
  const std::map<std::string, std::function<void()>> cases = {
      // chapter 1: a transposed [3, 2] view cannot be flattened without a copy
      {"view", [] { (void)view(transpose(zeros({2, 3}), 0, 1), {6}); }},
      // chapter 2: the second backward through a freed graph
      {"backward-twice",
       [] {
         Tensor x = tensor({1.0, 2.0}).requires_grad_();
         Tensor y = sum(x * x);
         backward(y);
         backward(y);
       }},
      // chapter 2: a saved tensor modified in place before backward
      {"version",
       [] {
         Tensor w = tensor({1.0, 2.0, 3.0});  // a constant: no grad
         Tensor x = tensor({4.0, 5.0, 6.0}).requires_grad_();
         Tensor prod = x * w;                 // mul saves w (for dx = g * w)
         mul_(w, 2.0);                        // allowed: w needs no grad
         backward(sum(prod));
       }},
      // chapter 3: matmul's shape errors
      {"matmul", [] { (void)matmul(zeros({2, 3}), zeros({4, 5})); }},
      {"matmul-batch", [] { (void)matmul(zeros({2, 2, 3}), zeros({3, 3, 5})); }},
      // chapter 6: a Linear(3 -> 2) fed rows of 4
      {"linear", [] { (void)nn::Linear(3, 2).forward(zeros({2, 4})); }},
      // chapter 13: cross-entropy's two input errors
      {"cross-entropy-range",
       [] { (void)nn::cross_entropy(zeros({1, 3}), tensor({3.0}, DType::Int64)); }},
      {"cross-entropy-ignored",
       [] { (void)nn::cross_entropy(zeros({2, 3}), tensor({-100.0, -100.0}, DType::Int64)); }},
  };
  for (int i = 1; i < argc; ++i) {
    auto it = cases.find(argv[i]);
    if (it == cases.end()) {
      std::cerr << "snippet_errors: no case named '" << argv[i] << "'\n";
      return 2;
    }
    try {
      it->second();
      std::cout << argv[i] << ": no error\n";
    } catch (const Error& e) {
      std::cout << e.what() << "\n";
    }
  }
  return 0;
}
