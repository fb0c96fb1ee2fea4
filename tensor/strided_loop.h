// The strided loop under every elementwise op and reduction.
//
// N operands share one iteration shape; each has a byte pointer and byte
// strides (0 where it is broadcast). Adjacent dims that are contiguous for
// every operand are merged ("coalesced"), so a contiguous tensor of any rank
// runs as one flat inner loop the compiler can vectorise. The callback gets
// the pointers of a run along the last dim, its length and the operands'
// strides in that run; it is called once per run, never per element.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <vector>

#include "tensor/shape.h"

namespace ropegrad::kernels {

template <size_t N>
struct StridedLoop {
  Shape shape;                        // coalesced iteration shape
  std::array<Shape, N> byte_strides;  // per operand, per dim
  std::array<std::byte*, N> base;
};

template <size_t N>
StridedLoop<N> make_loop(const Shape& shape, const std::array<std::byte*, N>& base,
                         const std::array<Shape, N>& byte_strides) {
  StridedLoop<N> loop;
  loop.base = base;
  // Drop size-1 dims, then merge dim i into i+1 when every operand steps
  // through dim i exactly as if the two were one dim.
  for (size_t d = 0; d < shape.size(); ++d) {
    if (shape[d] == 1) continue;
    bool merge = !loop.shape.empty();
    for (size_t k = 0; k < N && merge; ++k) {
      merge = loop.byte_strides[k].back() == byte_strides[k][d] * shape[d];
    }
    if (merge) {
      loop.shape.back() *= shape[d];
      for (size_t k = 0; k < N; ++k) loop.byte_strides[k].back() = byte_strides[k][d];
    } else {
      loop.shape.push_back(shape[d]);
      for (size_t k = 0; k < N; ++k) loop.byte_strides[k].push_back(byte_strides[k][d]);
    }
  }
  return loop;
}

// inner(std::array<std::byte*, N> ptrs, int64_t count, std::array<int64_t, N> strides)
template <size_t N, typename Inner>
void run_loop(const StridedLoop<N>& loop, Inner&& inner) {
  const size_t ndim = loop.shape.size();
  if (ndim == 0) {  // one element (or everything had size 1)
    inner(loop.base, int64_t{1}, std::array<int64_t, N>{});
    return;
  }
  for (int64_t s : loop.shape) {
    if (s == 0) return;
  }
  std::array<int64_t, N> inner_strides;
  for (size_t k = 0; k < N; ++k) inner_strides[k] = loop.byte_strides[k][ndim - 1];
  const int64_t inner_count = loop.shape[ndim - 1];

  std::vector<int64_t> counter(ndim, 0);  // index over the outer dims
  std::array<std::byte*, N> ptrs = loop.base;
  while (true) {
    inner(ptrs, inner_count, inner_strides);
    // Advance the outer counter like an odometer, updating pointers.
    int64_t d = static_cast<int64_t>(ndim) - 2;
    for (; d >= 0; --d) {
      if (++counter[d] < loop.shape[d]) {
        for (size_t k = 0; k < N; ++k) ptrs[k] += loop.byte_strides[k][d];
        break;
      }
      for (size_t k = 0; k < N; ++k) ptrs[k] -= loop.byte_strides[k][d] * (loop.shape[d] - 1);
      counter[d] = 0;
    }
    if (d < 0) return;
  }
}

}  // namespace ropegrad::kernels
