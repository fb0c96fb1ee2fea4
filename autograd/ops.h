// Differentiable tensor operations: what users call.
//
// Each op computes its forward with a kernel (tensor/kernels.h) and, when
// grad mode is on and an input requires grad, records a Node whose backward
// rule sits right below the forward in the op's .cpp file:
//   ops_elementwise.cpp  add, mul, exp, ..., where, clamp, tril
//   ops_reduce.cpp       sum, mean, max, logsumexp, softmax, log_softmax
//   ops_shape.cpp        view, reshape, permute, narrow, expand, cat, ...
//   ops_index.cpp        index_select, embedding, gather
//   ops_matmul.cpp       matmul
//   ops_inplace.cpp      add_, mul_, copy_, ... (what optimizers use)
#pragma once

#include <optional>
#include <utility>
#include <vector>

#include "autograd/engine.h"
#include "autograd/node.h"
#include "tensor/kernels.h"
#include "tensor/print.h"
#include "tensor/random.h"
#include "tensor/tensor.h"

namespace ropegrad {

// ---- views and shape ops (no copy unless stated) --------------------------------------
Tensor view(const Tensor& x, Shape shape);
Tensor reshape(const Tensor& x, Shape shape);  // copies only when a view cannot express it
Tensor permute(const Tensor& x, const std::vector<int64_t>& dims);
Tensor transpose(const Tensor& x, int64_t dim0, int64_t dim1);
Tensor narrow(const Tensor& x, int64_t dim, int64_t start, int64_t length);
Tensor slice(const Tensor& x, int64_t dim, int64_t start, int64_t end, int64_t step = 1);
Tensor select(const Tensor& x, int64_t dim, int64_t index);
Tensor expand(const Tensor& x, const Shape& shape);
Tensor squeeze(const Tensor& x);
Tensor squeeze(const Tensor& x, int64_t dim);
Tensor unsqueeze(const Tensor& x, int64_t dim);
Tensor flatten(const Tensor& x, int64_t start_dim = 0, int64_t end_dim = -1);
Tensor contiguous(const Tensor& x);  // x itself when already contiguous
Tensor clone(const Tensor& x);
Tensor to(const Tensor& x, DType dtype);  // cast; differentiable between float dtypes
Tensor cat(const std::vector<Tensor>& tensors, int64_t dim = 0);
Tensor stack(const std::vector<Tensor>& tensors, int64_t dim = 0);
// Pieces of `split_size` along dim (the last may be smaller); views.
std::vector<Tensor> split(const Tensor& x, int64_t split_size, int64_t dim = 0);
// `chunks` pieces of ceil(size / chunks) along dim, as torch.chunk; views.
std::vector<Tensor> chunk(const Tensor& x, int64_t chunks, int64_t dim = 0);

// ---- elementwise (NumPy broadcasting) -----------------------------------------------
Tensor add(const Tensor& a, const Tensor& b);
Tensor sub(const Tensor& a, const Tensor& b);
Tensor mul(const Tensor& a, const Tensor& b);
Tensor div(const Tensor& a, const Tensor& b);
Tensor add(const Tensor& a, Scalar b);
Tensor sub(const Tensor& a, Scalar b);
Tensor mul(const Tensor& a, Scalar b);
Tensor div(const Tensor& a, Scalar b);
Tensor rsub(const Tensor& b, Scalar a);  // a - b
Tensor rdiv(const Tensor& b, Scalar a);  // a / b
Tensor neg(const Tensor& x);
Tensor pow(const Tensor& x, Scalar exponent);
Tensor pow(const Tensor& x, const Tensor& exponent);
Tensor exp(const Tensor& x);
Tensor log(const Tensor& x);
Tensor sqrt(const Tensor& x);
Tensor rsqrt(const Tensor& x);
Tensor abs(const Tensor& x);
Tensor sin(const Tensor& x);
Tensor cos(const Tensor& x);
Tensor tanh(const Tensor& x);
Tensor sigmoid(const Tensor& x);
Tensor relu(const Tensor& x);
Tensor silu(const Tensor& x);
Tensor softplus(const Tensor& x);  // log(1 + e^x); linear above 20 as torch
Tensor clamp(const Tensor& x, std::optional<double> min, std::optional<double> max);
Tensor maximum(const Tensor& a, const Tensor& b);
Tensor minimum(const Tensor& a, const Tensor& b);
Tensor where(const Tensor& condition, const Tensor& a, const Tensor& b);
Tensor masked_fill(const Tensor& x, const Tensor& mask, Scalar value);
Tensor tril(const Tensor& x, int64_t diagonal = 0);
Tensor triu(const Tensor& x, int64_t diagonal = 0);
// Comparisons and logic give bool tensors (not differentiable).
Tensor eq(const Tensor& a, const Tensor& b);
Tensor ne(const Tensor& a, const Tensor& b);
Tensor lt(const Tensor& a, const Tensor& b);
Tensor le(const Tensor& a, const Tensor& b);
Tensor gt(const Tensor& a, const Tensor& b);
Tensor ge(const Tensor& a, const Tensor& b);
Tensor eq(const Tensor& a, Scalar b);
Tensor ne(const Tensor& a, Scalar b);
Tensor lt(const Tensor& a, Scalar b);
Tensor le(const Tensor& a, Scalar b);
Tensor gt(const Tensor& a, Scalar b);
Tensor ge(const Tensor& a, Scalar b);
Tensor logical_not(const Tensor& x);
Tensor logical_and(const Tensor& a, const Tensor& b);
Tensor logical_or(const Tensor& a, const Tensor& b);

Tensor operator+(const Tensor& a, const Tensor& b);
Tensor operator-(const Tensor& a, const Tensor& b);
Tensor operator*(const Tensor& a, const Tensor& b);
Tensor operator/(const Tensor& a, const Tensor& b);
Tensor operator+(const Tensor& a, Scalar b);
Tensor operator-(const Tensor& a, Scalar b);
Tensor operator*(const Tensor& a, Scalar b);
Tensor operator/(const Tensor& a, Scalar b);
Tensor operator+(Scalar a, const Tensor& b);
Tensor operator-(Scalar a, const Tensor& b);
Tensor operator*(Scalar a, const Tensor& b);
Tensor operator/(Scalar a, const Tensor& b);
Tensor operator-(const Tensor& x);

// ---- reductions ---------------------------------------------------------------------
// `dims` empty means every dim.
Tensor sum(const Tensor& x, const std::vector<int64_t>& dims = {}, bool keepdim = false);
Tensor mean(const Tensor& x, const std::vector<int64_t>& dims = {}, bool keepdim = false);
Tensor amax(const Tensor& x, const std::vector<int64_t>& dims = {}, bool keepdim = false);
Tensor amin(const Tensor& x, const std::vector<int64_t>& dims = {}, bool keepdim = false);
Tensor max(const Tensor& x);  // of all elements
Tensor min(const Tensor& x);
// Values and int64 indices along one dim (torch.max(x, dim)).
std::pair<Tensor, Tensor> max(const Tensor& x, int64_t dim, bool keepdim = false);
std::pair<Tensor, Tensor> min(const Tensor& x, int64_t dim, bool keepdim = false);
Tensor argmax(const Tensor& x, int64_t dim, bool keepdim = false);
Tensor argmin(const Tensor& x, int64_t dim, bool keepdim = false);
Tensor logsumexp(const Tensor& x, const std::vector<int64_t>& dims, bool keepdim = false);
Tensor softmax(const Tensor& x, int64_t dim);
Tensor log_softmax(const Tensor& x, int64_t dim);
// Sums a broadcast tensor back to `shape` (differentiable; the backward of broadcasting).
Tensor sum_to(const Tensor& x, const Shape& shape);

// ---- indexing ----------------------------------------------------------------------
Tensor index_select(const Tensor& x, int64_t dim, const Tensor& index);
// Rows of weight (V, D) for int64 ids of any shape: (*ids.shape, D).
Tensor embedding(const Tensor& ids, const Tensor& weight);
Tensor gather(const Tensor& x, int64_t dim, const Tensor& index);

// ---- matmul -------------------------------------------------------------------------
Tensor matmul(const Tensor& a, const Tensor& b);

// ---- in place (for optimizers; refused on a tensor that requires grad while grad mode is on)
Tensor& add_(Tensor& x, const Tensor& other, Scalar alpha = 1);
Tensor& add_(Tensor& x, Scalar other);
Tensor& sub_(Tensor& x, const Tensor& other);
Tensor& mul_(Tensor& x, const Tensor& other);
Tensor& mul_(Tensor& x, Scalar other);
Tensor& div_(Tensor& x, const Tensor& other);
Tensor& div_(Tensor& x, Scalar other);
Tensor& copy_(Tensor& x, const Tensor& src);
Tensor& zero_(Tensor& x);
Tensor& fill_(Tensor& x, Scalar value);
Tensor& clamp_(Tensor& x, std::optional<double> min, std::optional<double> max);
// x += value * a * b and x += value * a / b, in one pass (AdamW's update).
Tensor& addcmul_(Tensor& x, const Tensor& a, const Tensor& b, Scalar value = 1);
Tensor& addcdiv_(Tensor& x, const Tensor& a, const Tensor& b, Scalar value = 1);
// x += weight * (end - x)  (AdamW's first-moment update).
Tensor& lerp_(Tensor& x, const Tensor& end, Scalar weight);

}  // namespace ropegrad
