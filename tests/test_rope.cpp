// Rotary position embedding (docs/appendix-a-formulas.md, RoPE): nn/rope.h and the rope_rotate /
// complex_mul functions of nn/functional.h.
//
// 1. Parity with PyTorch (tests/fixtures/make_attention_fixtures.py wrote the
//    .npy files): interleaved and half-split pairs, default and explicit
//    (B, T) positions; outputs and d(sum(out * w))/dx, float64 and float32.
// 2. float64 gradchecks: rope_rotate, complex_mul, RotaryEmbedding (every scaling).
// 3. Equalities that teach what RoPE is: the complex form is the interleaved
//    real form; half-split is interleaved with the head dims permuted; scores
//    depend only on m - n; rotations keep norms; the table extends on demand.
// 4. The context-extension scalings, checked against their formulas.
// 5. Bad inputs: every Error names RotaryEmbedding (or rope) and the value.
//
// Tolerances: float64 |a - e| <= 1e-12 + 1e-10 |e|; float32 |a - e| <= 1e-6 + 1e-5 |e|.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <functional>
#include <iostream>
#include <string>
#include <vector>

#include "autograd/engine.h"
#include "autograd/gradcheck.h"
#include "autograd/ops.h"
#include "nn/functional.h"
#include "nn/rope.h"
#include "tensor/exercise.h"
#include "tensor/random.h"
#include "tests/support/test_util.h"

using namespace ropegrad;
using namespace ropegrad::nn;
using namespace ropegrad::testing;
using ::testing::HasSubstr;

namespace {

// ---- helpers --------------------------------------------------------------------------------

Tensor fixture(const std::string& name) { return load_fixture("attention/" + name); }

constexpr Tol kTol64{1e-10, 1e-12};
// float32 parity: the error bound of tests/support/test_util.h.

double dot(const Tensor& a, const Tensor& b) { return sum(mul(a, b)).item<double>(); }

RopeConfig config(int64_t head_dim, RopePairing pairing = RopePairing::Interleaved, int64_t max_seq_len = 16) {
  RopeConfig c;
  c.head_dim = head_dim;
  c.max_seq_len = max_seq_len;
  c.pairing = pairing;
  return c;
}

RopeConfig scaled(int64_t head_dim, RopeScaling scaling, double factor) {
  RopeConfig c = config(head_dim);
  c.scaling = scaling;
  c.factor = factor;
  return c;
}

Tensor pos(int64_t p) { return tensor_i64({p}); }

}  // namespace

// ---- 1. parity with PyTorch ---------------------------------------------------------------------

struct RopeParityCase {
  const char* name;
  RopePairing pairing;
  bool explicit_positions;
};

class RopeParity : public ::testing::TestWithParam<std::tuple<RopeParityCase, DType>> {};

TEST_P(RopeParity, ForwardAndGradientMatchTorch) {
  const RopeParityCase c = std::get<0>(GetParam());  // plain variables: the lambdas below capture them
  const DType dtype = std::get<1>(GetParam());
  const std::string name = c.name;
  const Tensor positions = c.explicit_positions ? fixture(name + ".positions") : Tensor();  // (B, T) int64
  // leaves: x (B, H, T, dh) = (2, 3, 5, 8), w.
  const ParityRun run = [&](const std::vector<Tensor>& ls) {
    // A 16-row table: the (B, T) positions reach 104, so the table must extend.
    RotaryEmbedding rope(config(8, c.pairing, 16), ls[0].dtype());
    Tensor x = ls[0];
    x.requires_grad_(true);
    const Tensor out = rope.forward(x, positions);
    backward(sum(mul(out, ls[1])));
    return NamedTensors{{"out", out.detach()}, {"grad_x", x.grad()}};
  };
  const std::vector<Tensor> leaves = {to(fixture(name + ".x"), dtype), to(fixture(name + ".w"), dtype)};
  const auto expected = [&](const std::string& n) { return fixture(name + "." + dtype_tag(dtype) + "." + n); };
  if (dtype == DType::Float64) {
    for (const auto& [n, t] : run(leaves)) EXPECT_TRUE(all_close(t, expected(n), kTol64)) << n;
    return;
  }
  // K = 2: each output is a pair's rotation, x_a cos - x_b sin; stages: the
  // table (cos, sin of a float32 angle), the rotation, the backward's rotation.
  expect_f32_parity(run, leaves, expected, {2, 3}, name + "/f32");
}

INSTANTIATE_TEST_SUITE_P(
    Torch, RopeParity,
    ::testing::Combine(::testing::Values(RopeParityCase{"rope_interleaved", RopePairing::Interleaved, false},
                                         RopeParityCase{"rope_half_split", RopePairing::HalfSplit, false},
                                         RopeParityCase{"rope_positions_bt", RopePairing::Interleaved, true},
                                         RopeParityCase{"rope_positions_bt_half_split", RopePairing::HalfSplit,
                                                        true}),
                       ::testing::Values(DType::Float64, DType::Float32)),
    [](const auto& info) {
      return std::string(std::get<0>(info.param).name) + "_" + dtype_tag(std::get<1>(info.param));
    });

TEST(RopeParityComplex, ComplexFormMatchesTorchInterleaved) {
  RotaryEmbedding rope(config(8), DType::Float64);
  Tensor x = leaf(fixture("rope_interleaved.x"), DType::Float64);
  const Tensor out = rope.forward_complex(x);
  EXPECT_TRUE(all_close(out, fixture("rope_interleaved.f64.out"), kTol64));
  backward(sum(mul(out, fixture("rope_interleaved.w"))));
  EXPECT_TRUE(all_close(x.grad(), fixture("rope_interleaved.f64.grad_x"), kTol64));
}

// ---- 2. gradchecks (float64) ------------------------------------------------------------------------

TEST(RopeGradcheck, RopeRotateBothPairings) {
  Generator gen(7);
  const Tensor angle = rand({4, 3}, DType::Float64, &gen) * 6.0;  // (T, dh/2)
  const Tensor c = cos(angle), s = sin(angle);
  for (RopePairing pairing : {RopePairing::Interleaved, RopePairing::HalfSplit}) {
    Tensor x = randn({2, 4, 6}, DType::Float64, &gen).requires_grad_();  // (B, T, dh)
    const GradcheckResult r =
        gradcheck([&](const std::vector<Tensor>& in) { return rope_rotate(in[0], c, s, pairing); }, {x});
    EXPECT_TRUE(r.passed) << r.report;
  }
}

TEST(RopeGradcheck, ComplexMulBothOperandsWithBroadcasting) {
  Generator gen(8);
  Tensor a = randn({3, 4, 2}, DType::Float64, &gen).requires_grad_();  // (3, 4) complex
  Tensor b = randn({4, 2}, DType::Float64, &gen).requires_grad_();     // (4) complex, broadcast over rows
  const GradcheckResult r =
      gradcheck([](const std::vector<Tensor>& in) { return complex_mul(in[0], in[1]); }, {a, b});
  EXPECT_TRUE(r.passed) << r.report;
  // And the other way round: a broadcast over a size-1 dim of b.
  Tensor c = randn({1, 4, 2}, DType::Float64, &gen).requires_grad_();
  Tensor d = randn({3, 1, 2}, DType::Float64, &gen).requires_grad_();
  const GradcheckResult r2 =
      gradcheck([](const std::vector<Tensor>& in) { return complex_mul(in[0], in[1]); }, {c, d});
  EXPECT_TRUE(r2.passed) << r2.report;
}

TEST(RopeGradcheck, ComplexMulValueIsTheComplexProduct) {
  // (1 + 2i)(3 - i) = 3 - i + 6i - 2i^2 = 5 + 5i;  (0 + 1i)(0 + 1i) = -1.
  const Tensor a = tensor({1, 2, 0, 1}, {2, 2}, DType::Float64);
  const Tensor b = tensor({3, -1, 0, 1}, {2, 2}, DType::Float64);
  EXPECT_EQ(complex_mul(a, b).to_vector<double>(), (std::vector<double>{5, 5, -1, 0}));
}

TEST(RopeGradcheck, RotaryEmbeddingForwardEveryScaling) {
  for (RopeScaling scaling : {RopeScaling::None, RopeScaling::PositionInterpolation, RopeScaling::NTK,
                              RopeScaling::YaRN, RopeScaling::XPos}) {
    for (RopePairing pairing : {RopePairing::Interleaved, RopePairing::HalfSplit}) {
      RopeConfig c = scaled(8, scaling, 4.0);
      c.pairing = pairing;
      c.original_max_seq_len = 64;
      RotaryEmbedding rope(c, DType::Float64);
      Generator gen(9);
      Tensor x = randn({2, 5, 8}, DType::Float64, &gen).requires_grad_();  // (B, T, dh)
      const Tensor positions = tensor_i64({0, 3, 9, 40, 200});
      for (bool is_key : {false, true}) {
        const GradcheckResult r = gradcheck(
            [&](const std::vector<Tensor>& in) { return rope.forward(in[0], positions, is_key); }, {x});
        EXPECT_TRUE(r.passed) << "scaling " << static_cast<int>(scaling) << " key " << is_key << "\n"
                              << r.report;
      }
    }
  }
}

TEST(RopeGradcheck, ComplexFormForward) {
  RotaryEmbedding rope(config(6), DType::Float64);
  Generator gen(10);
  Tensor x = randn({2, 4, 6}, DType::Float64, &gen).requires_grad_();
  const GradcheckResult r =
      gradcheck([&](const std::vector<Tensor>& in) { return rope.forward_complex(in[0]); }, {x});
  EXPECT_TRUE(r.passed) << r.report;
}

// ---- 3. equalities that teach --------------------------------------------------------------------

TEST(RopeForms, HandComputedRotationOfOnePair) {
  // dh = 2: one pair, frequency base^0 = 1, so position p rotates by p radians.
  RotaryEmbedding rope(config(2), DType::Float64);
  const Tensor x = tensor({1, 0, 1, 0, 0, 2}, {3, 2}, DType::Float64);  // (T, dh), positions 0, 1, 2
  const Tensor y = rope.forward(x);
  // (1, 0) at 0 -> (1, 0); (1, 0) at 1 -> (cos 1, sin 1); (0, 2) at 2 -> (-2 sin 2, 2 cos 2).
  const std::vector<double> expected = {1, 0, std::cos(1.0), std::sin(1.0), -2 * std::sin(2.0), 2 * std::cos(2.0)};
  EXPECT_TRUE(all_close(y, tensor(expected, {3, 2}, DType::Float64), kTol64));
}

// The one-pass rotation, RoPE's fast form, is tested against this plain form
// in tests/test_fast_forms.cpp.

TEST(RopeForms, ComplexFormEqualsRealInterleavedForm) {
  for (RopeScaling scaling : {RopeScaling::None, RopeScaling::YaRN, RopeScaling::XPos}) {
    RotaryEmbedding rope(scaled(8, scaling, 2.0), DType::Float64);
    Generator gen(11);
    const Tensor x = randn({2, 3, 7, 8}, DType::Float64, &gen);  // (B, H, T, dh)
    for (bool is_key : {false, true}) {
      EXPECT_LE(max_abs_diff(rope.forward_complex(x, Tensor(), is_key), rope.forward(x, Tensor(), is_key)), 1e-14);
    }
    // Also on a transposed view, as MultiHeadAttention hands it over: (B, T, H, dh) -> (B, H, T, dh).
    const Tensor bthd = randn({2, 7, 3, 8}, DType::Float64, &gen);
    const Tensor view = transpose(bthd, 1, 2);
    EXPECT_LE(max_abs_diff(rope.forward_complex(view), rope.forward(contiguous(view))), 1e-14);
  }
}

TEST(RopeForms, HalfSplitEqualsInterleavedAfterPermutingProjectionRows) {
  // Interleaved pair k sits at dims (2k, 2k+1); half-split pair k at (k, k + dh/2).
  // perm[j] = which interleaved dim goes to half-split dim j: (0, 2, 4, 6, 1, 3, 5, 7).
  const int64_t dh = 8, d_in = 5, t = 6;
  const Tensor perm = tensor_i64({0, 2, 4, 6, 1, 3, 5, 7});
  Generator gen(12);
  const Tensor x = randn({t, d_in}, DType::Float64, &gen);
  const Tensor wq = randn({dh, d_in}, DType::Float64, &gen), wk = randn({dh, d_in}, DType::Float64, &gen);
  // Half-split model: the same projections with their rows permuted.
  const Tensor wq_half = index_select(wq, 0, perm), wk_half = index_select(wk, 0, perm);
  RotaryEmbedding inter(config(dh, RopePairing::Interleaved), DType::Float64);
  RotaryEmbedding half(config(dh, RopePairing::HalfSplit), DType::Float64);
  const Tensor q_i = inter.forward(matmul(x, transpose(wq, 0, 1)));  // (T, dh)
  const Tensor k_i = inter.forward(matmul(x, transpose(wk, 0, 1)));
  const Tensor q_h = half.forward(matmul(x, transpose(wq_half, 0, 1)));
  const Tensor k_h = half.forward(matmul(x, transpose(wk_half, 0, 1)));
  // The rotated vectors are the same up to the permutation ...
  EXPECT_LE(max_abs_diff(q_h, index_select(q_i, 1, perm)), 1e-12);
  // ... so every score q_m . k_n is identical: attention cannot tell the two apart.
  const Tensor scores_i = matmul(q_i, transpose(k_i, 0, 1));  // (T, T)
  const Tensor scores_h = matmul(q_h, transpose(k_h, 0, 1));
  EXPECT_LE(max_abs_diff(scores_i, scores_h), 1e-12);
  // Without the permutation the two pairings give different scores.
  const Tensor q_h_unpermuted = half.forward(matmul(x, transpose(wq, 0, 1)));
  const Tensor k_h_unpermuted = half.forward(matmul(x, transpose(wk, 0, 1)));
  EXPECT_GT(max_abs_diff(scores_i, matmul(q_h_unpermuted, transpose(k_h_unpermuted, 0, 1))), 1e-3);
}

TEST(RopeForms, ScoresDependOnlyOnRelativePosition) {
  for (RopePairing pairing : {RopePairing::Interleaved, RopePairing::HalfSplit}) {
    RotaryEmbedding rope(config(8, pairing, 8), DType::Float64);
    Generator gen(13);
    const Tensor q = randn({1, 8}, DType::Float64, &gen), k = randn({1, 8}, DType::Float64, &gen);  // (T=1, dh)
    for (auto [m, n] : std::vector<std::pair<int64_t, int64_t>>{{3, 1}, {1, 3}, {10, 10}, {0, 7}}) {
      const double base = dot(rope.forward(q, pos(m)), rope.forward(k, pos(n), true));
      for (int64_t shift : {1, 5, 50, 1000}) {
        const double shifted = dot(rope.forward(q, pos(m + shift)), rope.forward(k, pos(n + shift), true));
        EXPECT_NEAR(shifted, base, 1e-10) << "m " << m << " n " << n << " shift " << shift;
      }
    }
    // At equal positions the rotation cancels: the score is the unrotated q . k.
    EXPECT_NEAR(dot(rope.forward(q, pos(37)), rope.forward(k, pos(37), true)), dot(q, k), 1e-12);
  }
}

TEST(RopeForms, RotationPreservesNorms) {
  RotaryEmbedding rope(config(8), DType::Float64);
  Generator gen(14);
  const Tensor x = randn({2, 9, 8}, DType::Float64, &gen);  // (B, T, dh)
  const Tensor y = rope.forward(x);
  // Every (b, t) row keeps its length: a rotation of each pair.
  EXPECT_LE(max_abs_diff(sqrt(sum(mul(y, y), {-1})), sqrt(sum(mul(x, x), {-1}))), 1e-12);
  // Each pair keeps its length too.
  const Tensor xp = view(x, {2, 9, 4, 2}), yp = view(y, {2, 9, 4, 2});
  EXPECT_LE(max_abs_diff(sum(mul(yp, yp), {-1}), sum(mul(xp, xp), {-1})), 1e-12);
  // And the input at position 0 is unchanged (angle 0).
  EXPECT_LE(max_abs_diff(select(y, 1, 0), select(x, 1, 0)), 0.0);
}

TEST(RopeTable, PositionsPastMaxSeqLenExtendTheTable) {
  RotaryEmbedding small(config(8, RopePairing::Interleaved, 4), DType::Float64);
  RotaryEmbedding large(config(8, RopePairing::Interleaved, 64), DType::Float64);
  EXPECT_EQ(small.cached_length(), 4);
  Generator gen(15);
  const Tensor x = randn({2, 10, 8}, DType::Float64, &gen);  // T = 10 > max_seq_len = 4
  const Tensor y_small = small.forward(x);
  EXPECT_GE(small.cached_length(), 10);
  EXPECT_LE(max_abs_diff(y_small, large.forward(x)), 0.0);  // same double computation, row by row
  // Explicit positions far past the table, too.
  const Tensor positions = tensor_i64({3, 30, 31, 63, 0, 17, 5, 44, 9, 12});
  EXPECT_LE(max_abs_diff(small.forward(x, positions), large.forward(x, positions)), 0.0);
  EXPECT_GE(small.cached_length(), 64);
  // Never a repeated last row: a unit vector rotated at 3 (the last original row) and 9 differ.
  const Tensor e0 = tensor({1, 0, 0, 0, 0, 0, 0, 0}, {1, 8}, DType::Float64);
  RotaryEmbedding fresh(config(8, RopePairing::Interleaved, 4), DType::Float64);
  const Tensor at9 = fresh.forward(e0, pos(9));
  EXPECT_GT(max_abs_diff(at9, fresh.forward(e0, pos(3))), 0.1);
  EXPECT_NEAR(at9.at({0, 0}), std::cos(9.0), 1e-15);
  EXPECT_NEAR(at9.at({0, 1}), std::sin(9.0), 1e-15);
}

TEST(RopeTable, ExplicitArangePositionsEqualTheDefault) {
  RotaryEmbedding rope(config(8), DType::Float64);
  Generator gen(16);
  const Tensor x4 = randn({2, 3, 5, 8}, DType::Float64, &gen);  // (B, H, T, dh)
  const Tensor x3 = randn({2, 5, 8}, DType::Float64, &gen);     // (B, T, dh)
  const Tensor def4 = rope.forward(x4), def3 = rope.forward(x3);
  const Tensor t_pos = arange(5);                                            // (T)
  const Tensor bt_pos = contiguous(expand(unsqueeze(arange(5), 0), {2, 5}));  // (B, T)
  EXPECT_LE(max_abs_diff(rope.forward(x4, t_pos), def4), 0.0);
  EXPECT_LE(max_abs_diff(rope.forward(x4, bt_pos), def4), 0.0);
  EXPECT_LE(max_abs_diff(rope.forward(x3, t_pos), def3), 0.0);
  EXPECT_LE(max_abs_diff(rope.forward(x3, bt_pos), def3), 0.0);
  // (B, T) positions: each batch row uses its own positions.
  const Tensor mixed = tensor_i64({0, 1, 2, 3, 4, 7, 8, 9, 10, 11}, {2, 5});
  const Tensor y = rope.forward(x4, mixed);
  EXPECT_LE(max_abs_diff(select(y, 0, 0), select(def4, 0, 0)), 0.0);
  EXPECT_LE(max_abs_diff(select(y, 0, 1), rope.forward(select(x4, 0, 1), arange(7, 12))), 0.0);
}

TEST(RopeTable, TablesAreNonPersistentBuffers) {
  RotaryEmbedding rope(config(8), DType::Float64);
  EXPECT_TRUE(rope.state_dict().empty());  // nothing to save: the tables are recomputed
  EXPECT_TRUE(rope.parameters().empty());
}

// ---- 4. scalings -----------------------------------------------------------------------------------

TEST(RopeScalings, PositionInterpolationEvaluatesAtPOverS) {
  // s = 2: position 2p of the interpolated table is position p of the plain one.
  RotaryEmbedding plain(config(8), DType::Float64);
  RotaryEmbedding pi(scaled(8, RopeScaling::PositionInterpolation, 2.0), DType::Float64);
  Generator gen(17);
  const Tensor x = randn({2, 6, 8}, DType::Float64, &gen);
  EXPECT_LE(max_abs_diff(pi.forward(x, arange(0, 12, 2)), plain.forward(x, arange(6))), 1e-15);
  for (size_t k = 0; k < 4; ++k) EXPECT_DOUBLE_EQ(pi.frequencies()[k], plain.frequencies()[k] / 2.0);
  EXPECT_EQ(pi.table_scale(), 1.0);
}

TEST(RopeScalings, NtkStretchesTheBase) {
  const int64_t dh = 16;
  const double s = 8.0;
  RotaryEmbedding plain(config(dh), DType::Float64);
  RotaryEmbedding ntk(scaled(dh, RopeScaling::NTK, s), DType::Float64);
  const double base = 10000.0 * std::pow(s, 16.0 / 14.0);  // Theta * s^(dh / (dh - 2))
  ASSERT_EQ(ntk.frequencies().size(), 8u);
  for (int64_t k = 0; k < 8; ++k) {
    EXPECT_NEAR(ntk.frequencies()[k], std::pow(base, -2.0 * k / 16.0), 1e-15) << "pair " << k;
  }
  EXPECT_EQ(ntk.frequencies()[0], 1.0);  // the fastest pair is untouched
  EXPECT_NEAR(ntk.frequencies()[7], plain.frequencies()[7] / s, 1e-12 * plain.frequencies()[7]);  // slowest / s
  EXPECT_EQ(ntk.table_scale(), 1.0);
}

TEST(RopeScalings, YarnKeepsFastPairsInterpolatesSlowOnesAndScalesTheTable) {
  const int64_t dh = 64;
  const double s = 4.0;
  RopeConfig c = scaled(dh, RopeScaling::YaRN, s);
  c.original_max_seq_len = 512;
  RotaryEmbedding plain(config(dh), DType::Float64);
  RotaryEmbedding yarn(c, DType::Float64);
  const std::vector<double>& f = yarn.frequencies();
  const std::vector<double>& f0 = plain.frequencies();
  // Pair 0 turns 512 / (2 pi) = 81 times over the context (> beta = 32): unchanged.
  EXPECT_EQ(f[0], f0[0]);
  // The slowest pair turns 0.01 times (< alpha = 1): interpolated, theta / s.
  EXPECT_NEAR(f[31], f0[31] / s, 1e-15);
  // In between, each frequency lies between theta / s and theta.
  for (size_t k = 0; k < f.size(); ++k) {
    EXPECT_LE(f[k], f0[k] * (1 + 1e-15));
    EXPECT_GE(f[k], f0[k] / s * (1 - 1e-15));
  }
  const double mscale = 0.1 * std::log(s) + 1.0;
  EXPECT_NEAR(yarn.table_scale(), mscale, 1e-15);
  // At position 0 every pair is multiplied by the table scale (cos 0 = 1).
  Generator gen(18);
  const Tensor x = randn({1, dh}, DType::Float64, &gen);
  EXPECT_LE(max_abs_diff(yarn.forward(x, pos(0)), mul(x, mscale)), 1e-15);
  // So a score at equal positions is mscale^2 q . k (the attention temperature).
  const Tensor q = randn({1, dh}, DType::Float64, &gen), k = randn({1, dh}, DType::Float64, &gen);
  EXPECT_NEAR(dot(yarn.forward(q, pos(9)), yarn.forward(k, pos(9), true)), mscale * mscale * dot(q, k), 1e-12);
}

TEST(RopeScalings, XposScoreDependsOnRelativeDistanceAndDecays) {
  const int64_t dh = 8;
  RopeConfig c = scaled(dh, RopeScaling::XPos, 1.0);
  RotaryEmbedding xpos(c, DType::Float64);
  RotaryEmbedding plain(config(dh), DType::Float64);
  Generator gen(19);
  const Tensor q = randn({1, dh}, DType::Float64, &gen), k = randn({1, dh}, DType::Float64, &gen);
  auto score = [&](RotaryEmbedding& r, const Tensor& a, const Tensor& b, int64_t m, int64_t n) {
    return dot(r.forward(a, pos(m)), r.forward(b, pos(n), /*is_key=*/true));
  };
  // Relative: (m, n) and (m + s, n + s) score the same.
  for (auto [m, n] : std::vector<std::pair<int64_t, int64_t>>{{5, 2}, {40, 0}, {7, 7}}) {
    for (int64_t shift : {1, 100, 700}) {
      EXPECT_NEAR(score(xpos, q, k, m + shift, n + shift), score(xpos, q, k, m, n), 1e-10);
    }
  }
  // A vector living in one pair k: the xPos score is the RoPE score times zeta_k^((m - n) / 512).
  const int64_t pair = 3;  // the slowest pair of dh = 8: cos(d * 1e-3) stays near 1 for d < 1000
  const double zeta = (2.0 * pair / dh + 0.4) / 1.4;
  std::vector<double> v(dh, 0.0);
  v[2 * pair] = 1.0;
  v[2 * pair + 1] = 0.5;
  const Tensor e = tensor(v, {1, dh}, DType::Float64);
  double previous = INFINITY;
  for (int64_t d : {0, 16, 64, 128, 256, 512, 900}) {
    const double sx = score(xpos, e, e, d, 0), sp = score(plain, e, e, d, 0);
    EXPECT_NEAR(sx, sp * std::pow(zeta, d / 512.0), 1e-12) << "distance " << d;
    EXPECT_LT(sx, previous) << "the score must decay with distance " << d;
    previous = sx;
  }
  EXPECT_NEAR(score(xpos, e, e, 0, 0), 1.25, 1e-15);  // |e|^2: no decay at distance 0
}

// A note, not only a test: the score of a fixed vector with itself against the
// relative distance d, for each scaling (dh = 16, s = 4). The table printed here
// is the data of the docs figure; the assertions pin down what it must show.
TEST(RopeScalings, ScoreAgainstRelativeDistanceForEachScaling) {
  const int64_t dh = 16;
  const double s = 4.0;
  struct Variant {
    const char* name;
    RopeScaling scaling;
  };
  const std::vector<Variant> variants = {{"none", RopeScaling::None},
                                         {"pi", RopeScaling::PositionInterpolation},
                                         {"ntk", RopeScaling::NTK},
                                         {"yarn", RopeScaling::YaRN},
                                         {"xpos", RopeScaling::XPos}};
  const std::vector<int64_t> distances = {0, 1, 2, 4, 8, 16, 32, 64, 128, 256, 512, 1024};
  const Tensor q = ones({1, dh}, DType::Float64);  // |q|^2 = 16
  std::vector<std::vector<double>> table(variants.size());
  std::printf("%8s", "d");
  for (const Variant& v : variants) std::printf(" %10s", v.name);
  std::printf("\n");
  for (size_t i = 0; i < variants.size(); ++i) {
    RopeConfig c = scaled(dh, variants[i].scaling, s);
    c.original_max_seq_len = 256;
    RotaryEmbedding rope(c, DType::Float64);
    const double scale2 = rope.table_scale() * rope.table_scale();
    for (int64_t d : distances) {
      const double score = dot(rope.forward(q, pos(d)), rope.forward(q, pos(0), true));
      // Only d matters: the same pair of tokens 300 positions later scores the same.
      EXPECT_NEAR(dot(rope.forward(q, pos(d + 300)), rope.forward(q, pos(300), true)), score, 1e-9)
          << variants[i].name << " d " << d;
      // Cauchy-Schwarz: never above the score at d = 0 (xPos only shrinks for d >= 0).
      EXPECT_LE(std::abs(score), 16.0 * scale2 + 1e-12) << variants[i].name << " d " << d;
      table[i].push_back(score);
    }
    EXPECT_NEAR(table[i][0], 16.0 * scale2, 1e-12) << variants[i].name;  // d = 0: |q|^2 (times YaRN's mscale^2)
  }
  for (size_t j = 0; j < distances.size(); ++j) {
    std::printf("%8lld", static_cast<long long>(distances[j]));
    for (size_t i = 0; i < variants.size(); ++i) std::printf(" %10.5f", table[i][j]);
    std::printf("\n");
  }
  // Interpolation stretches the curve: PI at distance 4d equals no scaling at distance d.
  for (size_t j = 0; j + 2 < distances.size(); ++j) {  // distances[j + 2] = 4 distances[j] for j >= 1
    if (distances[j] == 0) continue;
    EXPECT_NEAR(table[1][j + 2], table[0][j], 1e-10) << "d " << distances[j];
  }
  // NTK keeps the fastest pair: at d = 1 it is closer to no scaling than PI is.
  EXPECT_LT(std::abs(table[2][1] - table[0][1]), std::abs(table[1][1] - table[0][1]));
}

// ---- 5. bad inputs ------------------------------------------------------------------------------------

TEST(RopeErrors, OddHeadSize) {
  const std::string msg = error_of([] { RotaryEmbedding rope(config(7)); });
  EXPECT_THAT(msg, HasSubstr("RotaryEmbedding"));
  EXPECT_THAT(msg, HasSubstr("7"));
  const Tensor x = zeros({4, 7}), c = zeros({4, 3});
  const std::string msg2 = error_of([&] { rope_rotate(x, c, c, RopePairing::Interleaved); });
  EXPECT_THAT(msg2, HasSubstr("rope"));
  EXPECT_THAT(msg2, HasSubstr("7"));
}

TEST(RopeErrors, HeadSizeMismatch) {
  RotaryEmbedding rope(config(8));
  const std::string msg = error_of([&] { rope.forward(zeros({2, 4, 6})); });
  EXPECT_THAT(msg, HasSubstr("RotaryEmbedding"));
  EXPECT_THAT(msg, HasSubstr("6"));
  EXPECT_THAT(msg, HasSubstr("8"));
}

TEST(RopeErrors, NegativePosition) {
  RotaryEmbedding rope(config(8));
  const std::string msg = error_of([&] { rope.forward(zeros({3, 8}), tensor_i64({0, -3, 1})); });
  EXPECT_THAT(msg, HasSubstr("RotaryEmbedding"));
  EXPECT_THAT(msg, HasSubstr("-3"));
}

TEST(RopeErrors, WrongPositionsShape) {
  RotaryEmbedding rope(config(8));
  const Tensor x = zeros({2, 3, 4, 8});  // (B, H, T, dh)
  const std::string too_long = error_of([&] { rope.forward(x, arange(5)); });
  EXPECT_THAT(too_long, HasSubstr("RotaryEmbedding"));
  EXPECT_THAT(too_long, HasSubstr(shape_str({5})));
  const std::string three_d = error_of([&] { rope.forward(x, zeros({3, 1, 4}, DType::Int64)); });
  EXPECT_THAT(three_d, HasSubstr("RotaryEmbedding"));
  EXPECT_THAT(three_d, HasSubstr(shape_str({3, 1, 4})));
  const std::string wrong_batch = error_of([&] { rope.forward(x, zeros({3, 4}, DType::Int64)); });
  EXPECT_THAT(wrong_batch, HasSubstr("RotaryEmbedding"));
  EXPECT_THAT(wrong_batch, HasSubstr(shape_str({3, 4})));
}

// CS336's token positions: (1, T) broadcasts over the batch, and (..., T)
// broadcasts from the right against x's (..., T); both equal the (B, T) form.
TEST(RopePositions, OneByTAndRightAlignedShapesBroadcast) {
  RotaryEmbedding rope(config(8), DType::Float64);
  Generator gen(3);
  const Tensor x = randn({2, 3, 4, 8}, DType::Float64, &gen);  // (B, H, T, dh)
  const Tensor pos = tensor_i64({5, 6, 7, 8}, {1, 4});      // (1, T)
  const Tensor per_batch = rope.forward(x, cat({pos, pos}, 0));  // (B, T) with equal rows
  EXPECT_TRUE(all_close(rope.forward(x, pos), per_batch, {0, 0}));
  const Tensor shifted = tensor_i64({0, 1, 2, 3, 9, 10, 11, 12}, {2, 4});
  EXPECT_TRUE(all_close(rope.forward(x, reshape(shifted, {2, 1, 4})), rope.forward(x, shifted), {0, 0}));
}

TEST(RopeErrors, NonInt64Positions) {
  RotaryEmbedding rope(config(8));
  const std::string msg = error_of([&] { rope.forward(zeros({3, 8}), tensor({0, 1, 2})); });
  EXPECT_THAT(msg, HasSubstr("RotaryEmbedding"));
  EXPECT_THAT(msg, HasSubstr("float32"));
}

TEST(RopeErrors, ComplexFormNeedsInterleavedPairs) {
  RotaryEmbedding rope(config(8, RopePairing::HalfSplit));
  const std::string msg = error_of([&] { rope.forward_complex(zeros({3, 8})); });
  EXPECT_THAT(msg, HasSubstr("RotaryEmbedding"));
  EXPECT_THAT(msg, HasSubstr("interleaved"));
}

TEST(RopeErrors, ScalingFactorBelowOne) {
  for (RopeScaling scaling : {RopeScaling::PositionInterpolation, RopeScaling::NTK, RopeScaling::YaRN}) {
    const std::string msg = error_of([&] { RotaryEmbedding rope(scaled(8, scaling, 0.5)); });
    EXPECT_THAT(msg, HasSubstr("RotaryEmbedding"));
    EXPECT_THAT(msg, HasSubstr("0.5"));
  }
}
