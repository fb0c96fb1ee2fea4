// Element types and PyTorch's type-promotion rules.
#pragma once

#include <cstdint>
#include <string_view>

#include "tensor/error.h"

namespace ropegrad {

// Ordered by promotion rank: bool < int64 < float32 < float64.
enum class DType : uint8_t { Bool, Int64, Float32, Float64 };

inline constexpr DType kDefaultFloat = DType::Float32;

constexpr size_t element_size(DType dtype) {
  switch (dtype) {
    case DType::Bool: return 1;
    case DType::Int64: return 8;
    case DType::Float32: return 4;
    case DType::Float64: return 8;
  }
  return 0;
}

// The name PyTorch prints: "torch.float32" -> "float32".
constexpr std::string_view dtype_name(DType dtype) {
  switch (dtype) {
    case DType::Bool: return "bool";
    case DType::Int64: return "int64";
    case DType::Float32: return "float32";
    case DType::Float64: return "float64";
  }
  return "?";
}

constexpr bool is_floating(DType dtype) {
  return dtype == DType::Float32 || dtype == DType::Float64;
}

// torch.promote_types for two tensor operands.
constexpr DType promote_types(DType a, DType b) { return a > b ? a : b; }

// The C++ type stored for each dtype.
template <DType D> struct DTypeTraits;
template <> struct DTypeTraits<DType::Bool> { using type = bool; };
template <> struct DTypeTraits<DType::Int64> { using type = int64_t; };
template <> struct DTypeTraits<DType::Float32> { using type = float; };
template <> struct DTypeTraits<DType::Float64> { using type = double; };

template <typename T> constexpr DType dtype_of();
template <> constexpr DType dtype_of<bool>() { return DType::Bool; }
template <> constexpr DType dtype_of<int64_t>() { return DType::Int64; }
template <> constexpr DType dtype_of<float>() { return DType::Float32; }
template <> constexpr DType dtype_of<double>() { return DType::Float64; }

// Calls fn(T{}) with T the C++ type of `dtype`: the one place a runtime dtype
// becomes a compile-time type, so kernels are templates with no per-element
// dispatch.
template <typename Fn>
decltype(auto) dispatch_all(DType dtype, Fn&& fn) {
  switch (dtype) {
    case DType::Bool: return fn(bool{});
    case DType::Int64: return fn(int64_t{});
    case DType::Float32: return fn(float{});
    case DType::Float64: return fn(double{});
  }
  throw Error("dispatch: unknown dtype");
}

template <typename Fn>
decltype(auto) dispatch_floating(DType dtype, std::string_view op, Fn&& fn) {
  switch (dtype) {
    case DType::Float32: return fn(float{});
    case DType::Float64: return fn(double{});
    default: fail(op, "expected a floating-point tensor (float32 or float64), got {}",
                  dtype_name(dtype));
  }
}

// Numbers (int64 and floats), not bool.
template <typename Fn>
decltype(auto) dispatch_numeric(DType dtype, std::string_view op, Fn&& fn) {
  switch (dtype) {
    case DType::Int64: return fn(int64_t{});
    case DType::Float32: return fn(float{});
    case DType::Float64: return fn(double{});
    default: fail(op, "expected a numeric tensor, got {}", dtype_name(dtype));
  }
}

}  // namespace ropegrad
