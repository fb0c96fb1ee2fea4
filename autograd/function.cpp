#include "autograd/function.h"

namespace ropegrad {

void FunctionCtx::save_for_backward(const std::vector<Tensor>& tensors) {
  saved_.clear();
  for (const Tensor& t : tensors) saved_.emplace_back(t, name_);
}

std::vector<Tensor> FunctionCtx::saved_tensors() const {
  std::vector<Tensor> out;
  for (const SavedTensor& s : saved_) out.push_back(s.unpack());
  return out;
}

}  // namespace ropegrad
