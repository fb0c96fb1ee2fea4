// Tensor: a view (shape, strides, offset, dtype) onto shared Storage.
//
// A Tensor is a cheap handle (one shared_ptr): copying it shares the data, as
// in PyTorch. Views (transpose, narrow, expand, ...) are new TensorImpls over
// the same Storage with other strides; `contiguous()` copies only when the
// strides are not already row-major.
//
// The tensor layer knows nothing of how gradients are computed: it keeps the
// autograd slots (requires_grad, grad, grad_fn) that autograd/ fills in.
// Every differentiable op lives in autograd/ops.h.
#pragma once

#include <concepts>
#include <cstdint>
#include <initializer_list>
#include <memory>
#include <string>
#include <vector>

#include "tensor/dtype.h"
#include "tensor/error.h"
#include "tensor/shape.h"
#include "tensor/storage.h"

namespace ropegrad {

struct Node;  // a recorded op in the autograd graph (autograd/node.h)

// A number passed where a tensor could go (x + 2, clamp(x, 0.0, 6.0)).
// Remembers whether it was integral, so int64 + 2 stays int64 as in PyTorch
// while int64 + 2.5 becomes float32.
struct Scalar {
  double value;
  bool integral;
  bool boolean = false;     // bool tensor + true stays bool
  int64_t int_value = 0;    // exact value of an integral scalar (beyond 2^53 too)
  Scalar(double v) : value(v), integral(false) {}  // NOLINT: implicit by design
  Scalar(float v) : value(v), integral(false) {}   // NOLINT
  Scalar(int v) : value(v), integral(true), int_value(v) {}  // NOLINT
  Scalar(int64_t v) : value(static_cast<double>(v)), integral(true), int_value(v) {}  // NOLINT
  Scalar(bool v) : value(v ? 1.0 : 0.0), integral(true), boolean(true), int_value(v) {}  // NOLINT
};

struct TensorImpl {
  std::shared_ptr<Storage> storage;
  Shape shape;
  Shape strides;       // in elements
  int64_t offset = 0;  // in elements, from the start of storage
  DType dtype = kDefaultFloat;

  // Autograd slots, filled in by autograd/.
  bool requires_grad = false;
  bool retains_grad = false;             // non-leaf that keeps its .grad
  std::shared_ptr<TensorImpl> grad;      // accumulated gradient
  std::shared_ptr<Node> grad_fn;         // op that produced this tensor
  std::weak_ptr<Node> grad_accumulator;  // leaf's AccumulateGrad node
};

class Tensor {
 public:
  Tensor() = default;  // undefined tensor (defined() == false)
  explicit Tensor(std::shared_ptr<TensorImpl> impl) : impl_(std::move(impl)) {}

  // A view of `storage` with the given geometry.
  static Tensor from_storage(std::shared_ptr<Storage> storage, Shape shape, Shape strides,
                             int64_t offset, DType dtype);
  // A new uninitialised (or zeroed) contiguous tensor.
  static Tensor empty(const Shape& shape, DType dtype = kDefaultFloat);
  static Tensor zeros_of(const Shape& shape, DType dtype = kDefaultFloat);

  bool defined() const { return impl_ != nullptr; }

  // --- geometry -----------------------------------------------------------
  const Shape& shape() const { return impl().shape; }
  const Shape& strides() const { return impl().strides; }
  int64_t dim() const { return static_cast<int64_t>(impl().shape.size()); }
  int64_t size(int64_t d) const;    // negative d counts from the end
  int64_t stride(int64_t d) const;
  int64_t numel() const { return numel_of(impl().shape); }
  int64_t offset() const { return impl().offset; }
  DType dtype() const { return impl().dtype; }
  bool is_contiguous() const;
  bool is_floating_point() const { return is_floating(dtype()); }

  // --- data ---------------------------------------------------------------
  // Pointer to element [0, 0, ...]; checks that T matches the dtype.
  template <typename T> T* data_ptr() const;
  std::byte* raw_data() const;  // byte pointer to element [0, 0, ...]
  const std::shared_ptr<Storage>& storage() const { return impl().storage; }
  bool shares_storage_with(const Tensor& other) const;

  // The single value of a one-element tensor, converted to T.
  template <typename T = double> T item() const;
  // Element at a full index (negative indices count from the end), as T.
  template <typename T = double> T at(std::initializer_list<int64_t> index) const;
  // All elements in row-major order, converted to T.
  template <typename T = double> std::vector<T> to_vector() const;

  // --- autograd slots (the rules live in autograd/) ------------------------
  bool requires_grad() const { return impl().requires_grad; }
  // Marks a leaf as a parameter to differentiate; like torch.Tensor.requires_grad_.
  Tensor& requires_grad_(bool enabled = true);
  Tensor grad() const;  // undefined until a backward reaches this tensor
  void set_grad(const Tensor& grad) const;
  const std::shared_ptr<Node>& grad_fn() const { return impl().grad_fn; }
  bool is_leaf() const { return impl().grad_fn == nullptr; }
  // Keep .grad on a non-leaf tensor during backward (torch.Tensor.retain_grad).
  void retain_grad() const;
  bool retains_grad() const { return impl().retains_grad; }
  // Same data, cut from the graph (shares storage and version counter).
  Tensor detach() const;
  // Points this tensor (and every handle to it) at other's data, shape and
  // dtype, keeping its autograd identity: how a module's parameters change
  // dtype in place (Module::to). The old gradient is dropped.
  void set_data(const Tensor& other) const;

  // Version of the underlying storage; in-place ops bump it.
  uint64_t version() const { return impl().storage->version(); }
  void bump_version() const { impl().storage->bump_version(); }

  TensorImpl& impl() const;
  const std::shared_ptr<TensorImpl>& impl_ptr() const { return impl_; }
  bool is_same(const Tensor& other) const { return impl_ == other.impl_; }

 private:
  std::shared_ptr<TensorImpl> impl_;
};

// ---- creation --------------------------------------------------------------
// From values in row-major order; `shape` defaults to {values.size()}.
Tensor tensor(const std::vector<double>& values, Shape shape = {}, DType dtype = kDefaultFloat);
Tensor tensor(std::initializer_list<double> values, DType dtype = kDefaultFloat);
// Int64 tensor (token ids, targets, indices).
Tensor tensor_i64(const std::vector<int64_t>& values, Shape shape = {});
Tensor tensor_bool(const std::vector<bool>& values, Shape shape = {});
Tensor scalar_tensor(Scalar value, DType dtype = kDefaultFloat);
Tensor empty(const Shape& shape, DType dtype = kDefaultFloat);
Tensor zeros(const Shape& shape, DType dtype = kDefaultFloat);
Tensor ones(const Shape& shape, DType dtype = kDefaultFloat);
Tensor full(const Shape& shape, Scalar value, DType dtype = kDefaultFloat);
Tensor zeros_like(const Tensor& t);
Tensor ones_like(const Tensor& t);
Tensor full_like(const Tensor& t, Scalar value);
// [start, end) in steps of `step`, as torch.arange: integer bounds give
// int64, floating bounds give float32 (unless a dtype is passed).
Tensor arange(double start, double end, double step = 1.0, DType dtype = kDefaultFloat);
template <std::integral I>
Tensor arange(I start, I end, I step = 1, DType dtype = DType::Int64) {
  return arange(static_cast<double>(start), static_cast<double>(end), static_cast<double>(step), dtype);
}
Tensor arange(int64_t end, DType dtype = DType::Int64);
// n x m identity (m defaults to n).
Tensor eye(int64_t n, int64_t m = -1, DType dtype = kDefaultFloat);

// ---- template definitions ----------------------------------------------------
template <typename T>
T* Tensor::data_ptr() const {
  RG_CHECK(dtype() == dtype_of<T>(), "data_ptr", "tensor has dtype {}, asked for {}",
           dtype_name(dtype()), dtype_name(dtype_of<T>()));
  return reinterpret_cast<T*>(raw_data());
}

namespace detail {
double element_as_double(const Tensor& t, int64_t element_offset);
int64_t element_as_int64(const Tensor& t, int64_t element_offset);
int64_t flat_to_offset(const Tensor& t, int64_t flat_index);
}  // namespace detail

template <typename T>
T Tensor::item() const {
  RG_CHECK(numel() == 1, "item", "only a one-element tensor can be converted to a scalar, got shape {}",
           shape_str(shape()));
  if constexpr (std::is_integral_v<T>) return static_cast<T>(detail::element_as_int64(*this, 0));
  return static_cast<T>(detail::element_as_double(*this, 0));
}

template <typename T>
T Tensor::at(std::initializer_list<int64_t> index) const {
  RG_CHECK(static_cast<int64_t>(index.size()) == dim(), "at",
           "index has {} entries but the tensor has {} dimensions (shape {})", index.size(), dim(),
           shape_str(shape()));
  int64_t off = 0;
  int64_t d = 0;
  for (int64_t i : index) {
    const int64_t n = shape()[d];
    RG_CHECK(i >= -n && i < n, "at", "index {} is out of range for dim {} of size {} (shape {})", i,
             d, n, shape_str(shape()));
    off += (i < 0 ? i + n : i) * strides()[d];
    ++d;
  }
  if constexpr (std::is_integral_v<T>) return static_cast<T>(detail::element_as_int64(*this, off));
  return static_cast<T>(detail::element_as_double(*this, off));
}

template <typename T>
std::vector<T> Tensor::to_vector() const {
  std::vector<T> out(static_cast<size_t>(numel()));
  for (int64_t i = 0; i < numel(); ++i) {
    const int64_t off = detail::flat_to_offset(*this, i);
    if constexpr (std::is_integral_v<T>)
      out[i] = static_cast<T>(detail::element_as_int64(*this, off));
    else
      out[i] = static_cast<T>(detail::element_as_double(*this, off));
  }
  return out;
}

}  // namespace ropegrad
