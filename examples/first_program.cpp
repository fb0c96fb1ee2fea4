#include "autograd/ops.h"
using namespace ropegrad;

int main() {
  Tensor w = randn({3, 4}, DType::Float64).requires_grad_();  // (d_out, d_in)
  Tensor x = randn({2, 4}, DType::Float64);                   // (B, d_in)
  Tensor loss = mean(tanh(matmul(x, transpose(w, 0, 1))));    // y = x W^T
  backward(loss);
  fmt::print("{}\n", w.grad());                               // (3, 4)
}
