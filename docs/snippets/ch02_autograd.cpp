// The outputs chapter 2 (docs/02-autograd.md) shows; the docs test compares
// them with the chapter. Usage: snippet_ch02_autograd MODE:
//   accumulate  .grad accumulates across backward calls until it is reset
//   dot         to_dot of loss = mean(relu(matmul(X, W) + b)), the leaves named
#include <iostream>
#include <string>

#include "autograd/dot.h"
#include "autograd/engine.h"
#include "autograd/ops.h"
#include "tensor/print.h"
#include "tensor/random.h"

using namespace ropegrad;

int main(int argc, char** argv) {
  const std::string what = argc > 1 ? argv[1] : "";
  if (what == "accumulate") {
    Tensor x = tensor({1.0, 2.0, 3.0}).requires_grad_();
    backward(sum(x * x));
    std::cout << "backward(sum(x * x));   x.grad -> " << x.grad() << "\n";
    backward(sum(x * x));
    std::cout << "backward(sum(x * x));   x.grad -> " << x.grad() << "\n";
    x.set_grad(Tensor());
    std::cout << "x.set_grad(Tensor());   // zero it (PyTorch's zero_grad(set_to_none=True))\n";
    backward(sum(x * x));
    std::cout << "backward(sum(x * x));   x.grad -> " << x.grad() << "\n";
  } else if (what == "dot") {
    Tensor X = randn({4, 3}).requires_grad_();
    Tensor W = randn({3, 2}).requires_grad_();
    Tensor b = randn({2}).requires_grad_();
    Tensor loss = mean(relu(matmul(X, W) + b));
    std::cout << to_dot(loss, {{"X", X}, {"W", W}, {"b", b}});  // the leaves by name
  } else {
    std::cerr << "usage: snippet_ch02_autograd accumulate | dot\n";
    return 2;
  }
  return 0;
}
