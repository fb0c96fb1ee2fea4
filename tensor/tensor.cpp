#include "tensor/tensor.h"

#include <cmath>
#include <cstring>

namespace ropegrad {

Tensor Tensor::from_storage(std::shared_ptr<Storage> storage, Shape shape, Shape strides,
                            int64_t offset, DType dtype) {
  auto impl = std::make_shared<TensorImpl>();
  impl->storage = std::move(storage);
  impl->shape = std::move(shape);
  impl->strides = std::move(strides);
  impl->offset = offset;
  impl->dtype = dtype;
  return Tensor(std::move(impl));
}

namespace {
Tensor allocate(const Shape& shape, DType dtype, bool zero, const char* op) {
  for (int64_t s : shape) {
    RG_CHECK(s >= 0, op, "negative dimension {} in shape {}", s, shape_str(shape));
  }
  Shape strides = contiguous_strides(shape);  // refuses a span that overflows int64 elements
  // The kernels turn strides into bytes (stride * element size): that span
  // must fit in int64 too, or (0, 2^61) of float64 would overflow there.
  int64_t span = strides.empty() ? 1 : strides[0] * std::max<int64_t>(shape[0], 1), span_bytes = 0;
  RG_CHECK(!__builtin_mul_overflow(span, static_cast<int64_t>(element_size(dtype)), &span_bytes), op,
           "shape {} of {} is too large: its strides in bytes overflow int64", shape_str(shape), dtype_name(dtype));
  const size_t nbytes = static_cast<size_t>(numel_of(shape)) * element_size(dtype);
  return Tensor::from_storage(std::make_shared<Storage>(nbytes, zero), shape, std::move(strides), 0, dtype);
}
}  // namespace

Tensor Tensor::empty(const Shape& shape, DType dtype) { return allocate(shape, dtype, false, "empty"); }
Tensor Tensor::zeros_of(const Shape& shape, DType dtype) { return allocate(shape, dtype, true, "zeros"); }

TensorImpl& Tensor::impl() const {
  if (!impl_) throw Error("tensor: use of an undefined tensor");
  return *impl_;
}

int64_t Tensor::size(int64_t d) const { return shape()[normalize_dim(d, dim(), "size")]; }
int64_t Tensor::stride(int64_t d) const { return strides()[normalize_dim(d, dim(), "stride")]; }

bool Tensor::is_contiguous() const {
  int64_t expected = 1;
  for (int64_t i = dim() - 1; i >= 0; --i) {
    const int64_t n = shape()[i];
    if (n == 1) continue;  // the stride of a size-1 dim never matters
    if (strides()[i] != expected) return false;
    expected *= n;
  }
  return true;
}

std::byte* Tensor::raw_data() const {
  return impl().storage->data() + impl().offset * static_cast<int64_t>(element_size(dtype()));
}

bool Tensor::shares_storage_with(const Tensor& other) const {
  return storage() == other.storage();
}

Tensor& Tensor::requires_grad_(bool enabled) {
  RG_CHECK(!enabled || is_floating_point(), "requires_grad_",
           "only floating-point tensors can require gradients, got {}", dtype_name(dtype()));
  RG_CHECK(is_leaf() || enabled, "requires_grad_",
           "cannot set requires_grad=false on a non-leaf tensor (produced by an op); use detach()");
  impl().requires_grad = enabled;
  return *this;
}

Tensor Tensor::grad() const {
  return impl().grad ? Tensor(impl().grad) : Tensor();
}

void Tensor::set_grad(const Tensor& grad) const {
  if (!grad.defined()) {
    impl().grad.reset();
    return;
  }
  RG_CHECK(grad.shape() == shape() && grad.dtype() == dtype(), "set_grad",
           "gradient of shape {} and dtype {} does not match the tensor's shape {} and dtype {}",
           shape_str(grad.shape()), dtype_name(grad.dtype()), shape_str(shape()),
           dtype_name(dtype()));
  impl().grad = grad.impl_ptr();
}

void Tensor::retain_grad() const {
  RG_CHECK(requires_grad(), "retain_grad", "the tensor does not require grad");
  if (!is_leaf()) impl().retains_grad = true;  // leaves keep .grad anyway
}

Tensor Tensor::detach() const {
  return from_storage(storage(), shape(), strides(), offset(), dtype());
}

void Tensor::set_data(const Tensor& other) const {
  RG_CHECK(is_leaf(), "set_data", "only leaf tensors (parameters, buffers) can have their data replaced");
  TensorImpl& me = impl();
  const TensorImpl& src = other.impl();
  me.storage = src.storage;
  me.shape = src.shape;
  me.strides = src.strides;
  me.offset = src.offset;
  me.dtype = src.dtype;
  me.grad.reset();
  me.grad_accumulator.reset();
}

namespace detail {

double element_as_double(const Tensor& t, int64_t element_offset) {
  return dispatch_all(t.dtype(), [&](auto tag) -> double {
    using T = decltype(tag);
    return static_cast<double>(reinterpret_cast<const T*>(t.raw_data())[element_offset]);
  });
}

int64_t element_as_int64(const Tensor& t, int64_t element_offset) {
  return dispatch_all(t.dtype(), [&](auto tag) -> int64_t {
    using T = decltype(tag);
    return static_cast<int64_t>(reinterpret_cast<const T*>(t.raw_data())[element_offset]);
  });
}

int64_t flat_to_offset(const Tensor& t, int64_t flat_index) {
  int64_t off = 0;
  for (int64_t d = t.dim() - 1; d >= 0; --d) {
    const int64_t n = t.shape()[d];
    off += (flat_index % n) * t.strides()[d];
    flat_index /= n;
  }
  return off;
}

}  // namespace detail

// ---- creation ----------------------------------------------------------------

namespace {
// Fill a fresh contiguous tensor from a function of the flat index.
template <typename Fn>
Tensor fill_with(const Shape& shape, DType dtype, Fn&& value_at, const char* op) {
  Tensor out = allocate(shape, dtype, false, op);
  dispatch_all(dtype, [&](auto tag) {
    using T = decltype(tag);
    T* p = out.data_ptr<T>();
    for (int64_t i = 0, n = out.numel(); i < n; ++i) p[i] = static_cast<T>(value_at(i));
  });
  return out;
}

// Every element = value; an integral value fills int64 exactly (not via double).
Tensor full_of(const Shape& shape, Scalar value, DType dtype, const char* op) {
  if (dtype == DType::Int64 && value.integral) {
    return fill_with(shape, dtype, [&](int64_t) { return value.int_value; }, op);
  }
  return fill_with(shape, dtype, [&](int64_t) { return value.value; }, op);
}

Shape check_values_shape(size_t count, Shape shape, const char* op) {
  if (shape.empty()) shape = {static_cast<int64_t>(count)};  // a 0-d tensor comes from scalar_tensor
  RG_CHECK(numel_of(shape) == static_cast<int64_t>(count), op,
           "{} values do not fill shape {} ({} elements)", count, shape_str(shape),
           numel_of(shape));
  return shape;
}
}  // namespace

Tensor tensor(const std::vector<double>& values, Shape shape, DType dtype) {
  shape = check_values_shape(values.size(), std::move(shape), "tensor");
  return fill_with(shape, dtype, [&](int64_t i) { return values[i]; }, "tensor");
}

Tensor tensor(std::initializer_list<double> values, DType dtype) {
  return tensor(std::vector<double>(values), {}, dtype);
}

Tensor tensor_i64(const std::vector<int64_t>& values, Shape shape) {
  shape = check_values_shape(values.size(), std::move(shape), "tensor_i64");
  return fill_with(shape, DType::Int64, [&](int64_t i) { return values[i]; }, "tensor_i64");
}

Tensor tensor_bool(const std::vector<bool>& values, Shape shape) {
  shape = check_values_shape(values.size(), std::move(shape), "tensor_bool");
  return fill_with(shape, DType::Bool, [&](int64_t i) { return static_cast<bool>(values[i]); }, "tensor_bool");
}

Tensor scalar_tensor(Scalar value, DType dtype) { return full_of(Shape{}, value, dtype, "scalar_tensor"); }

Tensor empty(const Shape& shape, DType dtype) { return Tensor::empty(shape, dtype); }
Tensor zeros(const Shape& shape, DType dtype) { return allocate(shape, dtype, true, "zeros"); }
Tensor ones(const Shape& shape, DType dtype) {
  return fill_with(shape, dtype, [](int64_t) { return 1.0; }, "ones");
}

Tensor full(const Shape& shape, Scalar value, DType dtype) { return full_of(shape, value, dtype, "full"); }

Tensor zeros_like(const Tensor& t) { return zeros(t.shape(), t.dtype()); }
Tensor ones_like(const Tensor& t) { return ones(t.shape(), t.dtype()); }
Tensor full_like(const Tensor& t, Scalar value) { return full(t.shape(), value, t.dtype()); }

Tensor arange(double start, double end, double step, DType dtype) {
  RG_CHECK(step != 0, "arange", "step must be non-zero");
  RG_CHECK(std::isfinite(start) && std::isfinite(end), "arange", "bounds must be finite, got [{}, {})",
           start, end);
  RG_CHECK((end - start) / step >= 0, "arange",
           "upper bound and step are inconsistent: start={}, end={}, step={}", start, end, step);
  const auto n = static_cast<int64_t>(std::ceil((end - start) / step));
  return fill_with({n}, dtype, [&](int64_t i) { return start + static_cast<double>(i) * step; }, "arange");
}

Tensor arange(int64_t end, DType dtype) { return arange(0.0, static_cast<double>(end), 1.0, dtype); }

Tensor eye(int64_t n, int64_t m, DType dtype) {
  RG_CHECK(n >= 0, "eye", "n must be non-negative, got {}", n);
  RG_CHECK(m >= -1, "eye", "m must be non-negative (or -1 for m = n), got {}", m);
  if (m == -1) m = n;
  return fill_with({n, m}, dtype, [&](int64_t i) { return i / m == i % m ? 1.0 : 0.0; }, "eye");
}

}  // namespace ropegrad
