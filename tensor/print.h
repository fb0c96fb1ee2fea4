// Printing tensors the way PyTorch does:
//   tensor([[ 1.0000, -2.5000],
//           [ 3.0000,  4.0000]], dtype=torch.float64, requires_grad=True)
// Large tensors (more than 1000 elements) are summarised with "..." and the
// first and last three entries of each dim; rows wrap at 80 columns.
#pragma once

#include <ostream>
#include <string>

#include <fmt/format.h>

#include "tensor/tensor.h"

namespace ropegrad {

std::string to_string(const Tensor& t);
std::ostream& operator<<(std::ostream& os, const Tensor& t);

// Name of the op that made a tensor, as printed in grad_fn=<...>; set by
// autograd/ (the tensor layer does not know ops).
using GradFnNamer = std::string (*)(const Tensor&);
void set_grad_fn_namer(GradFnNamer namer);

}  // namespace ropegrad

template <>
struct fmt::formatter<ropegrad::Tensor> : fmt::formatter<std::string> {
  template <typename Context>
  auto format(const ropegrad::Tensor& t, Context& ctx) const {
    return fmt::formatter<std::string>::format(ropegrad::to_string(t), ctx);
  }
};
