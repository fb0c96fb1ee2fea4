// Reductions and softmax: forward with a kernel, backward rule right below it.
#include <cmath>

#include "autograd/ops.h"
#include "tensor/elementwise.h"
#include "tensor/exercise.h"

namespace ropegrad {

using kernels::map_float;

namespace {

// A reduced gradient (keepdim or not) brought back to the input's shape as a
// broadcast view: every input element that fed an output gets its gradient.
// (sum's backward is exactly this; mean's scales it by 1 / count.)
Tensor expand_back(const Tensor& g, const Shape& input_shape, const std::vector<int64_t>& dims,
                   bool keepdim) {
  // BEGIN EXERCISE ex02-sum-mean
  Tensor kept = keepdim ? g : kernels::reshape(g, kernels::reduced_shape(input_shape, dims, true));
  return kernels::expand(kept, input_shape);
  // END EXERCISE ex02-sum-mean
}

}  // namespace

// d sum(x) / dx_i = 1: the gradient is the output's gradient, broadcast back.
Tensor sum(const Tensor& x, const std::vector<int64_t>& dims_in, bool keepdim) {
  const auto dims = kernels::reduction_dims(dims_in, x.dim(), "sum");
  Tensor out = kernels::reduce(kernels::Reduce::Sum, x, dims, keepdim);
  if (needs_grad({&x})) {
    attach_node(out, "sum", {x}, [shape = x.shape(), dims, keepdim](const Tensor& g, const NeedsGrad&) -> Grads {
      return {expand_back(g, shape, dims, keepdim)};
    });
  }
  return out;
}

// mean = sum / count, so each element gets grad / count.
Tensor mean(const Tensor& x, const std::vector<int64_t>& dims_in, bool keepdim) {
  RG_CHECK(x.is_floating_point(), "mean", "needs a floating-point tensor, got {}",
           dtype_name(x.dtype()));
  const auto dims = kernels::reduction_dims(dims_in, x.dim(), "mean");
  int64_t count = 1;
  for (int64_t d : dims) count *= x.shape()[d];
  RG_CHECK(count > 0, "mean", "mean over an empty dim of shape {} is undefined", shape_str(x.shape()));
  Tensor out = kernels::binary(kernels::Binary::Div, kernels::reduce(kernels::Reduce::Sum, x, dims, keepdim),
                               Scalar(static_cast<double>(count)));
  if (needs_grad({&x})) {
    attach_node(out, "mean", {x}, [shape = x.shape(), dims, keepdim, count](const Tensor& g, const NeedsGrad&) -> Grads {
      // BEGIN EXERCISE ex02-sum-mean
      const double inv = 1.0 / static_cast<double>(count);
      return {expand_back(map_float(g, [inv](auto v) { return v * inv; }), shape, dims, keepdim)};
      // END EXERCISE ex02-sum-mean
    });
  }
  return out;
}

// amax/amin: the gradient goes to the elements equal to the extremum, split
// evenly between ties (torch.amax's rule).
namespace {
Tensor extremum_over(const Tensor& x, const std::vector<int64_t>& dims_in, bool keepdim, bool is_max) {
  const char* name = is_max ? "amax" : "amin";
  const auto dims = kernels::reduction_dims(dims_in, x.dim(), name);
  Tensor out = kernels::reduce(is_max ? kernels::Reduce::Max : kernels::Reduce::Min, x, dims, keepdim);
  if (needs_grad({&x})) {
    attach_node(out, name, {x},
                [sx = SavedTensor(x, name), so = SavedTensor(out, name), dims, keepdim](
                    const Tensor& g, const NeedsGrad&) -> Grads {
                  const Tensor xv = sx.unpack();
                  const Tensor best = expand_back(so.unpack(), xv.shape(), dims, keepdim);
                  const Tensor is_best = kernels::to(kernels::binary(kernels::Binary::Eq, xv, best), xv.dtype());
                  const Tensor ties = kernels::reduce(kernels::Reduce::Sum, is_best, dims, true);
                  const Tensor g_keep = expand_back(g, xv.shape(), dims, keepdim);
                  return {map_float(g_keep, is_best, kernels::expand(ties, xv.shape()),
                                    [](auto gg, auto hit, auto n) { return gg * hit / n; })};
                });
  }
  return out;
}
}  // namespace

Tensor amax(const Tensor& x, const std::vector<int64_t>& dims, bool keepdim) {
  return extremum_over(x, dims, keepdim, true);
}
Tensor amin(const Tensor& x, const std::vector<int64_t>& dims, bool keepdim) {
  return extremum_over(x, dims, keepdim, false);
}
Tensor max(const Tensor& x) {
  RG_CHECK(x.numel() > 0, "max", "max of an empty tensor (shape {}) is undefined", shape_str(x.shape()));
  return amax(x, {}, false);
}
Tensor min(const Tensor& x) {
  RG_CHECK(x.numel() > 0, "min", "min of an empty tensor (shape {}) is undefined", shape_str(x.shape()));
  return amin(x, {}, false);
}

// max(x, dim): the gradient goes to the one element each index points at.
namespace {
std::pair<Tensor, Tensor> extremum_along(const Tensor& x, int64_t dim, bool keepdim, bool is_max) {
  const char* name = is_max ? "max" : "min";
  auto [values, indices] = kernels::max_along(x, dim, keepdim, is_max);
  if (needs_grad({&x})) {
    const int64_t d = normalize_dim(dim, x.dim(), name);
    attach_node(values, name, {x},
                [shape = x.shape(), si = SavedTensor(indices, name), d, keepdim](
                    const Tensor& g, const NeedsGrad&) -> Grads {
                  if (shape.empty()) return {g};
                  Tensor idx = si.unpack();
                  Tensor gk = g;
                  if (!keepdim) {
                    idx = kernels::unsqueeze(idx, d);
                    gk = kernels::unsqueeze(g, d);
                  }
                  return {kernels::scatter_add(shape, d, idx, kernels::contiguous(gk))};
                });
  }
  return {values, indices};
}
}  // namespace

std::pair<Tensor, Tensor> max(const Tensor& x, int64_t dim, bool keepdim) {
  return extremum_along(x, dim, keepdim, true);
}
std::pair<Tensor, Tensor> min(const Tensor& x, int64_t dim, bool keepdim) {
  return extremum_along(x, dim, keepdim, false);
}
Tensor argmax(const Tensor& x, int64_t dim, bool keepdim) {
  return kernels::max_along(x, dim, keepdim, true, "argmax").second;
}
Tensor argmin(const Tensor& x, int64_t dim, bool keepdim) {
  return kernels::max_along(x, dim, keepdim, false, "argmin").second;
}

// logsumexp(x) = m + log(sum(exp(x - m))) with m the max (no overflow);
// d lse / dx_i = exp(x_i - lse) = softmax(x)_i.
Tensor logsumexp(const Tensor& x, const std::vector<int64_t>& dims_in, bool keepdim) {
  RG_CHECK(x.is_floating_point(), "logsumexp", "needs a floating-point tensor, got {}",
           dtype_name(x.dtype()));
  const auto dims = kernels::reduction_dims(dims_in, x.dim(), "logsumexp");
  Tensor m = kernels::reduce(kernels::Reduce::Max, x, dims, true);
  // A slice that is all -inf has lse = -inf; shift by 0 there to avoid inf - inf.
  m = map_float(m, [](auto v) { return std::isinf(v) ? decltype(v)(0) : v; });
  const Tensor shifted_exp = map_float(x, m, [](auto a, auto b) { return std::exp(a - b); });
  Tensor out = map_float(kernels::reduce(kernels::Reduce::Sum, shifted_exp, dims, true), m,
                         [](auto s, auto b) { return std::log(s) + b; });
  if (!keepdim) out = kernels::view(out, kernels::reduced_shape(x.shape(), dims, false));
  if (needs_grad({&x})) {
    attach_node(out, "logsumexp", {x},
                [sx = SavedTensor(x, "logsumexp"), so = SavedTensor(out, "logsumexp"), dims, keepdim](
                    const Tensor& g, const NeedsGrad&) -> Grads {
                  const Tensor xv = sx.unpack();
                  const Tensor lse = expand_back(so.unpack(), xv.shape(), dims, keepdim);
                  const Tensor gk = expand_back(g, xv.shape(), dims, keepdim);
                  return {map_float(gk, xv, lse, [](auto gg, auto a, auto l) {
                    return std::isinf(l) ? decltype(gg)(0) : gg * std::exp(a - l);
                  })};
                });
  }
  return out;
}

// softmax: dx = y * (g - sum(g * y)); log_softmax: dx = g - softmax * sum(g).
Tensor softmax(const Tensor& x, int64_t dim) {
  Tensor out = kernels::softmax(x, dim);
  if (needs_grad({&x})) {
    attach_node(out, "softmax", {x}, [so = SavedTensor(out, "softmax"), dim](const Tensor& g, const NeedsGrad&) -> Grads {
      return {kernels::softmax_backward(so.unpack(), g, dim)};
    });
  }
  return out;
}

Tensor log_softmax(const Tensor& x, int64_t dim) {
  Tensor out = kernels::log_softmax(x, dim);
  if (needs_grad({&x})) {
    attach_node(out, "log_softmax", {x}, [so = SavedTensor(out, "log_softmax"), dim](const Tensor& g, const NeedsGrad&) -> Grads {
      return {kernels::log_softmax_backward(so.unpack(), g, dim)};
    });
  }
  return out;
}

// sum_to is broadcasting run backwards; its own backward broadcasts again.
Tensor sum_to(const Tensor& x, const Shape& shape) {
  Tensor out = kernels::sum_to(x, shape);
  if (out.is_same(x)) return x;
  if (needs_grad({&x})) {
    attach_node(out, "sum_to", {x}, [shape_x = x.shape()](const Tensor& g, const NeedsGrad&) -> Grads {
      return {kernels::expand(g, shape_x)};
    });
  }
  return out;
}

}  // namespace ropegrad
