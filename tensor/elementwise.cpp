// Elementwise kernels: unary and binary maps, where, clamp, tril/triu, copies.
#include <cmath>

#include "tensor/elementwise.h"
#include "tensor/fast_math.h"
#include "tensor/kernels.h"

namespace ropegrad::kernels {

// ---- copies and casts ---------------------------------------------------------

void copy_into(const Tensor& dst, const Tensor& src) {
  broadcast_shapes(src.shape(), dst.shape(), "copy_");  // validates
  RG_CHECK(broadcast_shapes(src.shape(), dst.shape(), "copy_") == dst.shape(), "copy_",
           "source of shape {} does not broadcast to the destination's shape {}",
           shape_str(src.shape()), shape_str(dst.shape()));
  dispatch_all(dst.dtype(), [&](auto out_tag) {
    using Out = decltype(out_tag);
    dispatch_all(src.dtype(), [&](auto in_tag) {
      using In = decltype(in_tag);
      map_into<Out, In>(dst, [](In x) { return static_cast<Out>(x); }, {src});
    });
  });
}

void fill(const Tensor& dst, Scalar value) {
  copy_into(dst, scalar_tensor(value, dst.dtype()));
}

Tensor contiguous(const Tensor& t) { return t.is_contiguous() ? t : clone(t); }

Tensor clone(const Tensor& t) {
  Tensor out = Tensor::empty(t.shape(), t.dtype());
  copy_into(out, t);
  return out;
}

Tensor to(const Tensor& t, DType dtype) {
  if (t.dtype() == dtype) return t;
  Tensor out = Tensor::empty(t.shape(), dtype);
  copy_into(out, t);
  return out;
}

// ---- names --------------------------------------------------------------------

const char* unary_name(Unary op) {
  switch (op) {
    case Unary::Neg: return "neg";
    case Unary::Exp: return "exp";
    case Unary::Log: return "log";
    case Unary::Sqrt: return "sqrt";
    case Unary::Rsqrt: return "rsqrt";
    case Unary::Abs: return "abs";
    case Unary::Sin: return "sin";
    case Unary::Cos: return "cos";
    case Unary::Tanh: return "tanh";
    case Unary::Sigmoid: return "sigmoid";
    case Unary::Relu: return "relu";
    case Unary::Silu: return "silu";
    case Unary::Softplus: return "softplus";
    case Unary::Sign: return "sign";
    case Unary::LogicalNot: return "logical_not";
  }
  return "?";
}

const char* binary_name(Binary op) {
  switch (op) {
    case Binary::Add: return "add";
    case Binary::Sub: return "sub";
    case Binary::Mul: return "mul";
    case Binary::Div: return "div";
    case Binary::Pow: return "pow";
    case Binary::Maximum: return "maximum";
    case Binary::Minimum: return "minimum";
    case Binary::Eq: return "eq";
    case Binary::Ne: return "ne";
    case Binary::Lt: return "lt";
    case Binary::Le: return "le";
    case Binary::Gt: return "gt";
    case Binary::Ge: return "ge";
    case Binary::LogicalAnd: return "logical_and";
    case Binary::LogicalOr: return "logical_or";
  }
  return "?";
}

// ---- unary ----------------------------------------------------------------------

namespace {

template <typename T>
T sigmoid_of(T x) {
  // Exact on both tails: exp(-x) overflowing to inf gives 1/inf = 0.
  // Branch-free, so the loop vectorises (fast_exp for float32).
  return T(1) / (T(1) + fast_exp(-x));
}

template <typename T>
T softplus_of(T x) {
  // torch.nn.functional.softplus(beta=1, threshold=20): linear above 20.
  return x > T(20) ? x : std::log1p(std::exp(x));
}

template <typename T, typename F>
Tensor unary_map(const Tensor& a, F f) {
  return map<T, T>(f, {a});
}

template <typename T>
Tensor unary_typed(Unary op, const Tensor& a) {
  switch (op) {
    case Unary::Neg: return unary_map<T>(a, [](T x) { return -x; });
    case Unary::Exp: return unary_map<T>(a, [](T x) { return std::exp(x); });
    case Unary::Log: return unary_map<T>(a, [](T x) { return std::log(x); });
    case Unary::Sqrt: return unary_map<T>(a, [](T x) { return std::sqrt(x); });
    case Unary::Rsqrt: return unary_map<T>(a, [](T x) { return T(1) / std::sqrt(x); });
    case Unary::Abs: return unary_map<T>(a, [](T x) { return std::abs(x); });
    case Unary::Sin: return unary_map<T>(a, [](T x) { return std::sin(x); });
    case Unary::Cos: return unary_map<T>(a, [](T x) { return std::cos(x); });
    case Unary::Tanh: return unary_map<T>(a, [](T x) { return std::tanh(x); });
    case Unary::Sigmoid: return unary_map<T>(a, [](T x) { return sigmoid_of(x); });
    case Unary::Relu: return unary_map<T>(a, [](T x) { return x > T(0) ? x : T(0); });
    case Unary::Silu: return unary_map<T>(a, [](T x) { return x * sigmoid_of(x); });
    case Unary::Softplus: return unary_map<T>(a, [](T x) { return softplus_of(x); });
    case Unary::Sign:
      return unary_map<T>(a, [](T x) { return static_cast<T>((T(0) < x) - (x < T(0))); });
    case Unary::LogicalNot: break;
  }
  throw Error("unary: unsupported op");
}

bool unary_keeps_integers(Unary op) {
  return op == Unary::Neg || op == Unary::Abs || op == Unary::Relu || op == Unary::Sign;
}

}  // namespace

Tensor unary(Unary op, const Tensor& a) {
  const char* name = unary_name(op);
  if (op == Unary::LogicalNot) {
    return dispatch_all(a.dtype(), [&](auto tag) {
      using T = decltype(tag);
      return map<bool, T>([](T x) { return !static_cast<bool>(x); }, {a});
    });
  }
  if (a.dtype() == DType::Bool) {
    RG_CHECK(op != Unary::Neg, name, "negation of a bool tensor is not supported; use logical_not");
    return unary(op, to(a, unary_keeps_integers(op) ? DType::Int64 : kDefaultFloat));
  }
  if (a.dtype() == DType::Int64) {
    if (unary_keeps_integers(op)) return unary_typed<int64_t>(op, a);
    return unary(op, to(a, kDefaultFloat));  // exp of an int tensor is float, as in torch
  }
  return dispatch_floating(a.dtype(), name, [&](auto tag) { return unary_typed<decltype(tag)>(op, a); });
}

// ---- binary --------------------------------------------------------------------

DType result_type(const Tensor& a, const Tensor& b) {
  // A 0-d tensor only decides the dtype category (bool < int < float), as in torch.
  const bool a_dimless = a.dim() == 0, b_dimless = b.dim() == 0;
  if (a_dimless == b_dimless) return promote_types(a.dtype(), b.dtype());
  const Tensor& full = a_dimless ? b : a;
  const Tensor& dimless = a_dimless ? a : b;
  const auto category = [](DType d) { return d == DType::Bool ? 0 : (d == DType::Int64 ? 1 : 2); };
  if (category(dimless.dtype()) > category(full.dtype())) return dimless.dtype();
  return full.dtype();
}

DType result_type(const Tensor& a, Scalar b) {
  const DType scalar_dtype = b.boolean ? DType::Bool : (b.integral ? DType::Int64 : kDefaultFloat);
  if (is_floating(a.dtype())) return a.dtype();
  if (a.dtype() == DType::Int64) return b.integral ? DType::Int64 : kDefaultFloat;
  return scalar_dtype;  // bool tensor
}

namespace {
bool is_comparison(Binary op) {
  return op == Binary::Eq || op == Binary::Ne || op == Binary::Lt || op == Binary::Le ||
         op == Binary::Gt || op == Binary::Ge || op == Binary::LogicalAnd ||
         op == Binary::LogicalOr;
}

template <typename T, typename F>
Tensor arith(const Tensor& a, const Tensor& b, F f) {
  return map<T, T, T>(f, {a, b});
}
template <typename T, typename F>
Tensor compare(const Tensor& a, const Tensor& b, F f) {
  return map<bool, T, T>(f, {a, b});
}

template <typename T>
T integer_pow(T base, T exponent) {
  T result = 1;
  for (; exponent > 0; exponent >>= 1, base *= base) {
    if (exponent & 1) result *= base;
  }
  return result;
}

// a and b already have dtype T.
template <typename T>
Tensor binary_typed(Binary op, const Tensor& a, const Tensor& b) {
  switch (op) {
    case Binary::Add: return arith<T>(a, b, [](T x, T y) { return static_cast<T>(x + y); });
    case Binary::Sub: return arith<T>(a, b, [](T x, T y) { return static_cast<T>(x - y); });
    case Binary::Mul: return arith<T>(a, b, [](T x, T y) { return static_cast<T>(x * y); });
    case Binary::Div: return arith<T>(a, b, [](T x, T y) { return static_cast<T>(x / y); });
    case Binary::Pow:
      if constexpr (std::is_integral_v<T>) {
        return arith<T>(a, b, [](T x, T y) { return integer_pow(x, y); });
      } else {
        return arith<T>(a, b, [](T x, T y) { return std::pow(x, y); });
      }
    case Binary::Maximum:
      return arith<T>(a, b, [](T x, T y) { return (x != x || x > y) ? x : y; });  // NaN wins
    case Binary::Minimum:
      return arith<T>(a, b, [](T x, T y) { return (x != x || x < y) ? x : y; });
    case Binary::Eq: return compare<T>(a, b, [](T x, T y) { return x == y; });
    case Binary::Ne: return compare<T>(a, b, [](T x, T y) { return x != y; });
    case Binary::Lt: return compare<T>(a, b, [](T x, T y) { return x < y; });
    case Binary::Le: return compare<T>(a, b, [](T x, T y) { return x <= y; });
    case Binary::Gt: return compare<T>(a, b, [](T x, T y) { return x > y; });
    case Binary::Ge: return compare<T>(a, b, [](T x, T y) { return x >= y; });
    case Binary::LogicalAnd:
      return compare<T>(a, b, [](T x, T y) { return static_cast<bool>(x) && static_cast<bool>(y); });
    case Binary::LogicalOr:
      return compare<T>(a, b, [](T x, T y) { return static_cast<bool>(x) || static_cast<bool>(y); });
  }
  throw Error("binary: unsupported op");
}

Tensor binary_in(Binary op, DType compute, const Tensor& a, const Tensor& b) {
  const char* name = binary_name(op);
  broadcast_shapes(a.shape(), b.shape(), name);  // a clear error before any work
  if (op == Binary::Div && !is_floating(compute)) compute = kDefaultFloat;  // true division
  if (compute == DType::Bool && !is_comparison(op)) {
    // As torch: on bools, add and maximum are "or", mul and minimum are "and".
    RG_CHECK(op == Binary::Add || op == Binary::Mul || op == Binary::Maximum || op == Binary::Minimum, name,
             "not supported for two bool tensors (use logical_xor / logical_not, or cast first)");
    op = (op == Binary::Add || op == Binary::Maximum) ? Binary::LogicalOr : Binary::LogicalAnd;
  }
  const Tensor ac = to(a, compute), bc = to(b, compute);
  return dispatch_all(compute, [&](auto tag) -> Tensor {
    using T = decltype(tag);
    if constexpr (std::is_same_v<T, bool>) {
      return binary_typed<int64_t>(op, to(ac, DType::Int64), to(bc, DType::Int64));
    } else {
      return binary_typed<T>(op, ac, bc);
    }
  });
}
}  // namespace

DType binary_result_dtype(Binary op, DType promoted) {
  if (is_comparison(op)) return DType::Bool;
  if (op == Binary::Div && !is_floating(promoted)) return kDefaultFloat;
  return promoted;
}

Tensor binary(Binary op, const Tensor& a, const Tensor& b) {
  return binary_in(op, result_type(a, b), a, b);
}

Tensor binary(Binary op, const Tensor& a, Scalar b) {
  const DType compute = result_type(a, b);
  return binary_in(op, compute, a, scalar_tensor(b, compute));
}

Tensor binary(Binary op, Scalar a, const Tensor& b) {
  const DType compute = result_type(b, a);
  return binary_in(op, compute, scalar_tensor(a, compute), b);
}

void binary_(Binary op, const Tensor& dst, const Tensor& src) {
  const char* name = binary_name(op);
  RG_CHECK(!is_comparison(op), name, "in-place comparison is not supported");
  RG_CHECK(broadcast_shapes(dst.shape(), src.shape(), name) == dst.shape(), name,
           "in-place: source of shape {} does not broadcast to the destination's shape {}",
           shape_str(src.shape()), shape_str(dst.shape()));
  const DType result = binary_result_dtype(op, result_type(dst, src));
  RG_CHECK(promote_types(result, dst.dtype()) == dst.dtype(), name,
           "in-place: result type {} cannot be stored in a tensor of dtype {}",
           dtype_name(result), dtype_name(dst.dtype()));
  copy_into(dst, binary(op, dst, src));  // simple and correct; optimizers use the fused forms
  dst.bump_version();
}

void binary_(Binary op, const Tensor& dst, Scalar src) {
  binary_(op, dst, scalar_tensor(src, src.integral ? DType::Int64 : dst.dtype()));
}

// ---- where, clamp, tril/triu ------------------------------------------------------

Tensor where(const Tensor& condition, const Tensor& a, const Tensor& b) {
  RG_CHECK(condition.dtype() == DType::Bool, "where", "condition must be bool, got {}",
           dtype_name(condition.dtype()));
  const Shape shape = broadcast_shapes(broadcast_shapes(condition.shape(), a.shape(), "where"),
                                       b.shape(), "where");
  const DType dtype = result_type(a, b);
  const Tensor ac = to(a, dtype), bc = to(b, dtype);
  return dispatch_all(dtype, [&](auto tag) {
    using T = decltype(tag);
    return map<T, bool, T, T>([](bool c, T x, T y) { return c ? x : y; }, {condition, ac, bc},
                              "where");
  });
}

Tensor clamp(const Tensor& t, std::optional<double> min, std::optional<double> max) {
  RG_CHECK(min.has_value() || max.has_value(), "clamp", "at least one of min and max must be given");
  return dispatch_numeric(t.dtype(), "clamp", [&](auto tag) {
    using T = decltype(tag);
    const T lo = min ? static_cast<T>(*min) : std::numeric_limits<T>::lowest();
    const T hi = max ? static_cast<T>(*max) : std::numeric_limits<T>::max();
    // torch.clamp: min is applied first, so min > max gives max everywhere.
    return map<T, T>([=](T x) { return x != x ? x : std::min(std::max(x, lo), hi); }, {t});
  });
}

namespace {
Tensor triangle(const Tensor& t, int64_t diagonal, bool lower, const char* op) {
  RG_CHECK(t.dim() >= 2, op, "expected a tensor of at least 2 dims, got shape {}",
           shape_str(t.shape()));
  const int64_t rows = t.size(-2), cols = t.size(-1);
  // keep[i][j] = j - i <= diagonal (lower) or >= diagonal (upper); broadcast
  // over the batch dims, so no per-element index arithmetic on the batch.
  Tensor keep = Tensor::empty({rows, cols}, DType::Bool);
  bool* k = keep.data_ptr<bool>();
  for (int64_t i = 0; i < rows; ++i) {
    for (int64_t j = 0; j < cols; ++j) k[i * cols + j] = lower ? (j - i <= diagonal) : (j - i >= diagonal);
  }
  return where(keep, t, zeros({}, t.dtype()));
}
}  // namespace

Tensor tril(const Tensor& t, int64_t diagonal) { return triangle(t, diagonal, true, "tril"); }
Tensor triu(const Tensor& t, int64_t diagonal) { return triangle(t, diagonal, false, "triu"); }

}  // namespace ropegrad::kernels
