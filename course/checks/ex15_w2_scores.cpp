// ex15-w2-scores: the W2 attention scores and their backward in the fused
// kernel (nn/attention_scores.cpp, distance_attention_probs: the score of a
// row, and the gradients of a, b and tau).
#include <cmath>
#include <memory>

#include "autograd/engine.h"
#include "course/checks/attention_check_util.h"
#include "nn/w2_attention.h"

namespace ropegrad::course {
namespace {

constexpr double kW2Eps = 1e-6;  // the W2 score's eps

// tests/fixtures/variants/w2_<scalar|vector>.*: the W2Attention module, D = 16,
// H = 2, dh = 8, x (2, 6, 16), upstream weights w, its 7 parameters; results
// out, grad_x and grad_<parameter> (tests/fixtures/make_variant_fixtures.py).
Tensor w2_fixture(const std::string& name) { return load_fixture("variants/" + name); }

const std::vector<std::string> kW2Params = {"k_proj.weight",       "output_proj.weight",  "q_proj.weight",
                                          "sigma_k_proj.weight", "sigma_q_proj.weight", "temperature",
                                          "v_proj.weight"};

ParityRun w2_run(nn::SigmaMode mode, const std::string& module, const std::string& mask, bool with_backward) {
  return layer_parity_run(
      [mode](DType dt) -> std::unique_ptr<nn::AttentionLayer> {
        return std::make_unique<nn::W2Attention>(16, 2, make_rope(8, dt), mode, nullptr, dt);
      },
      kW2Params, parity_call(mask, [&] { return w2_fixture(module + ".padding_mask"); }), with_backward);
}

std::vector<Tensor> w2_leaves(const std::string& module) {
  std::vector<Tensor> leaves = {w2_fixture(module + ".x"), w2_fixture(module + ".w")};
  for (const std::string& name : kW2Params) leaves.push_back(w2_fixture(module + "." + name));
  return leaves;
}

void expect_torch_f64(nn::SigmaMode mode, const std::string& module, const std::string& mask, Part part) {
  const std::string prefix = module + "." + mask + ".f64.";
  expect_f64_results(w2_run(mode, module, mask, part != Part::Forward), w2_leaves(module),
                     [&](const std::string& n) { return w2_fixture(prefix + n); }, module + "/" + mask, part);
}

// The forward first: these run no backward.
TEST(ex15_w2_scores, the_layer_output_matches_torch_float64_scalar_sigma_causal) {
  expect_torch_f64(nn::SigmaMode::Scalar, "w2_scalar", "causal", Part::Forward);
}

TEST(ex15_w2_scores, the_layer_output_matches_torch_float64_vector_sigma_padding_mask) {
  expect_torch_f64(nn::SigmaMode::Vector, "w2_vector", "padding", Part::Forward);
}

TEST(ex15_w2_scores, scores_are_minus_the_squared_w2_distance_over_tau) {
  // One query, three keys, dh = 2, scalar sigma: S_j = -(|mu_q - mu_k|^2 + dh (s_q - s_k)^2) / (tau + eps).
  const Tensor mu_q = tensor({1.0, 2.0}, {1, 1, 1, 2}, DType::Float64);
  const Tensor mu_k = tensor({1.0, 2.0, -1.0, -2.0, 0.5, 1.0}, {1, 1, 3, 2}, DType::Float64);
  const Tensor s_q = tensor({0.5}, {1, 1, 1}, DType::Float64), s_k = tensor({0.5, 0.5, 1.0}, {1, 1, 3}, DType::Float64);
  const double tau = 1.5;
  const std::vector<double> p =
      nn::w2_attention_probs(mu_q, mu_k, s_q, s_k, tensor({tau}, DType::Float64)).to_vector<double>();
  std::vector<double> s = {0, -(4.0 + 16.0), -(0.25 + 1.0 + 2 * 0.25)}, want(3);
  double total = 0;
  for (int j = 0; j < 3; ++j) total += (want[j] = std::exp(s[j] / (tau + kW2Eps)));
  for (double& w : want) w /= total;
  if (p[1] > p[0]) {
    // The cross term added, |a|^2 + |b|^2 + 2 a.b = |a + b|^2 (a = [mu_q, sqrt(dh) s_q], b likewise): for the
    // three keys 22, 2 and 15.75; named when it gives all three weights.
    const double plus[3] = {22.0, 2.0, 15.75};
    double wp[3], tp = 0;
    for (int j = 0; j < 3; ++j) tp += (wp[j] = std::exp(-plus[j] / (tau + kW2Eps)));
    bool cross_added = true;
    for (int j = 0; j < 3; ++j) cross_added = cross_added && std::abs(p[j] - wp[j] / tp) <= 1e-12;
    ADD_FAILURE() << "the key equal to the query gets weight " << fmt::format("{:.6g}", p[0])
                  << ", less than its opposite's " << fmt::format("{:.6g}", p[1])
                  << (cross_added ? ": the weights are those of -|a + b|^2 / (tau + eps), the cross term 2 a.b "
                                    "added where |a - b|^2 = |a|^2 + |b|^2 - 2 a.b subtracts it"
                                  : ": the nearest key must get the largest weight, S = -|a - b|^2 / (tau + eps)");
    return;
  }
  for (int j = 0; j < 3; ++j) {
    if (std::abs(p[j] - want[j]) > 1e-14) {
      ADD_FAILURE() << "key " << j << " gets weight " << fmt::format("{:.6g}", p[j]) << ", expected "
                    << fmt::format("{:.6g}", want[j])
                    << " from S = -(|mu_q - mu_k|^2 + dh (s_q - s_k)^2) / (tau + eps)";
      return;
    }
  }
}

// Query 1 of 3 masked from all 4 keys (dh 2, scalar sigma): the weights and
// the leaves mu_q, mu_k, tau (in *leaves when given).
Tensor fully_masked_w2_probs(std::vector<Tensor>* leaves) {
  Generator gen(9);
  Tensor mu_q = randn({1, 1, 3, 2}, DType::Float64, &gen).requires_grad_();
  Tensor mu_k = randn({1, 1, 4, 2}, DType::Float64, &gen).requires_grad_();
  Tensor tau = tensor({1.2}, DType::Float64).requires_grad_();
  std::vector<bool> keep(12, true);
  for (int j = 0; j < 4; ++j) keep[4 + j] = false;  // query 1 sees no key
  nn::ScoreMask m;
  m.mask = tensor_bool(keep, {3, 4});
  if (leaves != nullptr) *leaves = {mu_q, mu_k, tau};
  return nn::w2_attention_probs(mu_q, mu_k, full({1, 1, 3}, 0.3, DType::Float64), full({1, 1, 4}, 0.6, DType::Float64),
                                tau, m);
}

// Two batches and two heads of 2 queries and 3 keys (Nq != Nk, as when
// decoding with a cache): each (batch, head) block reads its own queries',
// keys' and temperatures' values, against the weights computed here.
TEST(ex15_w2_scores, each_block_of_fewer_queries_than_keys) {
  COURSE_REQUIRES("scores_are_minus_the_squared_w2_distance_over_tau");
  const int64_t B = 2, H = 2, nq = 2, nk = 3, dh = 2;
  Generator gen(21);
  const Tensor mu_q = randn({B, H, nq, dh}, DType::Float64, &gen), mu_k = randn({B, H, nk, dh}, DType::Float64, &gen);
  const Tensor s_q = add(mul(rand({B, H, nq}, DType::Float64, &gen), 0.5), 0.25);
  const Tensor s_k = add(mul(rand({B, H, nk}, DType::Float64, &gen), 0.5), 0.25);
  const Tensor tau = tensor({0.8, 1.7}, {H}, DType::Float64);
  const Tensor got = nn::w2_attention_probs(mu_q, mu_k, s_q, s_k, tau);
  const std::vector<double> mq = mu_q.to_vector<double>(), mk = mu_k.to_vector<double>();
  const std::vector<double> sq = s_q.to_vector<double>(), sk = s_k.to_vector<double>(), t = tau.to_vector<double>();
  std::vector<double> want;
  for (int64_t b = 0; b < B; ++b)
    for (int64_t h = 0; h < H; ++h)
      for (int64_t i = 0; i < nq; ++i) {
        std::vector<double> row(nk);
        double total = 0;
        for (int64_t j = 0; j < nk; ++j) {
          double d2 = 0;
          for (int64_t c = 0; c < dh; ++c) {
            const double diff = mq[((b * H + h) * nq + i) * dh + c] - mk[((b * H + h) * nk + j) * dh + c];
            d2 += diff * diff;
          }
          const double ds = sq[(b * H + h) * nq + i] - sk[(b * H + h) * nk + j];
          d2 += static_cast<double>(dh) * ds * ds;
          total += (row[j] = std::exp(-d2 / (t[h] + kW2Eps)));
        }
        for (double w : row) want.push_back(w / total);
      }
  // Which (batch, head) blocks are right: a block offset computed with the wrong length shows as the first alone.
  const std::vector<double> g = got.to_vector<double>();
  std::vector<std::string> right_blocks, wrong_blocks;
  for (int64_t block = 0; block < B * H; ++block) {
    bool right = g.size() == want.size();
    for (int64_t e = block * nq * nk; right && e < (block + 1) * nq * nk; ++e)
      right = std::abs(g[static_cast<size_t>(e)] - want[static_cast<size_t>(e)]) <= 1e-12;
    (right ? right_blocks : wrong_blocks).push_back(fmt::format("(batch {}, head {})", block / H, block % H));
  }
  if (!right_blocks.empty() && !wrong_blocks.empty()) {
    ADD_FAILURE() << "with 2 queries and 3 keys per (batch, head) block, block(s) " << fmt::format("{}", fmt::join(right_blocks, ", "))
                  << " right and " << fmt::format("{}", fmt::join(wrong_blocks, ", "))
                  << " wrong: where each block's values start (its offset, with Nq = 2 and Nk = 3 different here) "
                     "is where the right and the wrong blocks part";
    return;
  }
  expect_values(got, tensor(want, {B, H, nq, nk}, DType::Float64), f64_tol(),
                "the weights of 2 batches x 2 heads, 2 queries and 3 keys each");
}

TEST(ex15_w2_scores, a_fully_masked_query_gives_zeros) {
  for (double x : select(fully_masked_w2_probs(nullptr), 2, 1).to_vector<double>()) {
    if (x != 0) {
      ADD_FAILURE() << "the fully masked query gives weight " << x << ", expected zeros (never NaN)";
      return;
    }
  }
}

// The gradients, once the forward is right.
#define AFTER_W2_FORWARD()                                                                  \
  COURSE_AFTER_FORWARD("the_layer_output_matches_torch_float64_scalar_sigma_causal",        \
                       "the_layer_output_matches_torch_float64_vector_sigma_padding_mask", \
                       "scores_are_minus_the_squared_w2_distance_over_tau")

TEST(ex15_w2_scores, the_layer_gradients_match_torch_float64) {
  AFTER_W2_FORWARD();
  expect_torch_f64(nn::SigmaMode::Scalar, "w2_scalar", "causal", Part::Gradients);
  expect_torch_f64(nn::SigmaMode::Vector, "w2_vector", "padding", Part::Gradients);
}

TEST(ex15_w2_scores, the_layer_matches_torch_float32_within_the_error_bound) {
  AFTER_W2_FORWARD();  // the float32 bound's condition numbers come from the backward
  // K: the longest sum, over D = 16 features or T = 6 keys; stages: the
  // projections, RoPE, softplus of sigma, the norms and a.b, the score, the
  // softmax (exp, sum), P V, the output projection: 10.
  const ForwardRun run = causal_layer_run(
      [](DType dt) -> std::unique_ptr<nn::AttentionLayer> {
        return std::make_unique<nn::W2Attention>(16, 2, make_rope(8, dt), nn::SigmaMode::Scalar, nullptr, dt);
      },
      kW2Params);
  std::vector<Tensor> leaves = {w2_fixture("w2_scalar.x")};
  for (const std::string& name : kW2Params) leaves.push_back(w2_fixture("w2_scalar." + name));
  expect_f32_forward(run, leaves, w2_fixture("w2_scalar.causal.f32.out"), {16, 10}, "w2_scalar/causal/f32 out");
}

TEST(ex15_w2_scores, gradients_of_mu_sigma_and_tau_pass_gradcheck) {
  AFTER_W2_FORWARD();
  Generator gen(41);
  for (const bool scalar : {true, false}) {
    const int64_t b = 2, h = 2, nq = 4, nk = 5, dh = 3;
    const Shape sq = scalar ? Shape{b, h, nq} : Shape{b, h, nq, dh};
    const Shape sk = scalar ? Shape{b, h, nk} : Shape{b, h, nk, dh};
    const nn::ScoreMask m = score_mask(scalar ? ScoreMaskKind::BoolPadding : ScoreMaskKind::Additive, b, h, nq, nk);
    expect_gradcheck(
        [&](const std::vector<Tensor>& in) { return nn::w2_attention_probs(in[0], in[1], in[2], in[3], in[4], m); },
        {randn({b, h, nq, dh}, DType::Float64, &gen).requires_grad_(),
         randn({b, h, nk, dh}, DType::Float64, &gen).requires_grad_(),
         softplus(randn(sq, DType::Float64, &gen)).detach().requires_grad_(),
         softplus(randn(sk, DType::Float64, &gen)).detach().requires_grad_(),
         tensor({1.3, 2.1}, DType::Float64).requires_grad_()},
        scalar ? "scalar sigma" : "vector sigma");
  }
}

TEST(ex15_w2_scores, a_fully_masked_query_gives_finite_gradients) {
  AFTER_W2_FORWARD();
  COURSE_AFTER_FORWARD("a_fully_masked_query_gives_zeros");
  std::vector<Tensor> leaves;
  const Tensor p = fully_masked_w2_probs(&leaves);
  Generator gen(10);
  backward(p, randn(p.shape(), DType::Float64, &gen));  // d sum(p * w)
  for (const Tensor& t : leaves) {
    if (!t.grad().defined() || !all_finite(t.grad())) {
      ADD_FAILURE() << "a gradient is missing or not finite after a fully masked query";
      return;
    }
  }
}
}  // namespace
}  // namespace ropegrad::course
