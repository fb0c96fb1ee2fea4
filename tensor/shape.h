// Shapes, strides and broadcasting: the arithmetic every op shares.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace ropegrad {

// Sizes of each dimension, outermost first (PyTorch order).
using Shape = std::vector<int64_t>;

// Product of the sizes; 1 for a 0-d (scalar) shape.
int64_t numel_of(const Shape& shape);

// Row-major strides in elements: the last dimension has stride 1.
Shape contiguous_strides(const Shape& shape);

// "[2, 3]" — the form error messages and printing use.
std::string shape_str(const Shape& shape);

// Wraps a possibly negative dim into [0, ndim); throws Error naming `op`.
int64_t normalize_dim(int64_t dim, int64_t ndim, std::string_view op);

// NumPy/PyTorch broadcasting: align from the right, sizes must be equal or 1.
Shape broadcast_shapes(const Shape& a, const Shape& b, std::string_view op);

// Strides that read a tensor of (shape, strides) as if it had `target` shape:
// broadcast dims get stride 0. `target` must be a broadcast of `shape`.
Shape broadcast_strides(const Shape& shape, const Shape& strides, const Shape& target);

}  // namespace ropegrad
