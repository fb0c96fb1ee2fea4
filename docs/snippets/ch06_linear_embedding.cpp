// The outputs chapter 6 (docs/06-linear-and-embedding.md) shows; the docs
// test compares them with the chapter. Usage: snippet_ch06_linear_embedding MODE:
//   strides           W and the W^T view of a Linear(3, 2)
//   linear-backward   y and dW of a Linear with given weights, L = sum(y)
//   embedding         rows for repeated ids, and the weight's accumulated gradient
//   embedding-errors  ids out of range, ids of the wrong dtype
#include <functional>
#include <iostream>
#include <string>

#include "autograd/engine.h"
#include "autograd/ops.h"
#include "nn/layers.h"
#include "tensor/print.h"

using namespace ropegrad;

namespace {

void print_error(const std::function<void()>& f) {
  try {
    f();
    std::cout << "no error\n";
  } catch (const Error& e) {
    std::cout << e.what() << "\n";
  }
}

}  // namespace

int main(int argc, char** argv) {
  const std::string what = argc > 1 ? argv[1] : "";
  if (what == "strides") {
    nn::Linear lin(3, 2);
    const Tensor wt = transpose(lin.weight, 0, 1);
    std::cout << "weight strides " << shape_str(lin.weight.strides()) << ", W^T strides " << shape_str(wt.strides())
              << " contiguous=" << wt.is_contiguous() << "\n";
  } else if (what == "linear-backward") {
    nn::Linear lin(3, 2);
    lin.load_state_dict({{"weight", tensor({1, 2, 3, 4, 5, 6}, {2, 3})}});
    const Tensor x = tensor({1, 0, -1, 0.5, 0.5, 0.5}, {2, 3});
    const Tensor y = lin.forward(x);
    backward(sum(y));
    std::cout << "y =\n" << y << "\ndW =\n" << lin.weight.grad() << "\n";
  } else if (what == "embedding") {
    nn::Embedding emb(4, 2);
    emb.load_state_dict({{"weight", tensor({0, 1, 10, 11, 20, 21, 30, 31}, {4, 2})}});
    const Tensor ids = tensor_i64({1, 3, 1, 1}, {2, 2});
    const Tensor rows = emb.forward(ids);
    backward(sum(rows));
    std::cout << "embedding(ids [[1,3],[1,1]]) shape " << shape_str(rows.shape()) << "\n"
              << rows << "\nd weight =\n"
              << emb.weight.grad() << "\n";
  } else if (what == "embedding-errors") {
    nn::Embedding emb(4, 2);
    print_error([&] { (void)emb.forward(tensor_i64({0, 4}, {2})); });
    print_error([&] { (void)emb.forward(tensor_i64({-1}, {1})); });
    print_error([&] { (void)emb.forward(tensor({0, 1})); });
  } else {
    std::cerr << "usage: snippet_ch06_linear_embedding strides | linear-backward | embedding | embedding-errors\n";
    return 2;
  }
  return 0;
}
