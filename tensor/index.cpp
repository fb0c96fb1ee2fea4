// Indexing kernels: index_select / index_add (Embedding and its backward),
// gather / scatter_add (cross-entropy and its backward), cat.
#include <cstring>

#include "tensor/kernels.h"

namespace ropegrad::kernels {

namespace {

void check_index_tensor(const Tensor& index, const char* op) {
  RG_CHECK(index.dtype() == DType::Int64, op, "index must be int64, got {}",
           dtype_name(index.dtype()));
}

// View of t as (outer, size(dim), inner), contiguous.
struct ThreeD {
  Tensor t;
  int64_t outer, n, inner;
};
ThreeD as_3d(const Tensor& t, int64_t dim) {
  ThreeD r{contiguous(t), 1, t.dim() == 0 ? 1 : t.shape()[dim], 1};
  for (int64_t d = 0; d < dim; ++d) r.outer *= t.shape()[d];
  for (int64_t d = dim + 1; d < t.dim(); ++d) r.inner *= t.shape()[d];
  return r;
}

// Checks every id is in [0, n) before any memory is touched.
void check_ids_in_range(const int64_t* ids, int64_t count, int64_t n, const char* op, int64_t dim,
                        const Shape& shape) {
  for (int64_t i = 0; i < count; ++i) {
    RG_CHECK(ids[i] >= 0 && ids[i] < n, op,
             "index {} (at position {}) is out of range for dim {} of size {} (shape {})", ids[i],
             i, dim, n, shape_str(shape));
  }
}

}  // namespace

Tensor index_select(const Tensor& t, int64_t dim, const Tensor& index) {
  check_index_tensor(index, "index_select");
  RG_CHECK(index.dim() <= 1, "index_select", "index must be 1-D, got shape {}",
           shape_str(index.shape()));
  dim = normalize_dim(dim, t.dim(), "index_select");
  const Tensor ids = contiguous(index);
  const int64_t count = ids.numel();
  const ThreeD src = as_3d(t, dim);
  const int64_t* id = ids.data_ptr<int64_t>();
  check_ids_in_range(id, count, src.n, "index_select", dim, t.shape());
  Shape out_shape = t.shape();
  if (t.dim() > 0) out_shape[dim] = count;
  Tensor out = Tensor::empty(out_shape, t.dtype());
  const size_t row_bytes = static_cast<size_t>(src.inner) * element_size(t.dtype());
  const std::byte* s = src.t.raw_data();
  std::byte* o = out.raw_data();
  for (int64_t a = 0; a < src.outer; ++a) {
    for (int64_t i = 0; i < count; ++i) {
      std::memcpy(o + (a * count + i) * row_bytes, s + (a * src.n + id[i]) * row_bytes, row_bytes);
    }
  }
  return out;
}

Tensor index_add(const Shape& shape, int64_t dim, const Tensor& index, const Tensor& src) {
  check_index_tensor(index, "index_add");
  dim = normalize_dim(dim, static_cast<int64_t>(shape.size()), "index_add");
  const Tensor ids = contiguous(index);
  const int64_t count = ids.numel();
  Shape expected = shape;
  if (!shape.empty()) expected[dim] = count;
  RG_CHECK(src.shape() == expected, "index_add", "source has shape {}, expected {}",
           shape_str(src.shape()), shape_str(expected));
  Tensor out = Tensor::zeros_of(shape, src.dtype());
  const ThreeD in = as_3d(src, dim);
  const int64_t n = shape.empty() ? 1 : shape[dim];
  const int64_t* id = ids.data_ptr<int64_t>();
  check_ids_in_range(id, count, n, "index_add", dim, shape);
  dispatch_numeric(src.dtype(), "index_add", [&](auto tag) {
    using T = decltype(tag);
    const T* s = in.t.data_ptr<T>();
    T* o = out.data_ptr<T>();
    for (int64_t a = 0; a < in.outer; ++a) {
      for (int64_t i = 0; i < count; ++i) {
        T* dst = o + (a * n + id[i]) * in.inner;  // repeated ids accumulate
        const T* row = s + (a * count + i) * in.inner;
        for (int64_t k = 0; k < in.inner; ++k) dst[k] += row[k];
      }
    }
  });
  return out;
}

namespace {
// Shared walk of gather/scatter_add: for every position p of `index`,
// calls fn(offset into index/src, offset into the dim-indexed tensor).
template <typename Fn>
void walk_index(const Tensor& index, const Shape& target_shape, int64_t dim, const char* op,
                Fn fn) {
  const int64_t ndim = index.dim();
  const Shape target_strides = contiguous_strides(target_shape);
  const int64_t* id = index.data_ptr<int64_t>();  // contiguous
  const int64_t n = index.numel();
  std::vector<int64_t> pos(ndim, 0);
  for (int64_t flat = 0; flat < n; ++flat) {
    const int64_t j = id[flat];
    const int64_t size = ndim == 0 ? 1 : target_shape[dim];
    RG_CHECK(j >= 0 && j < size, op,
             "index {} is out of range for dim {} of size {} (shape {})", j, dim, size,
             shape_str(target_shape));
    int64_t off = 0;
    for (int64_t d = 0; d < ndim; ++d) off += (d == dim ? j : pos[d]) * target_strides[d];
    fn(flat, off);
    for (int64_t d = ndim - 1; d >= 0; --d) {  // odometer over index's shape
      if (++pos[d] < index.shape()[d]) break;
      pos[d] = 0;
    }
  }
}

void check_gather_shapes(const Shape& target, int64_t dim, const Tensor& index, const char* op) {
  RG_CHECK(index.dim() == static_cast<int64_t>(target.size()), op,
           "index has {} dims but the tensor has {} (shapes {} and {})", index.dim(), target.size(),
           shape_str(index.shape()), shape_str(target));
  for (int64_t d = 0; d < index.dim(); ++d) {
    RG_CHECK(d == dim || index.shape()[d] <= target[d], op,
             "index shape {} is larger than the tensor's shape {} in dim {}",
             shape_str(index.shape()), shape_str(target), d);
  }
}
}  // namespace

Tensor gather(const Tensor& t, int64_t dim, const Tensor& index) {
  check_index_tensor(index, "gather");
  dim = normalize_dim(dim, t.dim(), "gather");
  check_gather_shapes(t.shape(), dim, index, "gather");
  const Tensor src = contiguous(t);
  const Tensor ids = contiguous(index);
  Tensor out = Tensor::empty(index.shape(), t.dtype());
  dispatch_all(t.dtype(), [&](auto tag) {
    using T = decltype(tag);
    const T* s = src.data_ptr<T>();
    T* o = out.data_ptr<T>();
    walk_index(ids, t.shape(), dim, "gather", [&](int64_t at, int64_t from) { o[at] = s[from]; });
  });
  return out;
}

Tensor scatter_add(const Shape& shape, int64_t dim, const Tensor& index, const Tensor& src) {
  check_index_tensor(index, "scatter_add");
  dim = normalize_dim(dim, static_cast<int64_t>(shape.size()), "scatter_add");
  check_gather_shapes(shape, dim, index, "scatter_add");
  RG_CHECK(src.shape() == index.shape(), "scatter_add", "source shape {} differs from index shape {}",
           shape_str(src.shape()), shape_str(index.shape()));
  const Tensor s = contiguous(src);
  const Tensor ids = contiguous(index);
  Tensor out = Tensor::zeros_of(shape, src.dtype());
  dispatch_numeric(src.dtype(), "scatter_add", [&](auto tag) {
    using T = decltype(tag);
    const T* sp = s.data_ptr<T>();
    T* o = out.data_ptr<T>();
    walk_index(ids, shape, dim, "scatter_add", [&](int64_t at, int64_t to) { o[to] += sp[at]; });
  });
  return out;
}

Tensor cat(const std::vector<Tensor>& tensors, int64_t dim) {
  RG_CHECK(!tensors.empty(), "cat", "expected a non-empty list of tensors");
  const Tensor& first = tensors[0];
  RG_CHECK(first.dim() > 0, "cat", "zero-dimensional tensors cannot be concatenated");
  dim = normalize_dim(dim, first.dim(), "cat");
  Shape out_shape = first.shape();
  out_shape[dim] = 0;
  DType dtype = first.dtype();
  for (size_t i = 0; i < tensors.size(); ++i) {
    const Tensor& t = tensors[i];
    RG_CHECK(t.dim() == first.dim(), "cat",
             "tensor {} has {} dims but tensor 0 has {} (shapes {} and {})", i, t.dim(),
             first.dim(), shape_str(t.shape()), shape_str(first.shape()));
    for (int64_t d = 0; d < t.dim(); ++d) {
      RG_CHECK(d == dim || t.shape()[d] == first.shape()[d], "cat",
               "sizes must match except in dim {}: tensor {} has shape {}, tensor 0 has {}", dim,
               i, shape_str(t.shape()), shape_str(first.shape()));
    }
    out_shape[dim] += t.shape()[dim];
    dtype = promote_types(dtype, t.dtype());
  }
  Tensor out = Tensor::empty(out_shape, dtype);
  int64_t at = 0;
  for (const Tensor& t : tensors) {
    copy_into(narrow(out, dim, at, t.shape()[dim]), t);
    at += t.shape()[dim];
  }
  return out;
}

}  // namespace ropegrad::kernels
