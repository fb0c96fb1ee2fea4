// Indexing ops. Reading x at some indices means the gradient is *added* back
// at those indices (a row read twice gets two gradients).
#include "autograd/ops.h"
#include "tensor/exercise.h"

namespace ropegrad {

Tensor index_select(const Tensor& x, int64_t dim, const Tensor& index) {
  Tensor out = kernels::index_select(x, dim, index);
  if (needs_grad({&x})) {
    attach_node(out, "index_select", {x},
                [shape = x.shape(), dim, si = SavedTensor(index, "index_select")](const Tensor& g, const NeedsGrad&) -> Grads {
                  // BEGIN EXERCISE ex06-embedding
                  return {kernels::index_add(shape, dim, si.unpack(), kernels::contiguous(g))};
                  // END EXERCISE ex06-embedding
                });
  }
  return out;
}

Tensor embedding(const Tensor& ids, const Tensor& weight) {
  RG_CHECK(weight.dim() == 2, "embedding", "weight must be 2-D (num_embeddings, dim), got shape {}",
           shape_str(weight.shape()));
  RG_CHECK(ids.dtype() == DType::Int64, "embedding", "ids must be int64, got {}", dtype_name(ids.dtype()));
  const Tensor flat = kernels::contiguous(kernels::reshape(ids, {-1}));
  // BEGIN EXERCISE ex06-embedding
  const int64_t vocab = weight.shape()[0];
  const int64_t* p = flat.data_ptr<int64_t>();
  for (int64_t i = 0; i < flat.numel(); ++i) {
    RG_CHECK(p[i] >= 0 && p[i] < vocab, "embedding",
             "id {} (at flat position {} of ids with shape {}) is out of range for {} embeddings", p[i], i,
             shape_str(ids.shape()), vocab);
  }
  Shape out_shape = ids.shape();
  out_shape.push_back(weight.shape()[1]);
  return view(index_select(weight, 0, flat), out_shape);
  // END EXERCISE ex06-embedding
}

Tensor gather(const Tensor& x, int64_t dim, const Tensor& index) {
  Tensor out = kernels::gather(x, dim, index);
  if (needs_grad({&x})) {
    attach_node(out, "gather", {x},
                [shape = x.shape(), dim, si = SavedTensor(index, "gather")](const Tensor& g, const NeedsGrad&) -> Grads {
                  return {kernels::scatter_add(shape, dim, si.unpack(), g)};
                });
  }
  return out;
}

}  // namespace ropegrad
