// The outputs chapter 10 (RoPE, complex form) shows, printed by the library
// itself; the docs test compares them with the chapter. One mode per block:
//   snippet_ch10_rope_complex views | complex-mul | real-vs-complex | conjugate | conjugate-phase
#include <iostream>
#include <string>
#include <utility>

#include <fmt/format.h>

#include "autograd/ops.h"
#include "nn/functional.h"
#include "nn/rope.h"

using namespace ropegrad;

namespace {

nn::RopeConfig rope_config(int64_t dh, nn::RopePairing pairing = nn::RopePairing::Interleaved) {
  nn::RopeConfig config;
  config.head_dim = dh;
  config.pairing = pairing;
  return config;
}

// Re(sum_k a_k b_k) of two complex tensors (..., n, 2).
double real_part_of_sum(const Tensor& a, const Tensor& b) {
  return sum(select(nn::complex_mul(a, b), -1, 0)).item();
}

}  // namespace

int main(int argc, char** argv) {
  const std::string what = argc > 1 ? argv[1] : "";
  if (what == "views") {
    // view_as_complex and view_as_real are views: no copy either way
    Tensor x = arange(0.0, 8.0, 1.0, DType::Float64);
    x = view(x, {2, 4});
    Tensor z = nn::view_as_complex(x);
    Tensor back = nn::view_as_real(z);
    std::cout << "x " << shape_str(x.shape()) << " strides " << shape_str(x.strides()) << " -> z "
              << shape_str(z.shape()) << " strides " << shape_str(z.strides()) << ", same storage "
              << z.shares_storage_with(x) << "\n";
    std::cout << "view_as_real -> " << shape_str(back.shape()) << ", same storage " << back.shares_storage_with(x)
              << "\n";
  } else if (what == "complex-mul") {
    // (1+2i)(3+4i) and the gradients of L = Re(ab)
    Tensor a = tensor({1.0, 2.0}, DType::Float64).requires_grad_();
    Tensor b = tensor({3.0, 4.0}, DType::Float64).requires_grad_();
    Tensor ab = nn::complex_mul(a, b);
    std::cout << "(1+2i)(3+4i) = " << ab << "\n";
    backward(select(ab, -1, 0));
    std::cout << "L = Re(ab): grad_a = " << a.grad() << ", grad_b = " << b.grad() << "\n";
  } else if (what == "real-vs-complex") {
    // the two forms agree bit for bit; the complex form refuses half-split pairs
    nn::RotaryEmbedding rope(rope_config(64));
    Generator gen(0);
    Tensor x = randn({2, 4, 100, 64}, kDefaultFloat, &gen);
    const double diff = max(abs(rope.forward(x) - rope.forward_complex(x))).item();
    std::cout << "max |real - complex| over (2, 4, 100, 64): " << diff << "\n";
    nn::RotaryEmbedding half(rope_config(64, nn::RopePairing::HalfSplit));
    try {
      (void)half.forward_complex(x);
    } catch (const Error& e) {
      std::cout << e.what() << "\n";
    }
  } else if (what == "conjugate") {
    // a query at 7 and a key at 3: the real dot product is Re(sum zq conj(zk))
    nn::RotaryEmbedding rope(rope_config(64), DType::Float64);
    Generator gen(0);
    Tensor q = rope.forward(randn({1, 64}, DType::Float64, &gen), tensor_i64({7}));
    Tensor k = rope.forward(randn({1, 64}, DType::Float64, &gen), tensor_i64({3}));
    Tensor zq = nn::view_as_complex(q), zk = nn::view_as_complex(k);
    Tensor conj_zk = zk * tensor({1.0, -1.0}, DType::Float64);  // (re, -im)
    fmt::print("real dot {:.10f}, Re(sum zq conj(zk)) {:.10f}, Re(sum zq zk) {:.10f}\n", sum(q * k).item(),
               real_part_of_sum(zq, conj_zk), real_part_of_sum(zq, zk));
  } else if (what == "conjugate-phase") {
    // RoPE rotates q and k alike; the recipe that rotates the key by the
    // conjugate phase e^{-i n w} gives scores that depend on m + n
    nn::RotaryEmbedding rope(rope_config(64), DType::Float64);
    Generator gen(0);
    const Tensor q = randn({1, 64}, DType::Float64, &gen), k = randn({1, 64}, DType::Float64, &gen);
    const Tensor flip = tensor({1.0, -1.0}, DType::Float64);  // (re, im) -> (re, -im)
    const auto conj = [&](const Tensor& x) { return nn::view_as_real(nn::view_as_complex(x) * flip); };
    for (const auto& [m, n] : {std::pair<int64_t, int64_t>{2, 0}, {12, 10}, {102, 100}}) {
      const Tensor rq = rope.forward(q, tensor_i64({m}));
      const Tensor rk = rope.forward(k, tensor_i64({n}));
      const Tensor conj_phase_k = conj(rope.forward(conj(k), tensor_i64({n})));  // k e^{-i n w}
      fmt::print("m = {:3}, n = {:3}: RoPE score {:.4f}, key rotated by the conjugate phase {:.4f}\n", m, n,
                 sum(rq * rk).item(), sum(rq * conj_phase_k).item());
    }
  } else {
    std::cerr << "usage: snippet_ch10_rope_complex views | complex-mul | real-vs-complex | conjugate | "
                 "conjugate-phase\n";
    return 2;
  }
  return 0;
}
