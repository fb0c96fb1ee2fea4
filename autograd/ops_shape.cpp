// Views and shape ops. A view's backward puts the gradient back into the
// input's layout: reshape it, permute it back, or write it into the slice it
// came from inside a zero tensor.
#include "autograd/ops.h"

namespace ropegrad {

namespace {

// Records a view op whose backward is `back(grad)`.
template <typename Back>
Tensor record_view(const Tensor& x, Tensor out, const char* name, Back back) {
  if (needs_grad({&x})) {
    attach_node(out, name, {x}, [back](const Tensor& g, const NeedsGrad&) -> Grads { return {back(g)}; });
  }
  return out;
}

// A zero tensor of `shape` with g written into the part that `take` selects:
// the backward of narrow, slice and select.
template <typename Take>
Tensor scatter_into_zeros(const Tensor& g, const Shape& shape, Take take) {
  Tensor z = zeros(shape, g.dtype());
  kernels::copy_into(take(z), g);
  return z;
}

}  // namespace

Tensor view(const Tensor& x, Shape shape) {
  return record_view(x, kernels::view(x, std::move(shape)), "view",
                     [s = x.shape()](const Tensor& g) { return kernels::reshape(g, s); });
}

Tensor reshape(const Tensor& x, Shape shape) {
  return record_view(x, kernels::reshape(x, std::move(shape)), "reshape",
                     [s = x.shape()](const Tensor& g) { return kernels::reshape(g, s); });
}

Tensor permute(const Tensor& x, const std::vector<int64_t>& dims) {
  Tensor out = kernels::permute(x, dims);
  std::vector<int64_t> inverse(dims.size());
  for (size_t i = 0; i < dims.size(); ++i) inverse[normalize_dim(dims[i], x.dim(), "permute")] = static_cast<int64_t>(i);
  return record_view(x, out, "permute", [inverse](const Tensor& g) { return kernels::permute(g, inverse); });
}

Tensor transpose(const Tensor& x, int64_t dim0, int64_t dim1) {
  return record_view(x, kernels::transpose(x, dim0, dim1), "transpose",
                     [dim0, dim1](const Tensor& g) { return kernels::transpose(g, dim0, dim1); });
}

Tensor narrow(const Tensor& x, int64_t dim, int64_t start, int64_t length) {
  return record_view(x, kernels::narrow(x, dim, start, length), "narrow",
                     [s = x.shape(), dim, start, length](const Tensor& g) {
                       return scatter_into_zeros(g, s, [&](const Tensor& z) { return kernels::narrow(z, dim, start, length); });
                     });
}

Tensor slice(const Tensor& x, int64_t dim, int64_t start, int64_t end, int64_t step) {
  return record_view(x, kernels::slice(x, dim, start, end, step), "slice",
                     [s = x.shape(), dim, start, end, step](const Tensor& g) {
                       return scatter_into_zeros(g, s, [&](const Tensor& z) { return kernels::slice(z, dim, start, end, step); });
                     });
}

Tensor select(const Tensor& x, int64_t dim, int64_t index) {
  return record_view(x, kernels::select(x, dim, index), "select",
                     [s = x.shape(), dim, index](const Tensor& g) {
                       return scatter_into_zeros(g, s, [&](const Tensor& z) { return kernels::select(z, dim, index); });
                     });
}

// An expanded input was read many times: sum its gradient back.
Tensor expand(const Tensor& x, const Shape& shape) {
  return record_view(x, kernels::expand(x, shape), "expand",
                     [s = x.shape()](const Tensor& g) { return kernels::sum_to(g, s); });
}

Tensor squeeze(const Tensor& x) {
  return record_view(x, kernels::squeeze(x), "squeeze",
                     [s = x.shape()](const Tensor& g) { return kernels::reshape(g, s); });
}

Tensor squeeze(const Tensor& x, int64_t dim) {
  return record_view(x, kernels::squeeze(x, dim), "squeeze",
                     [s = x.shape()](const Tensor& g) { return kernels::reshape(g, s); });
}

Tensor unsqueeze(const Tensor& x, int64_t dim) {
  return record_view(x, kernels::unsqueeze(x, dim), "unsqueeze",
                     [s = x.shape()](const Tensor& g) { return kernels::reshape(g, s); });
}

Tensor flatten(const Tensor& x, int64_t start_dim, int64_t end_dim) {
  return record_view(x, kernels::flatten(x, start_dim, end_dim), "flatten",
                     [s = x.shape()](const Tensor& g) { return kernels::reshape(g, s); });
}

Tensor contiguous(const Tensor& x) {
  if (x.is_contiguous()) return x;
  return record_view(x, kernels::clone(x), "contiguous", [](const Tensor& g) { return g; });
}

Tensor clone(const Tensor& x) {
  return record_view(x, kernels::clone(x), "clone", [](const Tensor& g) { return g; });
}

// A cast passes the gradient through; the engine casts it back to x's dtype.
Tensor to(const Tensor& x, DType dtype) {
  if (x.dtype() == dtype) return x;
  RG_CHECK(!x.requires_grad() || is_floating(dtype) || !grad_enabled(), "to",
           "casting a tensor that requires grad to {} would cut the gradient; detach() it first",
           dtype_name(dtype));
  return record_view(x, kernels::to(x, dtype), "to", [](const Tensor& g) { return g; });
}

// cat: each input's gradient is its own slice of the output's gradient.
Tensor cat(const std::vector<Tensor>& tensors, int64_t dim) {
  Tensor out = kernels::cat(tensors, dim);
  if (needs_grad(tensors)) {
    const int64_t d = normalize_dim(dim, tensors[0].dim(), "cat");
    std::vector<int64_t> sizes;
    for (const Tensor& t : tensors) sizes.push_back(t.shape()[d]);
    attach_node(out, "cat", tensors, [sizes, d](const Tensor& g, const NeedsGrad& needs) -> Grads {
      Grads grads(sizes.size());
      int64_t at = 0;
      for (size_t i = 0; i < sizes.size(); ++i) {
        if (needs[i]) grads[i] = kernels::narrow(g, d, at, sizes[i]);
        at += sizes[i];
      }
      return grads;
    });
  }
  return out;
}

Tensor stack(const std::vector<Tensor>& tensors, int64_t dim) {
  RG_CHECK(!tensors.empty(), "stack", "expected a non-empty list of tensors");
  for (size_t i = 1; i < tensors.size(); ++i) {
    RG_CHECK(tensors[i].shape() == tensors[0].shape(), "stack",
             "all tensors must have the same shape: tensor {} has {}, tensor 0 has {}", i,
             shape_str(tensors[i].shape()), shape_str(tensors[0].shape()));
  }
  const int64_t d = normalize_dim(dim, tensors[0].dim() + 1, "stack");
  std::vector<Tensor> expanded;
  for (const Tensor& t : tensors) expanded.push_back(unsqueeze(t, d));
  return cat(expanded, d);
}

std::vector<Tensor> split(const Tensor& x, int64_t split_size, int64_t dim) {
  RG_CHECK(split_size > 0, "split", "split_size must be positive, got {}", split_size);
  RG_CHECK(x.dim() > 0, "split", "cannot split a 0-d tensor");
  const int64_t d = normalize_dim(dim, x.dim(), "split");
  std::vector<Tensor> pieces;
  for (int64_t at = 0, n = x.shape()[d]; at < n || (n == 0 && pieces.empty()); at += split_size) {
    pieces.push_back(narrow(x, d, at, std::min(split_size, n - at)));
  }
  return pieces;
}

std::vector<Tensor> chunk(const Tensor& x, int64_t chunks, int64_t dim) {
  RG_CHECK(chunks > 0, "chunk", "chunks must be positive, got {}", chunks);
  RG_CHECK(x.dim() > 0, "chunk", "cannot chunk a 0-d tensor");
  const int64_t n = x.shape()[normalize_dim(dim, x.dim(), "chunk")];
  return split(x, std::max<int64_t>(1, (n + chunks - 1) / chunks), dim);
}

}  // namespace ropegrad
