// Views: new shape/strides/offset over the same storage, never a copy.
#include <algorithm>
#include <numeric>

#include "tensor/kernels.h"

namespace ropegrad::kernels {

Tensor as_strided(const Tensor& t, Shape shape, Shape strides, int64_t offset) {
  Tensor out = Tensor::from_storage(t.storage(), std::move(shape), std::move(strides), offset,
                                    t.dtype());
  return out;
}

Shape infer_shape(Shape shape, int64_t numel, std::string_view op) {
  int64_t infer_at = -1;
  int64_t known = 1;
  for (size_t i = 0; i < shape.size(); ++i) {
    if (shape[i] == -1) {
      RG_CHECK(infer_at < 0, op, "only one dimension can be -1 in shape {}", shape_str(shape));
      infer_at = static_cast<int64_t>(i);
    } else {
      RG_CHECK(shape[i] >= 0, op, "invalid size {} in shape {}", shape[i], shape_str(shape));
      known *= shape[i];
    }
  }
  if (infer_at >= 0) {
    RG_CHECK(known != 0 && numel % known == 0, op,
             "shape {} is invalid for input of size {}", shape_str(shape), numel);
    shape[infer_at] = numel / known;
  }
  RG_CHECK(numel_of(shape) == numel, op, "shape {} is invalid for input of size {}",
           shape_str(shape), numel);
  return shape;
}

namespace {
// Strides for viewing (old_shape, old_strides) as new_shape without copying,
// or nullopt when the memory layout cannot express it. Each run of old dims
// that is contiguous within itself can be re-split freely (PyTorch's rule).
std::optional<Shape> view_strides(const Shape& old_shape, const Shape& old_strides,
                                  const Shape& new_shape) {
  Shape new_strides(new_shape.size());
  if (numel_of(old_shape) == 0 || old_shape.empty()) return contiguous_strides(new_shape);
  int64_t view_d = static_cast<int64_t>(new_shape.size()) - 1;
  int64_t chunk_base_stride = old_strides.empty() ? 1 : old_strides.back();
  int64_t tensor_numel = 1;
  int64_t view_numel = 1;
  for (int64_t d = static_cast<int64_t>(old_shape.size()) - 1; d >= 0; --d) {
    tensor_numel *= old_shape[d];
    // End of a contiguous chunk of old dims: fill the new dims it covers.
    if (d == 0 || (old_shape[d - 1] != 1 &&
                   old_strides[d - 1] != tensor_numel * chunk_base_stride)) {
      while (view_d >= 0 && (view_numel < tensor_numel || new_shape[view_d] == 1)) {
        new_strides[view_d] = view_numel * chunk_base_stride;
        view_numel *= new_shape[view_d];
        --view_d;
      }
      if (view_numel != tensor_numel) return std::nullopt;
      if (d > 0) {
        chunk_base_stride = old_strides[d - 1];
        tensor_numel = 1;
        view_numel = 1;
      }
    }
  }
  if (view_d != -1) return std::nullopt;
  return new_strides;
}
}  // namespace

Tensor view(const Tensor& t, Shape shape) {
  shape = infer_shape(std::move(shape), t.numel(), "view");
  auto strides = view_strides(t.shape(), t.strides(), shape);
  RG_CHECK(strides.has_value(), "view",
           "cannot view a tensor of shape {} with strides {} as {}: its memory is not laid out "
           "for that; use reshape() (which copies) or contiguous() first",
           shape_str(t.shape()), shape_str(t.strides()), shape_str(shape));
  return as_strided(t, shape, *strides, t.offset());
}

Tensor reshape(const Tensor& t, Shape shape) {
  shape = infer_shape(std::move(shape), t.numel(), "reshape");
  if (auto strides = view_strides(t.shape(), t.strides(), shape)) {
    return as_strided(t, shape, *strides, t.offset());
  }
  return view(clone(t), shape);
}

Tensor permute(const Tensor& t, const std::vector<int64_t>& dims) {
  const int64_t n = t.dim();
  RG_CHECK(static_cast<int64_t>(dims.size()) == n, "permute",
           "got {} dims {} for a tensor of {} dimensions (shape {})", dims.size(),
           shape_str(dims), n, shape_str(t.shape()));
  Shape shape(n), strides(n);
  std::vector<bool> seen(n, false);
  for (int64_t i = 0; i < n; ++i) {
    const int64_t d = normalize_dim(dims[i], n, "permute");
    RG_CHECK(!seen[d], "permute", "dim {} repeated in {}", d, shape_str(dims));
    seen[d] = true;
    shape[i] = t.shape()[d];
    strides[i] = t.strides()[d];
  }
  return as_strided(t, shape, strides, t.offset());
}

Tensor transpose(const Tensor& t, int64_t dim0, int64_t dim1) {
  const int64_t n = t.dim();
  if (n == 0) return as_strided(t, t.shape(), t.strides(), t.offset());
  dim0 = normalize_dim(dim0, n, "transpose");
  dim1 = normalize_dim(dim1, n, "transpose");
  Shape shape = t.shape(), strides = t.strides();
  std::swap(shape[dim0], shape[dim1]);
  std::swap(strides[dim0], strides[dim1]);
  return as_strided(t, shape, strides, t.offset());
}

Tensor narrow(const Tensor& t, int64_t dim, int64_t start, int64_t length) {
  RG_CHECK(t.dim() > 0, "narrow", "cannot narrow a 0-d tensor");
  dim = normalize_dim(dim, t.dim(), "narrow");
  const int64_t size = t.shape()[dim];
  if (start < 0) start += size;
  RG_CHECK(start >= 0 && length >= 0 && start + length <= size, "narrow",
           "start {} + length {} is out of range for dim {} of size {} (shape {})", start, length,
           dim, size, shape_str(t.shape()));
  Shape shape = t.shape();
  shape[dim] = length;
  return as_strided(t, shape, t.strides(), t.offset() + start * t.strides()[dim]);
}

Tensor slice(const Tensor& t, int64_t dim, int64_t start, int64_t end, int64_t step) {
  RG_CHECK(t.dim() > 0, "slice", "cannot slice a 0-d tensor");
  RG_CHECK(step > 0, "slice", "step must be positive, got {}", step);
  dim = normalize_dim(dim, t.dim(), "slice");
  const int64_t size = t.shape()[dim];
  // Python semantics: negative bounds count from the end, then clamp.
  if (start < 0) start += size;
  if (end < 0) end += size;
  start = std::clamp<int64_t>(start, 0, size);
  end = std::clamp<int64_t>(end, start, size);
  Shape shape = t.shape(), strides = t.strides();
  shape[dim] = (end - start + step - 1) / step;
  strides[dim] *= step;
  return as_strided(t, shape, strides, t.offset() + start * t.strides()[dim]);
}

Tensor select(const Tensor& t, int64_t dim, int64_t index) {
  RG_CHECK(t.dim() > 0, "select", "cannot select from a 0-d tensor");
  dim = normalize_dim(dim, t.dim(), "select");
  const int64_t size = t.shape()[dim];
  RG_CHECK(index >= -size && index < size, "select",
           "index {} is out of range for dim {} of size {} (shape {})", index, dim, size,
           shape_str(t.shape()));
  if (index < 0) index += size;
  Shape shape = t.shape(), strides = t.strides();
  shape.erase(shape.begin() + dim);
  strides.erase(strides.begin() + dim);
  return as_strided(t, shape, strides, t.offset() + index * t.strides()[dim]);
}

Tensor expand(const Tensor& t, const Shape& target) {
  RG_CHECK(target.size() >= t.shape().size(), "expand",
           "the target shape {} has fewer dims than the tensor's shape {}", shape_str(target),
           shape_str(t.shape()));
  const size_t lead = target.size() - t.shape().size();
  Shape shape(target.size()), strides(target.size());
  for (size_t i = 0; i < target.size(); ++i) {
    if (i < lead) {
      RG_CHECK(target[i] >= 0, "expand", "new leading dim {} must have a size >= 0 in {}", i,
               shape_str(target));
      shape[i] = target[i];
      strides[i] = 0;
      continue;
    }
    const int64_t have = t.shape()[i - lead];
    const int64_t want = target[i] == -1 ? have : target[i];
    RG_CHECK(have == want || have == 1, "expand",
             "cannot expand shape {} to {}: dim {} has size {} (only size-1 dims expand)",
             shape_str(t.shape()), shape_str(target), i, have);
    shape[i] = want;
    strides[i] = (have == want) ? t.strides()[i - lead] : 0;
  }
  return as_strided(t, shape, strides, t.offset());
}

Tensor squeeze(const Tensor& t) {
  Shape shape, strides;
  for (int64_t i = 0; i < t.dim(); ++i) {
    if (t.shape()[i] == 1) continue;
    shape.push_back(t.shape()[i]);
    strides.push_back(t.strides()[i]);
  }
  return as_strided(t, shape, strides, t.offset());
}

Tensor squeeze(const Tensor& t, int64_t dim) {
  if (t.dim() == 0) return as_strided(t, {}, {}, t.offset());
  dim = normalize_dim(dim, t.dim(), "squeeze");
  if (t.shape()[dim] != 1) return as_strided(t, t.shape(), t.strides(), t.offset());  // as torch
  Shape shape = t.shape(), strides = t.strides();
  shape.erase(shape.begin() + dim);
  strides.erase(strides.begin() + dim);
  return as_strided(t, shape, strides, t.offset());
}

Tensor unsqueeze(const Tensor& t, int64_t dim) {
  dim = normalize_dim(dim, t.dim() + 1, "unsqueeze");
  Shape shape = t.shape(), strides = t.strides();
  // The new dim's stride is irrelevant (size 1); pick the contiguous value.
  const int64_t stride = dim < t.dim() ? t.shape()[dim] * t.strides()[dim] : 1;
  shape.insert(shape.begin() + dim, 1);
  strides.insert(strides.begin() + dim, stride);
  return as_strided(t, shape, strides, t.offset());
}

Tensor flatten(const Tensor& t, int64_t start_dim, int64_t end_dim) {
  if (t.dim() == 0) return reshape(t, {1});
  start_dim = normalize_dim(start_dim, t.dim(), "flatten");
  end_dim = normalize_dim(end_dim, t.dim(), "flatten");
  RG_CHECK(start_dim <= end_dim, "flatten", "start_dim {} must not come after end_dim {}",
           start_dim, end_dim);
  Shape shape(t.shape().begin(), t.shape().begin() + start_dim);
  int64_t merged = 1;
  for (int64_t d = start_dim; d <= end_dim; ++d) merged *= t.shape()[d];
  shape.push_back(merged);
  shape.insert(shape.end(), t.shape().begin() + end_dim + 1, t.shape().end());
  return reshape(t, shape);
}

}  // namespace ropegrad::kernels
