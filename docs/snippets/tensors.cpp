// The outputs chapter 1 shows, printed by the library itself; the docs test
// compares them with the chapter. Usage: snippet_tensors broadcast | broadcast-error | random
#include <iostream>
#include <string>

#include "autograd/ops.h"
#include "tensor/random.h"

using namespace ropegrad;

int main(int argc, char** argv) {
  const std::string what = argc > 1 ? argv[1] : "";
  if (what == "broadcast") {
    Tensor u = view(arange(6), {2, 1, 3});       // int64 [2, 1, 3]
    Tensor v = view(arange(4) * 10, {4, 1});     // int64 [4, 1]
    std::cout << (u + v) << "\n";                // int64 [2, 4, 3]
  } else if (what == "broadcast-error") {
    try {
      (void)(ones({2, 3}) + ones({4}));
    } catch (const Error& e) {
      std::cout << e.what() << "\n";
    }
  } else if (what == "random") {
    manual_seed(0);
    std::cout << "manual_seed(0); rand({3})  -> " << rand({3}) << "\n";
    manual_seed(0);
    std::cout << "manual_seed(0); rand({3})  -> " << rand({3}) << "   (again)\n";
  } else {
    std::cerr << "usage: snippet_tensors broadcast | broadcast-error | random\n";
    return 2;
  }
  return 0;
}
