// The outputs chapter 9 (RoPE, real form) shows, printed by RotaryEmbedding
// itself; the docs test compares them with the chapter. One mode per block:
//   snippet_ch09_rope frequencies | e0 | relative | table | positions | backward
#include <cmath>
#include <iostream>
#include <string>

#include <fmt/format.h>

#include "autograd/ops.h"
#include "nn/rope.h"

using namespace ropegrad;

namespace {

// A RotaryEmbedding for head size dh, tables in float64.
nn::RotaryEmbedding make_rope(int64_t dh, int64_t max_seq_len = 512) {
  nn::RopeConfig config;
  config.head_dim = dh;
  config.max_seq_len = max_seq_len;
  return nn::RotaryEmbedding(config, DType::Float64);
}

// The value of a module's buffer `name` at (row, col).
double buffer_at(const nn::Module& m, const std::string& name, int64_t row, int64_t col) {
  for (const auto& [n, t] : m.named_buffers()) {
    if (n == name) return t.at({row, col});
  }
  return NAN;
}

}  // namespace

int main(int argc, char** argv) {
  const std::string what = argc > 1 ? argv[1] : "";
  if (what == "frequencies") {
    // omega_k = 10000^(-2k/dh) for dh = 8
    nn::RotaryEmbedding rope = make_rope(8);
    std::cout << "frequencies (dh=8):";
    for (double w : rope.frequencies()) std::cout << " " << w;
    std::cout << "\n";
  } else if (what == "e0") {
    // e0 at positions 0 and 1: the first pair turns by 0 and by 1 radian
    nn::RotaryEmbedding rope = make_rope(8);
    Tensor x = zeros({2, 8}, DType::Float64);
    Tensor first = narrow(x, 1, 0, 1);
    fill_(first, 1.0);
    std::cout << "rope([e0; e0]) at positions 0,1:\n" << rope.forward(x) << "\n";
  } else if (what == "relative") {
    // the score of q at m and k at n depends only on m - n
    nn::RotaryEmbedding rope = make_rope(8);
    Generator gen(0);
    Tensor q = randn({1, 8}, DType::Float64, &gen);
    Tensor k = randn({1, 8}, DType::Float64, &gen);
    const int64_t pairs[][2] = {{5, 2}, {13, 10}, {103, 100}, {2, 5}};
    for (const auto& [m, n] : pairs) {
      Tensor qm = rope.forward(q, tensor_i64({m}));
      Tensor kn = rope.forward(k, tensor_i64({n}));
      fmt::print("m={} n={} score {:.12f}\n", m, n, sum(qm * kn).item());
    }
  } else if (what == "table") {
    // a table made for 4 positions grows for position 9, then 20
    nn::RotaryEmbedding rope = make_rope(8, /*max_seq_len=*/4);
    Tensor x = zeros({1, 8}, DType::Float64);
    Tensor first = narrow(x, 1, 0, 1);
    fill_(first, 1.0);
    std::cout << "position 9: " << rope.forward(x, tensor_i64({9})) << "\n";
    fmt::print("cached_length after position 9: {}; cos 9 = {:.4f}, sin 9 = {:.4f}; cos 3 = {:.4f}\n",
               rope.cached_length(), buffer_at(rope, "cos_cached", 9, 0), buffer_at(rope, "sin_cached", 9, 0),
               buffer_at(rope, "cos_cached", 3, 0));
    (void)rope.forward(x, tensor_i64({20}));
    fmt::print("cached_length after position 20: {}\n", rope.cached_length());
  } else if (what == "positions") {
    // (B, T) positions: batch 0 at 0, 1, 2 and batch 1 at 7, 8, 9, over 2 heads
    nn::RotaryEmbedding rope = make_rope(8);
    Tensor x = ones({2, 2, 3, 8}, DType::Float64);  // (B, H, T, dh)
    Tensor positions = tensor_i64({0, 1, 2, 7, 8, 9}, {2, 3});
    Tensor y = rope.forward(x, positions);
    std::cout << "(B,T) positions: y[1,0,:,0:2] = " << narrow(select(select(y, 0, 1), 0, 0), -1, 0, 2) << "\n";
  } else if (what == "backward") {
    // the gradient of sum(w * rope(x)) is w rotated back by -theta
    nn::RotaryEmbedding rope = make_rope(8);
    Generator gen(1);
    const int64_t t = 5, half = 4;
    Tensor x = randn({t, 8}, DType::Float64, &gen).requires_grad_();
    Tensor w = randn({t, 8}, DType::Float64, &gen);
    backward(sum(w * rope.forward(x)));
    double worst = 0;
    for (int64_t p = 0; p < t; ++p) {
      for (int64_t k = 0; k < half; ++k) {
        const double angle = static_cast<double>(p) * rope.frequencies()[k];
        const double c = std::cos(angle), s = std::sin(angle);
        const double wa = w.at({p, 2 * k}), wb = w.at({p, 2 * k + 1});
        worst = std::max(worst, std::abs(x.grad().at({p, 2 * k}) - (wa * c + wb * s)));
        worst = std::max(worst, std::abs(x.grad().at({p, 2 * k + 1}) - (-wa * s + wb * c)));
      }
    }
    std::cout << "max |grad - R(-theta) w| = " << worst << "\n";
  } else {
    std::cerr << "usage: snippet_ch09_rope frequencies | e0 | relative | table | positions | backward\n";
    return 2;
  }
  return 0;
}
