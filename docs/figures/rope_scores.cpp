// The data of docs/figures/rope-scores-vs-distance.svg (chapter 11): the RoPE
// score of a query at position m against a key at position m - d,
//   score(d) = (R_m q) . (R_{m-d} k),   d = 0 .. 2048,
// for one fixed random q (dh = 64, seed 2024) and k = q (the key carries the
// query's own content, so score(0) = |q|^2 and the curve shows how that match
// fades with distance), under each scaling of nn/rope.h: the query sits at
// m = 2048; PI, NTK and YaRN stretch a 512-token model by s = 4 (YaRN with
// alpha = 1, beta = 32); xPos uses gamma = 0.4, scale_base = 512. Float64
// throughout. Prints CSV on stdout: d,none,pi,ntk,yarn,xpos.
//
// Build and run from the repository root, after building the library (build/libropegrad.a):
//   g++ -std=c++20 -O2 -I. docs/figures/rope_scores.cpp build/libropegrad.a $(pkg-config --libs openblas) -lfmt -o /tmp/rope_scores
//   /tmp/rope_scores > /tmp/rope_scores.csv
//   /usr/bin/python3 docs/figures/plot_rope_scores.py /tmp/rope_scores.csv docs/figures/rope-scores-vs-distance.svg
#include <cstdio>
#include <string>
#include <vector>

#include "nn/rope.h"

using namespace ropegrad;

int main() {
  constexpr int64_t kHeadDim = 64, kMaxDistance = 2048, kQueryPosition = 2048;
  constexpr double kFactor = 4.0;         // s: a 512-token model stretched to 2048
  constexpr int64_t kOriginalLength = 512;

  Generator gen(2024);
  const Tensor q = randn({1, kHeadDim}, DType::Float64, &gen);  // (T = 1, dh)
  // The key rows: the same vector at positions m - d for d = 0 .. 2048.
  const Tensor keys = contiguous(expand(q, {kMaxDistance + 1, kHeadDim}));  // (2049, dh)
  std::vector<int64_t> key_positions(kMaxDistance + 1);
  for (int64_t d = 0; d <= kMaxDistance; ++d) key_positions[d] = kQueryPosition - d;
  const Tensor query_position = tensor_i64({kQueryPosition});
  const Tensor key_position = tensor_i64(key_positions);

  struct Curve {
    std::string name;
    nn::RopeScaling scaling;
  };
  const std::vector<Curve> curves = {{"none", nn::RopeScaling::None},
                                     {"pi", nn::RopeScaling::PositionInterpolation},
                                     {"ntk", nn::RopeScaling::NTK},
                                     {"yarn", nn::RopeScaling::YaRN},
                                     {"xpos", nn::RopeScaling::XPos}};
  std::vector<std::vector<double>> scores;
  for (const Curve& c : curves) {
    nn::RopeConfig config;
    config.head_dim = kHeadDim;
    config.max_seq_len = kOriginalLength;
    config.scaling = c.scaling;
    config.factor = kFactor;
    config.original_max_seq_len = kOriginalLength;
    nn::RotaryEmbedding rope(config, DType::Float64);
    const Tensor rq = rope.forward(q, query_position, /*is_key=*/false);   // (1, dh)
    const Tensor rk = rope.forward(keys, key_position, /*is_key=*/true);   // (2049, dh)
    scores.push_back(matmul(rk, reshape(rq, {kHeadDim})).to_vector<double>());  // (2049)
  }

  std::printf("d");
  for (const Curve& c : curves) std::printf(",%s", c.name.c_str());
  std::printf("\n");
  for (int64_t d = 0; d <= kMaxDistance; ++d) {
    std::printf("%ld", static_cast<long>(d));
    for (const auto& s : scores) std::printf(",%.6f", s[d]);
    std::printf("\n");
  }
}
