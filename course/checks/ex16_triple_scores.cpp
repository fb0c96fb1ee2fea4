// ex16-triple-scores: the triple-product (Gram determinant) scores and their
// backward in the fused kernel (nn/attention_scores.cpp,
// triple_attention_probs: the score of a row; A, Bm and the row terms, then
// dq, dk, dr).
#include <cmath>
#include <memory>

#include "autograd/engine.h"
#include "course/checks/attention_check_util.h"
#include "nn/triple_attention.h"

namespace ropegrad::course {
namespace {

// tests/fixtures/variants/triple.*: the TripleAttention module, D = 16, H = 2,
// dh = 8, x (2, 6, 16), upstream weights w, its 5 projections; results out,
// grad_x and grad_<parameter> (tests/fixtures/make_variant_fixtures.py).
Tensor triple_fixture(const std::string& name) { return load_fixture("variants/" + name); }

const std::vector<std::string> kTripleParams = {"k_proj.weight", "output_proj.weight", "q_proj.weight", "r_proj.weight",
                                          "v_proj.weight"};

ParityRun triple_run(const std::string& mask, bool with_backward) {
  return layer_parity_run(
      [](DType dt) -> std::unique_ptr<nn::AttentionLayer> {
        return std::make_unique<nn::TripleAttention>(16, 2, make_rope(8, dt), nullptr, dt);
      },
      kTripleParams, parity_call(mask, [] { return triple_fixture("triple.padding_mask"); }), with_backward);
}

std::vector<Tensor> triple_leaves() {
  std::vector<Tensor> leaves = {triple_fixture("triple.x"), triple_fixture("triple.w")};
  for (const std::string& name : kTripleParams) leaves.push_back(triple_fixture("triple." + name));
  return leaves;
}

double dot(const std::vector<double>& a, const std::vector<double>& b) {
  double s = 0;
  for (size_t i = 0; i < a.size(); ++i) s += a[i] * b[i];
  return s;
}

void expect_triple_torch_f64(const std::string& mask, Part part) {
  expect_f64_results(triple_run(mask, part != Part::Forward), triple_leaves(),
                     [&](const std::string& n) { return triple_fixture("triple." + mask + ".f64." + n); }, "triple/" + mask,
                     part);
}

// The forward first: these run no backward.
TEST(ex16_triple_scores, the_layer_output_matches_torch_float64_causal) { expect_triple_torch_f64("causal", Part::Forward); }

TEST(ex16_triple_scores, the_layer_output_matches_torch_float64_with_a_padding_mask) {
  expect_triple_torch_f64("padding", Part::Forward);
}

TEST(ex16_triple_scores, scores_are_minus_the_gram_determinant_times_the_scale) {
  // log(P_ij / P_i0) = -(det G(q_i, k_j, r_i) - det G(q_i, k_0, r_i)) scale,
  // the determinant of the 3 x 3 Gram matrix by the rule of Sarrus.
  Generator gen(65);
  const int64_t nq = 2, nk = 4, dh = 5;
  const Tensor q = randn({1, 1, nq, dh}, DType::Float64, &gen), k = randn({1, 1, nk, dh}, DType::Float64, &gen);
  const Tensor r = randn({1, 1, nq, dh}, DType::Float64, &gen);
  const double s = 0.05;
  const std::vector<double> p = nn::triple_attention_probs(q, k, r, s).to_vector<double>();
  const std::vector<double> qv = q.to_vector<double>(), kv = k.to_vector<double>(), rv = r.to_vector<double>();
  const auto vec = [&](const std::vector<double>& all, int64_t i) {
    return std::vector<double>(all.begin() + i * dh, all.begin() + (i + 1) * dh);
  };
  const auto det = [&](int64_t i, int64_t j) {
    const auto a = vec(qv, i), b = vec(kv, j), c = vec(rv, i);
    const double g[3][3] = {{dot(a, a), dot(a, b), dot(a, c)}, {dot(b, a), dot(b, b), dot(b, c)},
                            {dot(c, a), dot(c, b), dot(c, c)}};
    return g[0][0] * (g[1][1] * g[2][2] - g[1][2] * g[2][1]) - g[0][1] * (g[1][0] * g[2][2] - g[1][2] * g[2][0]) +
           g[0][2] * (g[1][0] * g[2][1] - g[1][1] * g[2][0]);
  };
  for (int64_t i = 0; i < nq; ++i)
    for (int64_t j = 1; j < nk; ++j) {
      const double got = std::log(p[i * nk + j] / p[i * nk]), want = -(det(i, j) - det(i, 0)) * s;
      if (std::abs(got - want) > 1e-12) {
        ADD_FAILURE() << "query " << i << ", key " << j << ": S_ij - S_i0 = " << fmt::format("{:.6g}", got)
                      << ", expected " << fmt::format("{:.6g}", want)
                      << " from -det G(q, k, r) scale (det G = qq kk rr + 2 qk kr rq - qq kr^2 - kk rq^2 - rr qk^2)";
        return;
      }
    }
}

TEST(ex16_triple_scores, a_key_in_the_plane_of_q_and_r_scores_zero) {
  // k = 2 q - r lies in span(q, r): the Gram determinant is 0, so its score is
  // 0; a key off the plane has det > 0, a negative score, a smaller weight.
  const Tensor q = tensor({1.0, 0, 0}, {1, 1, 1, 3}, DType::Float64), r = tensor({0.0, 1, 0}, {1, 1, 1, 3}, DType::Float64);
  const Tensor k = tensor({2.0, -1, 0, 0, 0, 1}, {1, 1, 2, 3}, DType::Float64);  // in the plane; off it (det 1)
  const std::vector<double> p = nn::triple_attention_probs(q, k, r, 1.0).to_vector<double>();
  const double want0 = 1 / (1 + std::exp(-1.0));
  if (std::abs(p[0] - want0) > 1e-14)
    ADD_FAILURE() << "the key in the plane of q and r gets weight " << p[0] << ", expected 1 / (1 + e^-1) = " << want0
                  << " (scores 0 and -1)";
}

// The gradients, once the forward is right.
#define AFTER_TRIPLE_FORWARD()                                                            \
  COURSE_AFTER_FORWARD("the_layer_output_matches_torch_float64_causal",                   \
                       "the_layer_output_matches_torch_float64_with_a_padding_mask",      \
                       "scores_are_minus_the_gram_determinant_times_the_scale")

TEST(ex16_triple_scores, the_layer_gradients_match_torch_float64) {
  AFTER_TRIPLE_FORWARD();
  expect_triple_torch_f64("causal", Part::Gradients);
  expect_triple_torch_f64("padding", Part::Gradients);
}

TEST(ex16_triple_scores, the_layer_matches_torch_float32_within_the_error_bound) {
  AFTER_TRIPLE_FORWARD();  // the float32 bound's condition numbers come from the backward
  // K: the longest sum, over D = 16 features or T = 6 keys; stages: the
  // projections, RoPE, the three dot products, the determinant's products and
  // sum (2), the softmax (exp, sum), P V, the output projection: 9.
  const ForwardRun run = causal_layer_run(
      [](DType dt) -> std::unique_ptr<nn::AttentionLayer> {
        return std::make_unique<nn::TripleAttention>(16, 2, make_rope(8, dt), nullptr, dt);
      },
      kTripleParams);
  std::vector<Tensor> leaves = {triple_fixture("triple.x")};
  for (const std::string& name : kTripleParams) leaves.push_back(triple_fixture("triple." + name));
  expect_f32_forward(run, leaves, triple_fixture("triple.causal.f32.out"), {16, 9}, "triple/causal/f32 out");
}

TEST(ex16_triple_scores, gradients_of_q_k_r_pass_gradcheck) {
  AFTER_TRIPLE_FORWARD();
  Generator gen(61);
  const int64_t b = 2, h = 2, nq = 4, nk = 5, dh = 3;
  const nn::ScoreMask m = score_mask(ScoreMaskKind::BoolPadding, b, h, nq, nk);
  const double scale = std::pow(3.0, -1.5);
  expect_gradcheck(
      [&](const std::vector<Tensor>& in) { return nn::triple_attention_probs(in[0], in[1], in[2], scale, m); },
      {randn({b, h, nq, dh}, DType::Float64, &gen).requires_grad_(),
       randn({b, h, nk, dh}, DType::Float64, &gen).requires_grad_(),
       randn({b, h, nq, dh}, DType::Float64, &gen).requires_grad_()},
      "q, k, r");
}

}  // namespace
}  // namespace ropegrad::course
