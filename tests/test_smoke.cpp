#include <gtest/gtest.h>

#include "autograd/ops.h"

using namespace ropegrad;

TEST(Smoke, AddBackward) {
  Tensor a = tensor({1, 2, 3}, DType::Float64).requires_grad_();
  Tensor b = tensor({4, 5, 6}, DType::Float64).requires_grad_();
  Tensor y = sum(a * b);
  backward(y);
  EXPECT_EQ(a.grad().to_vector<double>(), (std::vector<double>{4, 5, 6}));
}
