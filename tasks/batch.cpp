#include "tasks/batch.h"
#include "tensor/exercise.h"

#include "io/token_memmap.h"
#include "tensor/kernels.h"

namespace ropegrad::nn {

std::pair<Tensor, Tensor> get_batch(const Tensor& tokens, int64_t batch_size,
                                    int64_t context_length, Generator& gen) {
  RG_CHECK(tokens.defined(), "get_batch", "tokens is an undefined tensor");
  RG_CHECK(tokens.dim() == 1, "get_batch", "tokens must be 1-D, got shape {}",
           shape_str(tokens.shape()));
  RG_CHECK(tokens.dtype() == DType::Int64, "get_batch",
           "tokens must be int64, got {} (uint16 or int32 ids: map their .npy with nn::TokenMemmap)",
           dtype_name(tokens.dtype()));
  RG_CHECK(batch_size >= 1, "get_batch", "batch_size must be >= 1, got {}", batch_size);
  RG_CHECK(context_length >= 1, "get_batch", "context_length must be >= 1, got {}", context_length);
  const int64_t n = tokens.numel();
  RG_CHECK(n >= context_length + 1, "get_batch",
           "{} tokens are too few for context_length {} (need at least {})", n, context_length,
           context_length + 1);
  // BEGIN EXERCISE ex13-get-batch
  const Tensor src = kernels::contiguous(tokens);
  const int64_t* data = src.data_ptr<int64_t>();
  Tensor x = Tensor::empty({batch_size, context_length}, DType::Int64);
  Tensor y = Tensor::empty({batch_size, context_length}, DType::Int64);
  int64_t* xd = x.data_ptr<int64_t>();
  int64_t* yd = y.data_ptr<int64_t>();
  for (int64_t b = 0; b < batch_size; ++b) {
    const int64_t start = gen.integer(0, n - context_length);  // in [0, n - T - 1]
    for (int64_t j = 0; j < context_length; ++j) {
      xd[b * context_length + j] = data[start + j];
      yd[b * context_length + j] = data[start + j + 1];
    }
  }
  return {x, y};
  // END EXERCISE ex13-get-batch
}

std::pair<Tensor, Tensor> get_batch(const TokenMemmap& tokens, int64_t batch_size,
                                    int64_t context_length, Generator& gen) {
  return tokens.get_batch(batch_size, context_length, gen);
}

}  // namespace ropegrad::nn
