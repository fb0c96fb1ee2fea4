// Reductions (sum, max, min over any dims), sum_to, and max/argmax along one
// dim. softmax / log_softmax and their backward kernels: tensor/softmax.cpp.
#include <algorithm>
#include <cmath>
#include <limits>

#include "tensor/elementwise.h"
#include "tensor/exercise.h"
#include "tensor/kernels.h"
#include "tensor/parallel.h"

namespace ropegrad::kernels {

std::vector<int64_t> reduction_dims(const std::vector<int64_t>& dims, int64_t ndim,
                                    std::string_view op) {
  std::vector<int64_t> out;
  if (dims.empty()) {
    for (int64_t d = 0; d < ndim; ++d) out.push_back(d);
    return out;
  }
  for (int64_t d : dims) {
    const int64_t nd = normalize_dim(d, ndim, op);
    RG_CHECK(std::find(out.begin(), out.end(), nd) == out.end(), op,
             "dim {} appears more than once in the reduction dims", nd);
    out.push_back(nd);
  }
  if (ndim == 0) out.clear();  // dim 0 / -1 of a 0-d tensor reduces nothing
  std::sort(out.begin(), out.end());
  return out;
}

Shape reduced_shape(const Shape& shape, const std::vector<int64_t>& dims, bool keepdim) {
  Shape out;
  for (int64_t d = 0; d < static_cast<int64_t>(shape.size()); ++d) {
    const bool reduced = std::find(dims.begin(), dims.end(), d) != dims.end();
    if (!reduced) out.push_back(shape[d]);
    else if (keepdim) out.push_back(1);
  }
  return out;
}

namespace {

// Accumulates `t` (dtype In) into a contiguous accumulator of keepdim shape
// (dtype Acc): the accumulator is read with stride 0 along reduced dims, so
// one strided loop visits every input element once, in memory order.
template <typename Acc, typename In, typename Combine>
void accumulate(const Tensor& acc, const Tensor& t, Combine combine) {
  std::array<std::byte*, 2> base{acc.raw_data(), t.raw_data()};
  Shape acc_strides = broadcast_strides(acc.shape(), acc.strides(), t.shape());
  for (auto& s : acc_strides) s *= sizeof(Acc);
  Shape in_strides = t.strides();
  for (auto& s : in_strides) s *= sizeof(In);
  const StridedLoop<2> loop = make_loop<2>(t.shape(), base, {acc_strides, in_strides});
  const auto inner = [&](const std::array<std::byte*, 2>& p, int64_t n, const std::array<int64_t, 2>& st) {
    if (st[0] == 0) {  // reducing along the run: combine into one register
      Acc a = *reinterpret_cast<Acc*>(p[0]);
      if (st[1] == static_cast<int64_t>(sizeof(In))) {
        const In* x = reinterpret_cast<const In*>(p[1]);
        for (int64_t i = 0; i < n; ++i) a = combine(a, static_cast<Acc>(x[i]));
      } else {
        for (int64_t i = 0; i < n; ++i) {
          a = combine(a, static_cast<Acc>(*reinterpret_cast<const In*>(p[1] + i * st[1])));
        }
      }
      *reinterpret_cast<Acc*>(p[0]) = a;
      return;
    }
    for (int64_t i = 0; i < n; ++i) {
      Acc* a = reinterpret_cast<Acc*>(p[0] + i * st[0]);
      *a = combine(*a, static_cast<Acc>(*reinterpret_cast<const In*>(p[1] + i * st[1])));
    }
  };
  // When the outermost dim is not reduced (row sums of (B, H, T, T), say),
  // its parts go to the thread pool: each accumulator element then receives
  // all its terms inside one part, in the same order as on one thread, so
  // the result has the same bits. A reduced outermost dim stays on one thread.
  const int64_t total = t.numel();
  if (loop.shape.empty() || loop.shape[0] < 2 || loop.byte_strides[0][0] == 0 || total < 2 * kParallelGrain) {
    run_loop(loop, inner);
    return;
  }
  const int64_t outer = loop.shape[0];
  parallel_for(0, outer, std::max<int64_t>(1, kParallelGrain * outer / total), [&](int64_t lo, int64_t hi) {
    StridedLoop<2> part = loop;
    part.shape[0] = hi - lo;
    for (size_t k = 0; k < 2; ++k) part.base[k] += lo * loop.byte_strides[k][0];
    run_loop(part, inner);
  });
}

template <typename T>
T max_combine(T a, T b) {
  return (a != a || a > b) ? a : b;  // NaN propagates, as in torch.max
}
template <typename T>
T min_combine(T a, T b) {
  return (a != a || a < b) ? a : b;
}

}  // namespace

Tensor reduce(Reduce op, const Tensor& t, const std::vector<int64_t>& dims_in, bool keepdim) {
  const char* name = op == Reduce::Sum ? "sum" : (op == Reduce::Max ? "amax" : "amin");
  const std::vector<int64_t> dims = reduction_dims(dims_in, t.dim(), name);
  const Shape keep_shape = reduced_shape(t.shape(), dims, true);
  const Shape out_shape = reduced_shape(t.shape(), dims, keepdim);
  Tensor out;
  if (op == Reduce::Sum) {
    // Floats accumulate in double (precise sums of millions of float32s);
    // bool and int64 sum to int64, as in torch.
    if (is_floating(t.dtype())) {
      Tensor acc = Tensor::zeros_of(keep_shape, DType::Float64);
      dispatch_floating(t.dtype(), name, [&](auto tag) {
        accumulate<double, decltype(tag)>(acc, t, [](double a, double b) { return a + b; });
      });
      out = to(acc, t.dtype());
    } else {
      Tensor acc = Tensor::zeros_of(keep_shape, DType::Int64);
      dispatch_all(t.dtype(), [&](auto tag) {
        accumulate<int64_t, decltype(tag)>(acc, t, [](int64_t a, int64_t b) { return a + b; });
      });
      out = acc;
    }
  } else {
    for (int64_t d : dims) {
      RG_CHECK(t.shape()[d] > 0, name, "cannot reduce over dim {} of size 0 (shape {})", d,
               shape_str(t.shape()));
    }
    out = dispatch_numeric(t.dtype(), name, [&](auto tag) {
      using T = decltype(tag);
      const T init = op == Reduce::Max ? std::numeric_limits<T>::lowest()
                                       : std::numeric_limits<T>::max();
      Tensor acc = full(keep_shape, static_cast<double>(init), t.dtype());
      if constexpr (std::is_floating_point_v<T>) {
        // lowest() is finite; -inf inputs still need to win, so start at +-inf.
        fill(acc, op == Reduce::Max ? -std::numeric_limits<double>::infinity()
                                    : std::numeric_limits<double>::infinity());
      }
      if (op == Reduce::Max) accumulate<T, T>(acc, t, max_combine<T>);
      else accumulate<T, T>(acc, t, min_combine<T>);
      return acc;
    });
  }
  return view(out, out_shape);
}

Tensor sum_to(const Tensor& t, const Shape& shape) {
  if (t.shape() == shape) return t;
  RG_CHECK(broadcast_shapes(shape, t.shape(), "sum_to") == t.shape(), "sum_to",
           "shape {} is not a broadcast of {}", shape_str(t.shape()), shape_str(shape));
  // BEGIN EXERCISE ex02-sum-mean
  // Leading dims that broadcasting added, and dims where `shape` has size 1.
  const int64_t lead = t.dim() - static_cast<int64_t>(shape.size());
  std::vector<int64_t> dims;
  for (int64_t d = 0; d < t.dim(); ++d) {
    if (d < lead || (shape[d - lead] == 1 && t.shape()[d] != 1)) dims.push_back(d);
  }
  if (dims.empty()) return reshape(t, shape);
  return reshape(reduce(Reduce::Sum, t, dims, true), shape);
  // END EXERCISE ex02-sum-mean
}

// ---- along one dim ---------------------------------------------------------------------

namespace {
// Moves `dim` last and makes rows contiguous: (outer, n) with n = size(dim).
Tensor rows_last(const Tensor& t, int64_t dim) {
  return contiguous(transpose(t, dim, -1));
}
}  // namespace

std::pair<Tensor, Tensor> max_along(const Tensor& t, int64_t dim, bool keepdim, bool is_max, const char* op) {
  const char* name = op != nullptr ? op : (is_max ? "max" : "min");
  dim = normalize_dim(dim, t.dim(), name);
  if (t.dim() == 0) return {clone(t), zeros({}, DType::Int64)};
  const int64_t n = t.shape()[dim];
  RG_CHECK(n > 0, name, "cannot take the {} over dim {} of size 0 (shape {})", name, dim,
           shape_str(t.shape()));
  const Tensor rows = rows_last(t, dim);
  Shape row_shape = rows.shape();
  row_shape.back() = 1;
  Tensor values, indices = Tensor::empty(row_shape, DType::Int64);
  dispatch_numeric(t.dtype(), name, [&](auto tag) {
    using T = decltype(tag);
    values = Tensor::empty(row_shape, t.dtype());
    const T* x = rows.data_ptr<T>();
    T* v = values.data_ptr<T>();
    int64_t* idx = indices.data_ptr<int64_t>();
    for (int64_t r = 0, outer = rows.numel() / n; r < outer; ++r) {
      const T* row = x + r * n;
      int64_t best = 0;
      for (int64_t j = 1; j < n; ++j) {
        if (row[best] != row[best]) break;  // NaN is the max/min, as in torch
        const bool better = is_max ? (row[j] > row[best] || row[j] != row[j])
                                   : (row[j] < row[best] || row[j] != row[j]);
        if (better) best = j;
      }
      v[r] = row[best];
      idx[r] = best;
    }
  });
  // Rows were (..., 1) with dim moved last; move it back.
  values = transpose(values, dim, -1);
  indices = transpose(indices, dim, -1);
  if (!keepdim) {
    values = squeeze(values, dim);
    indices = squeeze(indices, dim);
  }
  return {contiguous(values), contiguous(indices)};
}

}  // namespace ropegrad::kernels
