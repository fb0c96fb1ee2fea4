// Elementwise maps with broadcasting: out[i] = f(a[i], b[i], ...).
//
// `map<Out, In...>(f, a, b, ...)` is how every elementwise op and most
// backward formulas are computed: one pass over memory, `f` inlined into the
// loop, the dtype chosen once outside it. Inputs are broadcast to a common
// shape (stride 0, no copy) and must already have the C++ types `In...`; the
// output is a new contiguous tensor.
#pragma once

#include <array>
#include <string>
#include <utility>

#include "tensor/parallel.h"
#include "tensor/simd.h"
#include "tensor/strided_loop.h"
#include "tensor/tensor.h"

namespace ropegrad::kernels {

// Elements per chunk below which splitting across threads costs more than it saves.
inline constexpr int64_t kParallelGrain = 1 << 15;

// Tensor k of a map (0 the output) holds the element type T it is read as:
// one of another dtype would have its bytes reinterpreted, and read past its
// end when its elements are narrower. Once per call, outside the loop.
template <typename T>
void check_read_as(const Tensor& t, size_t k) {
  RG_CHECK(t.dtype() == dtype_of<T>(), "elementwise map",
           "{} is {} but the kernel reads it as {}: convert it first (kernels::to, or like(saved, g) in a backward)",
           k == 0 ? std::string("the output") : "input " + std::to_string(k - 1), dtype_name(t.dtype()),
           dtype_name(dtype_of<T>()));
}

template <typename Out, typename... In, typename F, size_t... I>
void map_into_impl(const Tensor& out, F& f, const std::array<Tensor, sizeof...(In)>& ins,
                   std::index_sequence<I...>) {
  check_read_as<Out>(out, 0);
  (check_read_as<In>(ins[I], I + 1), ...);
  constexpr size_t N = 1 + sizeof...(In);
  std::array<std::byte*, N> base{out.raw_data(), ins[I].raw_data()...};
  std::array<Shape, N> strides;
  strides[0] = out.strides();
  ((strides[I + 1] = broadcast_strides(ins[I].shape(), ins[I].strides(), out.shape())), ...);
  constexpr std::array<int64_t, N> sizes{static_cast<int64_t>(sizeof(Out)),
                                         static_cast<int64_t>(sizeof(In))...};
  for (size_t k = 0; k < N; ++k) {
    for (auto& s : strides[k]) s *= sizes[k];
  }
  const StridedLoop<N> loop = make_loop<N>(out.shape(), base, strides);
  const auto inner = [&](const std::array<std::byte*, N>& p, int64_t n,
                     const std::array<int64_t, N>& st) {
    Out* o = reinterpret_cast<Out*>(p[0]);
    const bool contiguous = ((st[I + 1] == sizes[I + 1]) && ...) && st[0] == sizes[0];
    // The flat loops below are vectorised, for AVX2 too where the CPU has it
    // (simd::run_best, tensor/simd.h: same bits either way).
    if (contiguous) {  // the common case
      simd::run_best([&] {
        for (int64_t i = 0; i < n; ++i) o[i] = f(reinterpret_cast<const In*>(p[I + 1])[i]...);
      });
      return;
    }
    if constexpr (sizeof...(In) == 2) {
      // tensor (op) broadcast scalar and the reverse: hoist the scalar load.
      if (st[0] == sizes[0] && st[1] == sizes[1] && st[2] == 0) {
        using A = std::tuple_element_t<0, std::tuple<In...>>;
        using B = std::tuple_element_t<1, std::tuple<In...>>;
        const A* a = reinterpret_cast<const A*>(p[1]);
        const B b = *reinterpret_cast<const B*>(p[2]);
        simd::run_best([&] {
          for (int64_t i = 0; i < n; ++i) o[i] = f(a[i], b);
        });
        return;
      }
      if (st[0] == sizes[0] && st[1] == 0 && st[2] == sizes[2]) {
        using A = std::tuple_element_t<0, std::tuple<In...>>;
        using B = std::tuple_element_t<1, std::tuple<In...>>;
        const A a = *reinterpret_cast<const A*>(p[1]);
        const B* b = reinterpret_cast<const B*>(p[2]);
        simd::run_best([&] {
          for (int64_t i = 0; i < n; ++i) o[i] = f(a, b[i]);
        });
        return;
      }
    }
    for (int64_t i = 0; i < n; ++i) {
      *reinterpret_cast<Out*>(p[0] + i * st[0]) =
          f(*reinterpret_cast<const In*>(p[I + 1] + i * st[I + 1])...);
    }
  };
  // Large maps are split along the outermost dim across the thread pool;
  // each element is computed exactly as it would be on one thread.
  const int64_t total = out.numel();
  if (total < 2 * kParallelGrain || loop.shape.empty()) {
    run_loop(loop, inner);
    return;
  }
  const int64_t outer = loop.shape[0];
  parallel_for(0, outer, std::max<int64_t>(1, kParallelGrain * outer / total), [&](int64_t lo, int64_t hi) {
    StridedLoop<N> part = loop;
    part.shape[0] = hi - lo;
    for (size_t k = 0; k < N; ++k) part.base[k] += lo * loop.byte_strides[k][0];
    run_loop(part, inner);
  });
}

// Writes f(inputs...) into an existing tensor `out` (any strides); inputs are
// broadcast to out's shape.
template <typename Out, typename... In, typename F>
void map_into(const Tensor& out, F f, const std::array<Tensor, sizeof...(In)>& ins) {
  map_into_impl<Out, In...>(out, f, ins, std::index_sequence_for<In...>{});
}

// A new contiguous tensor of the inputs' broadcast shape holding f(inputs...).
template <typename Out, typename... In, typename F>
Tensor map(F f, const std::array<Tensor, sizeof...(In)>& ins, std::string_view op = "map") {
  Shape shape = ins[0].shape();
  for (size_t k = 1; k < ins.size(); ++k) shape = broadcast_shapes(shape, ins[k].shape(), op);
  Tensor out = Tensor::empty(shape, dtype_of<Out>());
  map_into<Out, In...>(out, f, ins);
  return out;
}

// Same-dtype floating maps, the form backward formulas use:
//   map_float(x, [](auto x) { return x * x; })
template <typename F>
Tensor map_float(const Tensor& a, F f) {
  return dispatch_floating(a.dtype(), "map", [&](auto tag) {
    using T = decltype(tag);
    return map<T, T>([&](T x) { return static_cast<T>(f(x)); }, {a});
  });
}
template <typename F>
Tensor map_float(const Tensor& a, const Tensor& b, F f) {
  RG_CHECK(a.dtype() == b.dtype(), "map", "dtypes differ: {} vs {}", dtype_name(a.dtype()),
           dtype_name(b.dtype()));
  return dispatch_floating(a.dtype(), "map", [&](auto tag) {
    using T = decltype(tag);
    return map<T, T, T>([&](T x, T y) { return static_cast<T>(f(x, y)); }, {a, b});
  });
}
template <typename F>
Tensor map_float(const Tensor& a, const Tensor& b, const Tensor& c, F f) {
  RG_CHECK(a.dtype() == b.dtype() && b.dtype() == c.dtype(), "map", "dtypes differ: {}, {}, {}",
           dtype_name(a.dtype()), dtype_name(b.dtype()), dtype_name(c.dtype()));
  return dispatch_floating(a.dtype(), "map", [&](auto tag) {
    using T = decltype(tag);
    return map<T, T, T, T>([&](T x, T y, T z) { return static_cast<T>(f(x, y, z)); }, {a, b, c});
  });
}

}  // namespace ropegrad::kernels
