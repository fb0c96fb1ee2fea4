// Triple-product (Gram determinant) attention (docs/appendix-a-formulas.md, triple-product attention): the
// fused kernel triple_attention_probs and gram_score (nn/attention_scores.h,
// nn/triple_attention.h) and the TripleAttention module.
//
// 1. Parity with PyTorch (tests/fixtures/make_variant_fixtures.py writes the
//    formulas of docs/appendix-a-formulas.md out in torch): output and d(sum(out * w))/d(x and the 5 projection
//    weights), float64 and float32, causal / padding / no mask.
// 2. float64 gradchecks of triple_attention_probs (q, k, r) for each mask kind,
//    and of the whole module.
// 3. By hand: the seed's resilience table (a loud key off the q-r plane scores
//    -mag^2 where the dot product gives +0.1), a key in the plane scores 0, the
//    maximum; det G equals the 3x3 Gram determinant by cofactors; the module's
//    scale is dh^-1.5; RoPE on q, k and r with r at the query's position.
// 4. Memory: the backward recomputes qk and kr: it keeps P and the inputs only.
// 5. Bad inputs: every Error names the op and the offending shape.
//
// Tolerances: float64 |a - e| <= 1e-12 + 1e-10 |e|; float32 the error bound of tests/support/test_util.h
// (about 8 float32 ulps of the tensor's largest entry; torch's own float32
// gradients are up to 2e-5 from its float64 ones here, for entries up to 28).
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "autograd/engine.h"
#include "autograd/gradcheck.h"
#include "autograd/ops.h"
#include "nn/attention_scores.h"
#include "nn/rope.h"
#include "nn/triple_attention.h"
#include "tensor/random.h"
#include "tensor/storage.h"
#include "tests/support/test_util.h"

using namespace ropegrad;
using namespace ropegrad::nn;
using namespace ropegrad::testing;
using ::testing::HasSubstr;

namespace {

// ---- helpers --------------------------------------------------------------------------------

Tensor fixture(const std::string& name) { return load_fixture("variants/" + name); }

// float64 parity: rounding of float64 (float32 uses the error bound of test_util.h).
constexpr Tol kTol64{1e-10, 1e-12};

using Vec = std::vector<double>;

double dot(const Vec& a, const Vec& b) {
  double s = 0;
  for (size_t i = 0; i < a.size(); ++i) s += a[i] * b[i];
  return s;
}

// det of the 3x3 Gram matrix of (q, k, r), by cofactor expansion along row 0.
double gram_det_by_cofactors(const Vec& q, const Vec& k, const Vec& r) {
  const Vec* v[3] = {&q, &k, &r};
  double g[3][3];
  for (int i = 0; i < 3; ++i)
    for (int j = 0; j < 3; ++j) g[i][j] = dot(*v[i], *v[j]);
  return g[0][0] * (g[1][1] * g[2][2] - g[1][2] * g[2][1]) - g[0][1] * (g[1][0] * g[2][2] - g[1][2] * g[2][0]) +
         g[0][2] * (g[1][0] * g[2][1] - g[1][1] * g[2][0]);
}

// Rows of vectors as a (1, 1, N, d) float64 tensor.
Tensor rows_tensor(const std::vector<Vec>& rows) {
  Vec flat;
  for (const Vec& r : rows) flat.insert(flat.end(), r.begin(), r.end());
  return tensor(flat, {1, 1, static_cast<int64_t>(rows.size()), static_cast<int64_t>(rows[0].size())},
                DType::Float64);
}

const std::vector<std::string> kParamNames = {"k_proj.weight", "output_proj.weight", "q_proj.weight", "r_proj.weight",
                                              "v_proj.weight"};

Tensor param(const TripleAttention& m, const std::string& name) {
  for (const auto& [n, p] : m.named_parameters())
    if (n == name) return p;
  ADD_FAILURE() << "no parameter " << name;
  return Tensor();
}

}  // namespace

// ---- 1. parity with PyTorch ---------------------------------------------------------------------

class TripleParity : public ::testing::TestWithParam<std::tuple<std::string, DType>> {};

TEST_P(TripleParity, ForwardAndGradientsMatchTorch) {
  const std::string mask = std::get<0>(GetParam());  // plain variables: the lambdas below capture them
  const DType dtype = std::get<1>(GetParam());
  const std::string prefix = "triple." + mask + "." + dtype_tag(dtype) + ".";
  // leaves: x, w, then the parameters in kParamNames order.
  const ParityRun run = [&](const std::vector<Tensor>& leaves) {
    const DType dt = leaves[0].dtype();
    auto m = std::make_unique<TripleAttention>(16, 2, make_rope(8, dt), nullptr, dt);  // D = 16, H = 2, dh = 8
    StateDict weights;
    for (size_t i = 0; i < kParamNames.size(); ++i) weights[kParamNames[i]] = leaves[2 + i];
    m->load_state_dict(weights);  // strict: every name, shapes checked
    Tensor x = leaves[0];  // (B, T, D) = (2, 6, 16)
    x.requires_grad_(true);
    AttentionCall call = mask == "causal" ? AttentionCall::causal() : AttentionCall::bidirectional();
    if (mask == "padding") call.mask = fixture("triple.padding_mask");  // bool (B, 1, 1, T)
    const Tensor out = m->forward(x, call);
    backward(sum(mul(out, leaves[1])));
    NamedTensors r = {{"out", out.detach()}, {"grad_x", x.grad()}};
    for (const std::string& name : kParamNames) r.emplace_back("grad_" + name, param(*m, name).grad());
    return r;
  };
  std::vector<Tensor> leaves = {to(fixture("triple.x"), dtype), to(fixture("triple.w"), dtype)};
  for (const std::string& name : kParamNames) leaves.push_back(to(fixture("triple." + name), dtype));
  if (dtype == DType::Float64) {
    for (const auto& [name, t] : run(leaves)) EXPECT_TRUE(all_close(t, fixture(prefix + name), kTol64)) << name;
    return;
  }
  // K: the longest sum, over B T = 12 rows, D = 16 features or T = 6 keys;
  // stages: projections, RoPE, three dot products, the Gram determinant, softmax,
  // P V, output projection, and their backward.
  expect_f32_parity(run, leaves, [&](const std::string& name) { return fixture(prefix + name); }, {16, 14}, prefix);
}

INSTANTIATE_TEST_SUITE_P(Torch, TripleParity,
                         ::testing::Combine(::testing::Values("causal", "padding", "none"),
                                            ::testing::Values(DType::Float64, DType::Float32)),
                         [](const auto& info) {
                           return std::get<0>(info.param) + "_" + dtype_tag(std::get<1>(info.param));
                         });

// ---- 2. gradchecks (float64) ------------------------------------------------------------------------

class TripleKernelGradcheck : public ::testing::TestWithParam<ScoreMaskKind> {};

TEST_P(TripleKernelGradcheck, QKR) {
  const ScoreMaskKind kind = GetParam();
  const int64_t b = 2, h = 2, nq = 4, nk = kind == ScoreMaskKind::Causal ? 4 : 5, dh = 3;
  Generator gen(61);
  Tensor q = randn({b, h, nq, dh}, DType::Float64, &gen).requires_grad_();
  Tensor k = randn({b, h, nk, dh}, DType::Float64, &gen).requires_grad_();
  Tensor r = randn({b, h, nq, dh}, DType::Float64, &gen).requires_grad_();
  const ScoreMask m = score_mask(kind, b, h, nq, nk);
  const double scale = std::pow(3.0, -1.5);
  const GradcheckResult res = gradcheck(
      [&](const std::vector<Tensor>& in) { return triple_attention_probs(in[0], in[1], in[2], scale, m); },
      {q, k, r});
  EXPECT_TRUE(res.passed) << res.report;
}

INSTANTIATE_TEST_SUITE_P(MaskKinds, TripleKernelGradcheck, ::testing::ValuesIn(kScoreMaskKinds),
                         [](const auto& info) { return score_mask_name(info.param); });

TEST(TripleKernelGradcheckRows, FullyMaskedRowAndNonContiguousInputs) {
  Generator gen(62);
  // (B, H, N, dh) views of (B, N, H, dh) tensors, as the module passes them.
  Tensor q = randn({1, 3, 2, 4}, DType::Float64, &gen).requires_grad_();
  Tensor k = randn({1, 5, 2, 4}, DType::Float64, &gen).requires_grad_();
  Tensor r = randn({1, 3, 2, 4}, DType::Float64, &gen).requires_grad_();
  std::vector<bool> keep(15, true);
  for (int j = 0; j < 5; ++j) keep[5 + j] = false;  // query 1 sees nothing
  ScoreMask m;
  m.mask = tensor_bool(keep, {3, 5});
  const GradcheckResult res = gradcheck(
      [&](const std::vector<Tensor>& in) {
        return triple_attention_probs(transpose(in[0], 1, 2), transpose(in[1], 1, 2), transpose(in[2], 1, 2),
                                      0.125, m);
      },
      {q, k, r});
  EXPECT_TRUE(res.passed) << res.report;
}

// As for W2 and scaled_dot_product_attention: a float mask that requires
// grad (a learnable bias) receives its gradient, as in PyTorch.
TEST(TripleModuleGradcheck, AdditiveMaskThatRequiresGradReceivesItsGradient) {
  Generator gen(60);
  TripleAttention m(8, 2, make_rope(4, DType::Float64), &gen, DType::Float64);
  Tensor x = randn({1, 3, 8}, DType::Float64, &gen).requires_grad_();
  Tensor bias = randn({2, 3, 3}, DType::Float64, &gen).requires_grad_();  // (H, T, T), broadcast over B
  const GradcheckResult res = gradcheck(
      [&](const std::vector<Tensor>& in) {
        AttentionCall call = AttentionCall::bidirectional();
        call.mask = in[1];
        return m.forward(in[0], call);
      },
      {x, bias});
  EXPECT_TRUE(res.passed) << res.report;
}

TEST(TripleModuleGradcheck, InputAndAllParameters) {
  // Built in float32, then converted: the way a model is gradchecked.
  Generator gen(63);
  TripleAttention m(8, 2, make_rope(4, DType::Float32), &gen);  // D = 8, H = 2, dh = 4
  m.to(DType::Float64);
  std::vector<Tensor> inputs = {randn({2, 4, 8}, DType::Float64, &gen).requires_grad_()};  // (B, T, D)
  for (const Tensor& p : m.parameters()) {
    EXPECT_EQ(p.dtype(), DType::Float64);
    inputs.push_back(p);
  }
  ASSERT_EQ(inputs.size(), 6u);  // x and the q, k, r, v, o projections
  AttentionCall call = AttentionCall::causal();
  call.mask = tensor_bool({true, true, true, true, true, true, true, false}, {2, 1, 1, 4});  // padding
  const GradcheckResult res =
      gradcheck([&](const std::vector<Tensor>& in) { return m.forward(in[0], call); }, inputs);
  EXPECT_TRUE(res.passed) << res.report;
}

// ---- 3. by hand -----------------------------------------------------------------------------------------

// The seed's resilience table: q = e0, r = e1 (dh = 4) span the "concept plane";
// a loud key k = mag e2 + 0.1 q leaks 0.1 onto q. G = [[1, .1, 0], [.1, mag^2 + .01, 0],
// [0, 0, 1]], det G = mag^2 + .01 - .01 = mag^2: the Gram score is -mag^2 while
// the dot product stays +0.1 at every magnitude.
const Vec kQ = {1, 0, 0, 0}, kR = {0, 1, 0, 0};
const std::vector<double> kMags = {1, 5, 10, 50, 100};
Vec loud_key(double mag) { return {0.1, 0, mag, 0}; }
Vec matching_key() { return {1 / std::sqrt(2.0), 1 / std::sqrt(2.0), 0, 0}; }  // (q + r) / |q + r|

TEST(TripleResilience, LoudKeyOffThePlaneScoresMinusMagSquared) {
  for (double mag : kMags) {
    const Vec k = loud_key(mag);
    EXPECT_EQ(dot(kQ, k), 0.1) << "mag " << mag;
    EXPECT_DOUBLE_EQ(gram_score(kQ, k, kR), -mag * mag) << "mag " << mag;
    EXPECT_DOUBLE_EQ(-gram_det_by_cofactors(kQ, k, kR), -mag * mag) << "mag " << mag;
  }
  // The in-plane key: zero volume, the best score there is (det G >= 0 always).
  EXPECT_NEAR(gram_score(kQ, matching_key(), kR), 0.0, 1e-15);
  EXPECT_NEAR(dot(kQ, matching_key()), std::sqrt(0.5), 1e-15);
  Generator gen(64);
  for (int trial = 0; trial < 20; ++trial) {
    const Vec q = randn({4}, DType::Float64, &gen).to_vector<double>();
    const Vec k = randn({4}, DType::Float64, &gen).to_vector<double>();
    const Vec r = randn({4}, DType::Float64, &gen).to_vector<double>();
    EXPECT_LE(gram_score(q, k, r), 1e-12) << "a Gram determinant is a squared volume";
    // Any key in span(q, r) scores 0.
    EXPECT_NEAR(
        gram_score(q, {0.3 * q[0] - 2 * r[0], 0.3 * q[1] - 2 * r[1], 0.3 * q[2] - 2 * r[2], 0.3 * q[3] - 2 * r[3]},
                   r),
        0.0, 1e-12);
  }
}

TEST(TripleResilience, TheKernelRanksTheTableLikeTheSeed) {
  // One query (q, r), six keys: the matching one and the five loud ones. With
  // scale s the kernel's scores are -det G s, so log(P_j / P_0) = -mag_j^2 s.
  std::vector<Vec> keys = {matching_key()};
  for (double mag : kMags) keys.push_back(loud_key(mag));
  const double s = 1e-3;
  const Tensor p =
      triple_attention_probs(rows_tensor({kQ}), rows_tensor(keys), rows_tensor({kR}), s);  // (1,1,1,6)
  ASSERT_EQ(p.shape(), (Shape{1, 1, 1, 6}));
  for (size_t j = 1; j < keys.size(); ++j) {
    const double mag = kMags[j - 1];
    EXPECT_NEAR(std::log(p.at({0, 0, 0, static_cast<int64_t>(j)}) / p.at({0, 0, 0, 0})), -mag * mag * s, 1e-12)
        << "mag " << mag;
  }
  EXPECT_EQ(argmax(p, -1).at<int64_t>({0, 0, 0}), 0);  // the in-plane key wins
  // Dot-product attention on the same keys: every loud key scores 0.1, whatever its magnitude.
  const Tensor pd = dot_attention_probs(rows_tensor({kQ}), rows_tensor(keys), 1.0);
  for (int64_t j = 2; j < 6; ++j) EXPECT_NEAR(pd.at({0, 0, 0, j}) / pd.at({0, 0, 0, 1}), 1.0, 1e-15);
  EXPECT_NEAR(std::log(pd.at({0, 0, 0, 1}) / pd.at({0, 0, 0, 0})), 0.1 - 0.7071067811865476, 1e-15);
}

TEST(TripleHand, DeterminantIsTheGramDeterminantByCofactors) {
  Generator gen(65);
  const int64_t nq = 3, nk = 4, dh = 5;
  const Tensor q = randn({1, 1, nq, dh}, DType::Float64, &gen), k = randn({1, 1, nk, dh}, DType::Float64, &gen);
  const Tensor r = randn({1, 1, nq, dh}, DType::Float64, &gen);
  const double s = 0.05;
  const Tensor p = triple_attention_probs(q, k, r, s);
  const auto row = [](const Tensor& t, int64_t i) {
    return select(select(select(t, 0, 0), 0, 0), 0, i).to_vector<double>();
  };
  for (int64_t i = 0; i < nq; ++i) {
    const Vec qi = row(q, i), ri = row(r, i);
    for (int64_t j = 0; j < nk; ++j) {
      const Vec kj = row(k, j), k0 = row(k, 0);
      const double det_j = gram_det_by_cofactors(qi, kj, ri), det_0 = gram_det_by_cofactors(qi, k0, ri);
      EXPECT_NEAR(gram_score(qi, kj, ri), -det_j, 1e-12 * (1 + det_j));
      // Scores from the kernel's probabilities: log(P_ij / P_i0) = -(det_j - det_0) s.
      EXPECT_NEAR(std::log(p.at({0, 0, i, j}) / p.at({0, 0, i, 0})), -(det_j - det_0) * s, 1e-12) << i << j;
    }
  }
}

TEST(TripleHand, ModuleScaleIsHeadDimToTheMinusOneAndAHalf) {
  // No RoPE: q, k, r are plain projections, and the weights the module returns
  // are softmax_j(-det G(q_i, k_j, r_i) dh^-1.5), computed here by hand.
  Generator gen(66);
  const int64_t d = 8, h = 2, dh = 4, t = 4;
  TripleAttention m(d, h, nullptr, &gen, DType::Float64);
  const Tensor x = randn({1, t, d}, DType::Float64, &gen);
  Tensor weights;
  AttentionCall call = AttentionCall::bidirectional();
  call.weights = &weights;
  m.forward(x, call);
  ASSERT_EQ(weights.shape(), (Shape{1, h, t, t}));
  const auto project = [&](const Tensor& w, int64_t i, int64_t head) {  // (W x_i)[head * dh : (head + 1) dh]
    Vec out(dh, 0.0);
    for (int64_t c = 0; c < dh; ++c)
      for (int64_t e = 0; e < d; ++e) out[c] += w.at({head * dh + c, e}) * x.at({0, i, e});
    return out;
  };
  const double scale = 1.0 / (4.0 * 2.0);  // 4^-1.5
  for (int64_t head = 0; head < h; ++head)
    for (int64_t i = 0; i < t; ++i) {
      const Vec qi = project(m.q_proj->weight, i, head), ri = project(m.r_proj->weight, i, head);
      Vec s;
      for (int64_t j = 0; j < t; ++j)
        s.push_back(-gram_det_by_cofactors(qi, project(m.k_proj->weight, j, head), ri) * scale);
      double mx = -INFINITY, total = 0;
      for (double v : s) mx = std::max(mx, v);
      for (double v : s) total += std::exp(v - mx);
      for (int64_t j = 0; j < t; ++j)
        EXPECT_NEAR(weights.at({0, head, i, j}), std::exp(s[j] - mx) / total, 1e-14) << head << i << j;
    }
}

TEST(TripleRope, ShiftInvariantAndRAtTheQueryPosition) {
  Generator gen(67);
  auto rope = make_rope(8, DType::Float64);
  TripleAttention m(16, 2, rope, &gen, DType::Float64);
  const Tensor x = randn({2, 5, 16}, DType::Float64, &gen);
  Tensor w_default, w_shifted;
  AttentionCall a = AttentionCall::bidirectional(), b = AttentionCall::bidirectional();
  a.weights = &w_default;
  b.weights = &w_shifted;
  b.positions = arange(int64_t{7}, int64_t{12});
  m.forward(x, a);
  m.forward(x, b);
  // q, k and r all rotated, r with q's position: every dot product depends on i - j only.
  EXPECT_LE(max_abs_diff(w_shifted, w_default), 1e-12);
  // The same weights, built from the pieces: RoPE on q, k and r at positions 0..T-1.
  const Tensor q = rope->forward(split_heads(m.q_proj->forward(x), 2));
  const Tensor k = rope->forward(split_heads(m.k_proj->forward(x), 2), Tensor(), true);
  const Tensor r_rot = rope->forward(split_heads(m.r_proj->forward(x), 2));
  const Tensor r_plain = split_heads(m.r_proj->forward(x), 2);
  const double scale = std::pow(8.0, -1.5);
  EXPECT_LE(max_abs_diff(triple_attention_probs(q, k, r_rot, scale), w_default), 1e-14);
  EXPECT_GT(max_abs_diff(triple_attention_probs(q, k, r_plain, scale), w_default), 1e-4);  // r is rotated
}

TEST(TripleMasks, FullyMaskedRowGivesZerosAndZeroGradient) {
  Generator gen(68);
  Tensor q = randn({1, 2, 3, 4}, DType::Float64, &gen).requires_grad_();
  Tensor k = randn({1, 2, 5, 4}, DType::Float64, &gen).requires_grad_();
  Tensor r = randn({1, 2, 3, 4}, DType::Float64, &gen).requires_grad_();
  std::vector<bool> keep(15, true);
  for (int j = 0; j < 5; ++j) keep[5 + j] = false;  // query 1 sees nothing
  ScoreMask m;
  m.mask = tensor_bool(keep, {3, 5});
  const Tensor p = triple_attention_probs(q, k, r, 0.125, m);
  ASSERT_TRUE(all_finite(p));
  EXPECT_EQ(max_abs_diff(select(p, 2, 1), zeros({1, 2, 5}, DType::Float64)), 0.0);
  EXPECT_LE(max_abs_diff(sum(select(p, 2, 2), {-1}), ones({1, 2}, DType::Float64)), 1e-15);
  backward(sum(mul(p, randn(p.shape(), DType::Float64, &gen))));
  for (const Tensor* t : {&q, &k, &r}) ASSERT_TRUE(all_finite(t->grad()));
  EXPECT_EQ(max_abs_diff(select(q.grad(), 2, 1), zeros({1, 2, 4}, DType::Float64)), 0.0);
  EXPECT_EQ(max_abs_diff(select(r.grad(), 2, 1), zeros({1, 2, 4}, DType::Float64)), 0.0);
  EXPECT_GT(max_abs_diff(select(q.grad(), 2, 0), zeros({1, 2, 4}, DType::Float64)), 0.0);
}

// ---- 4. memory -------------------------------------------------------------------------------------------

// Forward + backward at B = 2, H = 2, T = 64, dh = 16 (float32). Saving qk and
// kr for the backward would keep 3 (B, H, T, T) matrices; a (B, H, T, T, dh)
// tensor would be 1 MiB. The kernel keeps P alone (the contiguous inputs are
// saved by reference), and its backward recomputes qk and kr.
TEST(TripleMemory, BackwardKeepsPAndTheInputsOnly) {
  const int64_t b = 2, h = 2, t = 64, dh = 16, d = h * dh, f = 4;
  Generator gen(69);
  Tensor q = mul(randn({b, h, t, dh}, DType::Float32, &gen), 0.3).detach().requires_grad_();
  Tensor k = mul(randn({b, h, t, dh}, DType::Float32, &gen), 0.3).detach().requires_grad_();
  Tensor r = mul(randn({b, h, t, dh}, DType::Float32, &gen), 0.3).detach().requires_grad_();
  const Tensor grad_p = randn({b, h, t, t}, DType::Float32, &gen);
  ScoreMask m;
  m.causal = true;

  reset_peak_memory();
  const int64_t base = memory_stats().current_bytes;
  Tensor p = triple_attention_probs(q, k, r, std::pow(16.0, -1.5), m);
  const int64_t kept = memory_stats().current_bytes - base;
  backward(p, grad_p);
  const int64_t peak = memory_stats().peak_bytes - base;
  const int64_t bhtt = b * h * t * t, fifth_dim = bhtt * dh;
  std::printf(
      "[ triple ] kept after forward %lld B (P %lld B), peak forward+backward %lld B;"
      " a (B,H,T,T,dh) tensor would be %lld B\n",
      static_cast<long long>(kept), static_cast<long long>(bhtt * f), static_cast<long long>(peak),
      static_cast<long long>(fifth_dim * f));
  EXPECT_GE(kept, bhtt * f);
  EXPECT_LE(kept, bhtt * f + 4096);  // P, and nothing of (B, H, T, T) besides
  // The backward works on P, dS -> A, Bm, qk, kr: five (B, H, T, T) at most, plus O(B T D).
  EXPECT_LT(peak, (6 * bhtt + 16 * b * t * d) * f);
  EXPECT_LT(peak, fifth_dim * f / 2);
  EXPECT_TRUE(q.grad().defined() && k.grad().defined() && r.grad().defined());
}

// ---- 5. bad inputs ------------------------------------------------------------------------------------

TEST(TripleErrors, ReferenceShapeOrDtypeMismatch) {
  const Tensor q = zeros({2, 2, 5, 4}), k = zeros({2, 2, 6, 4});
  for (const Shape& rs : {Shape{2, 2, 6, 4}, Shape{2, 2, 5, 3}, Shape{2, 5, 4}}) {
    const std::string msg = error_of([&] { triple_attention_probs(q, k, zeros(rs), 1.0); });
    EXPECT_THAT(msg, HasSubstr("triple_attention"));
    EXPECT_THAT(msg, HasSubstr(shape_str(rs)));
    EXPECT_THAT(msg, HasSubstr(shape_str({2, 2, 5, 4})));
  }
  const std::string dt = error_of([&] { triple_attention_probs(q, k, zeros({2, 2, 5, 4}, DType::Float64), 1.0); });
  EXPECT_THAT(dt, HasSubstr("triple_attention"));
}

TEST(TripleErrors, QueryKeyMismatch) {
  const std::string msg = error_of([] {
    triple_attention_probs(zeros({2, 2, 5, 4}), zeros({2, 3, 6, 4}), zeros({2, 2, 5, 4}), 1.0);
  });
  EXPECT_THAT(msg, HasSubstr("triple_attention"));
  EXPECT_THAT(msg, HasSubstr(shape_str({2, 2, 5, 4})));
  EXPECT_THAT(msg, HasSubstr(shape_str({2, 3, 6, 4})));
}

TEST(TripleErrors, MaskThatDoesNotBroadcast) {
  const Tensor q = zeros({2, 2, 5, 4}), k = zeros({2, 2, 6, 4});  // scores (2, 2, 5, 6)
  for (const Shape& mask_shape : {Shape{5, 5}, Shape{3, 1, 1, 6}, Shape{2, 2, 2, 5, 6}}) {
    ScoreMask m;
    m.mask = ones(mask_shape, DType::Bool);
    const std::string msg = error_of([&] { triple_attention_probs(q, k, q, 1.0, m); });
    EXPECT_THAT(msg, HasSubstr("triple_attention"));
    EXPECT_THAT(msg, HasSubstr(shape_str(mask_shape)));
    EXPECT_THAT(msg, HasSubstr(shape_str({2, 2, 5, 6})));
  }
}

TEST(TripleErrors, GramScoreLengthsDiffer) {
  const std::string msg = error_of([] { gram_score({1, 0, 0}, {1, 0}, {0, 1, 0}); });
  EXPECT_THAT(msg, HasSubstr("gram_score"));
  EXPECT_THAT(msg, HasSubstr("3, 2, 3"));
}

TEST(TripleErrors, ModuleRejectsACacheAndBadShapes) {
  TripleAttention m(16, 2);
  KVCache cache;
  AttentionCall call = AttentionCall::causal();
  call.cache = &cache;
  const std::string cached = error_of([&] { m.forward(zeros({2, 4, 16}), call); });
  EXPECT_THAT(cached, HasSubstr("TripleAttention"));
  EXPECT_THAT(cached, HasSubstr("cache"));
  EXPECT_EQ(cache.length(), 0);
  const std::string wrong_d = error_of([&] { m.forward(zeros({2, 4, 12}), AttentionCall::causal()); });
  EXPECT_THAT(wrong_d, HasSubstr("TripleAttention"));
  EXPECT_THAT(wrong_d, HasSubstr(shape_str({2, 4, 12})));
  const std::string heads = error_of([] { TripleAttention bad(10, 3); });
  EXPECT_THAT(heads, HasSubstr("TripleAttention"));
  EXPECT_THAT(heads, HasSubstr("10"));
  const std::string rope = error_of([] { TripleAttention bad(16, 2, make_rope(4, DType::Float32)); });
  EXPECT_THAT(rope, HasSubstr("TripleAttention"));
  EXPECT_THAT(rope, HasSubstr("head_dim 4"));
}

