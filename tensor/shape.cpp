#include "tensor/shape.h"

#include "tensor/error.h"

namespace ropegrad {

int64_t numel_of(const Shape& shape) {
  int64_t n = 1;
  for (int64_t s : shape) n *= s;
  return n;
}

Shape contiguous_strides(const Shape& shape) {
  Shape strides(shape.size());
  int64_t stride = 1;
  for (size_t i = shape.size(); i-- > 0;) {
    strides[i] = stride;
    // A shape such as (0, 2^62, 4) holds no element, yet its strides would
    // overflow int64: refuse it rather than wrap.
    RG_CHECK(!__builtin_mul_overflow(stride, std::max<int64_t>(shape[i], 1), &stride), "tensor",
             "shape {} is too large: its strides overflow int64", shape_str(shape));
  }
  return strides;
}

std::string shape_str(const Shape& shape) { return fmt::format("[{}]", fmt::join(shape, ", ")); }

int64_t normalize_dim(int64_t dim, int64_t ndim, std::string_view op) {
  // A 0-d tensor accepts dim 0 and -1, as in PyTorch.
  const int64_t range = std::max<int64_t>(ndim, 1);
  RG_CHECK(dim >= -range && dim < range, op,
           "dim {} is out of range for a tensor of {} dimension(s) (expected [{}, {}])", dim,
           ndim, -range, range - 1);
  return dim < 0 ? dim + range : dim;
}

Shape broadcast_shapes(const Shape& a, const Shape& b, std::string_view op) {
  const size_t ndim = std::max(a.size(), b.size());
  Shape out(ndim);
  for (size_t i = 0; i < ndim; ++i) {
    // Align from the right; missing leading dims act as size 1.
    const int64_t sa = i < ndim - a.size() ? 1 : a[i - (ndim - a.size())];
    const int64_t sb = i < ndim - b.size() ? 1 : b[i - (ndim - b.size())];
    RG_CHECK(sa == sb || sa == 1 || sb == 1, op,
             "shapes {} and {} cannot be broadcast together (dim {}: {} vs {})", shape_str(a),
             shape_str(b), i, sa, sb);
    out[i] = sa == 1 ? sb : sa;
  }
  return out;
}

Shape broadcast_strides(const Shape& shape, const Shape& strides, const Shape& target) {
  Shape out(target.size(), 0);
  const size_t lead = target.size() - shape.size();
  for (size_t i = 0; i < shape.size(); ++i) {
    out[lead + i] = (shape[i] == 1 && target[lead + i] != 1) ? 0 : strides[i];
  }
  return out;
}

}  // namespace ropegrad
