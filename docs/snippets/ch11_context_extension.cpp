// The outputs chapter 11 (context-extension scalings) shows, printed by
// RotaryEmbedding itself; the docs test compares them with the chapter.
// (The figure's data is docs/figures/rope_scores.cpp.) One mode per block:
//   snippet_ch11_context_extension frequencies | xpos-range
#include <cmath>
#include <iostream>
#include <numbers>
#include <string>

#include <fmt/format.h>

#include "autograd/ops.h"
#include "nn/rope.h"

using namespace ropegrad;

namespace {

nn::RopeConfig rope_config(int64_t dh, nn::RopeScaling scaling) {
  nn::RopeConfig config;
  config.head_dim = dh;
  config.scaling = scaling;
  config.factor = 4.0;                // s: stretch a 512-token model by 4
  config.original_max_seq_len = 512;  // L, for YaRN
  return config;
}

}  // namespace

int main(int argc, char** argv) {
  const std::string what = argc > 1 ? argv[1] : "";
  if (what == "frequencies") {
    // omega'_k / omega_k of PI, NTK and YaRN for dh = 64, s = 4, L = 512
    const int64_t dh = 64;
    nn::RotaryEmbedding none(rope_config(dh, nn::RopeScaling::None));
    nn::RotaryEmbedding pi(rope_config(dh, nn::RopeScaling::PositionInterpolation));
    nn::RotaryEmbedding ntk(rope_config(dh, nn::RopeScaling::NTK));
    nn::RotaryEmbedding yarn(rope_config(dh, nn::RopeScaling::YaRN));
    fmt::print("YaRN table_scale() = {:.6f}\n", yarn.table_scale());
    fmt::print("| $k$ | $\\omega_k$ | $\\lambda_k$ | $r_k$ | PI | NTK | YaRN |\n");
    fmt::print("|---:|---:|---:|---:|---:|---:|---:|\n");
    for (int64_t k : {0, 3, 4, 8, 12, 15, 16, 24, 31}) {
      const double w = none.frequencies()[k];
      const double wavelength = 2 * std::numbers::pi / w;
      fmt::print("| {} | {:g} | {:.1f} | {:.3f} | {:.4f} | {:.4f} | {:.4f} |\n", k, w, wavelength, 512 / wavelength,
                 pi.frequencies()[k] / w, ntk.frequencies()[k] / w, yarn.frequencies()[k] / w);
    }
  } else if (what == "xpos-range") {
    // xPos with q = k = ones, dh = 8, both at position p (d = 0): the score is 8
    // wherever zeta^(p/512) fits the dtype; past that the rotation is refused
    for (DType dtype : {DType::Float32, DType::Float64}) {
      for (int64_t p : {1000, 20000, 45000, 300000}) {
        nn::RotaryEmbedding rope(rope_config(8, nn::RopeScaling::XPos), dtype);
        const Tensor x = ones({1, 8}, dtype);
        const Tensor at = tensor_i64({p});
        try {
          const Tensor q = rope.forward(x, at, /*is_key=*/false);
          const Tensor k = rope.forward(x, at, /*is_key=*/true);
          std::cout << dtype_name(dtype) << " p=" << p << " q.k (d=0) = " << sum(q * k).item() << "\n";
        } catch (const Error& e) {
          std::cout << dtype_name(dtype) << " p=" << p << ": " << e.what() << "\n";
        }
      }
    }
  } else {
    std::cerr << "usage: snippet_ch11_context_extension frequencies | xpos-range\n";
    return 2;
  }
  return 0;
}
