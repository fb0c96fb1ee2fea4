// ex12-sdpa: scaled dot-product attention with masks and its backward
// (nn/sdpa.cpp: attention_scale; nn/attention_scores.cpp: the mask as
// scores to add, and dq, dk in dot_attention_probs's backward).
#include <cmath>
#include <limits>

#include "autograd/engine.h"
#include "course/checks/attention_check_util.h"
#include "nn/functional.h"

namespace ropegrad::course {
namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();

// tests/fixtures/attention/sdpa_<case>.*: q (2, 2, Nq, 4), k (2, 2, Nk, 4),
// v (2, 2, Nk, 3), w (upstream weights), mask (bool (2, 1, 1, Nk) or float
// (1, 2, Nq, Nk)); results out and grad_q/k/v = d sum(out * w) / d q, k, v
// (tests/fixtures/make_attention_fixtures.py).
Tensor fixture(const std::string& name) { return load_fixture("attention/" + name); }

ParityRun sdpa_run(const std::string& name, bool has_mask, bool causal) {
  const Tensor mask = has_mask ? fixture(name + ".mask") : Tensor();
  return [mask, causal](const std::vector<Tensor>& ls) {
    Tensor q = ls[0], k = ls[1], v = ls[2];
    for (Tensor* t : {&q, &k, &v}) t->requires_grad_(true);
    nn::AttentionOptions o;
    o.causal = causal;
    if (mask.defined()) o.mask = mask.dtype() == DType::Bool ? mask : to(mask, q.dtype());
    const Tensor out = nn::scaled_dot_product_attention(q, k, v, o);
    backward(out, clone(ls[3]));  // d sum(out * w)
    return NamedTensors{{"out", out.detach()}, {"grad_q", q.grad()}, {"grad_k", k.grad()}, {"grad_v", v.grad()}};
  };
}

std::vector<Tensor> sdpa_leaves(const std::string& name) {
  std::vector<Tensor> leaves;
  for (const char* n : {".q", ".k", ".v", ".w"}) leaves.push_back(fixture(name + n));
  return leaves;
}

void expect_torch_f64(const std::string& name, bool has_mask, bool causal) {
  expect_f64_results(sdpa_run(name, has_mask, causal), sdpa_leaves(name),
                     [&](const std::string& n) { return fixture(name + ".f64." + n); }, name);
}

TEST(ex12_sdpa, output_and_gradients_match_torch_float64_without_a_mask) {
  expect_torch_f64("sdpa_no_mask", false, false);
}

TEST(ex12_sdpa, output_and_gradients_match_torch_float64_with_a_causal_mask) {
  expect_torch_f64("sdpa_causal", false, true);
}

TEST(ex12_sdpa, output_and_gradients_match_torch_float64_with_a_bool_padding_mask) {
  expect_torch_f64("sdpa_bool_padding", true, false);
}

TEST(ex12_sdpa, output_and_gradients_match_torch_float64_with_an_additive_mask) {
  expect_torch_f64("sdpa_additive", true, false);
}

TEST(ex12_sdpa, output_and_gradients_match_torch_float64_for_cross_attention) {  // Nq 3, Nk 6, padding mask
  expect_torch_f64("sdpa_cross", true, false);
}

TEST(ex12_sdpa, output_and_gradients_match_torch_float32_within_the_error_bound) {
  // K: the longest sum, over dh = 4 or Nk = 5 keys (6 in cross); stages: the
  // scores, the softmax (max, exp, sum), P V, and the backward's three
  // contractions (dP = dO V^T, dS, dq/dk): 7.
  for (const auto& item : std::vector<std::pair<std::string, bool>>{{"sdpa_bool_padding", true},
                                                                     {"sdpa_additive", true}}) {
    const std::string name = item.first;  // a plain variable: clang 14 cannot capture a structured binding
    const bool has_mask = item.second;
    expect_f32_results(sdpa_run(name, has_mask, false), sdpa_leaves(name),
                       [&](const std::string& n) { return fixture(name + ".f32." + n); }, {6, 7}, name + "/f32");
  }
}

TEST(ex12_sdpa, gradients_of_q_k_v_pass_gradcheck_with_each_kind_of_mask) {
  Generator gen(12);
  const Tensor padding = padding_mask(2, 5), bias = alibi_bias(2, 4, 5);  // (2, 1, 1, 5), (1, 2, 4, 5)
  for (int kind = 0; kind < 3; ++kind) {
    expect_gradcheck(
        [&](const std::vector<Tensor>& in) {
          nn::AttentionOptions o;
          if (kind == 0) o.mask = padding;
          if (kind == 1) o.mask = bias;
          o.causal = kind == 2;
          o.causal_offset = 1;
          return nn::scaled_dot_product_attention(in[0], in[1], in[2], o);
        },
        {randn({2, 2, 4, 3}, DType::Float64, &gen).requires_grad_(),
         randn({2, 2, 5, 3}, DType::Float64, &gen).requires_grad_(),
         randn({2, 2, 5, 2}, DType::Float64, &gen).requires_grad_()},
        kind == 0 ? "bool mask" : kind == 1 ? "additive mask" : "causal, offset 1");
  }
}

TEST(ex12_sdpa, a_bool_mask_is_true_where_a_query_may_attend) {
  Generator gen(3);
  const Tensor q = randn({1, 1, 3, 4}, DType::Float64, &gen), k = randn({1, 1, 4, 4}, DType::Float64, &gen);
  const Tensor v = randn({1, 1, 4, 2}, DType::Float64, &gen);
  const std::vector<bool> keep = {true, false, true, false, false, true, true, true, true, true, false, false};
  nn::AttentionOptions o;
  o.mask = tensor_bool(keep, {3, 4});
  Tensor weights;
  nn::scaled_dot_product_attention(q, k, v, o, &weights);
  const std::vector<double> w = weights.to_vector<double>();
  for (size_t e = 0; e < keep.size(); ++e) {
    if (!keep[e] && w[e] != 0) {
      ADD_FAILURE() << "query " << e / 4 << " gives key " << e % 4 << " weight " << fmt::format("{:.6g}", w[e])
                    << " though the mask marks it false (bool masks: true = may attend, false = masked)";
      return;
    }
  }
  for (int i = 0; i < 3; ++i) {
    const double total = w[4 * i] + w[4 * i + 1] + w[4 * i + 2] + w[4 * i + 3];
    if (std::abs(total - 1) > 1e-12) ADD_FAILURE() << "the weights of query " << i << " sum to " << total << ", not 1";
  }
}

TEST(ex12_sdpa, scores_are_scaled_by_one_over_the_square_root_of_the_head_size) {
  // One query, two keys, dh = 4: q.k0 = 0 and q.k1 = 4, so the weight of key 1
  // is sigmoid(4 scale): sigmoid(2) for 1/sqrt(dh), sigmoid(1) for 1/dh.
  const Tensor q = tensor({1.0, 1, 1, 1}, {1, 1, 1, 4}, DType::Float64);
  const Tensor k = tensor({0.0, 0, 0, 0, 1, 1, 1, 1}, {1, 1, 2, 4}, DType::Float64);
  const Tensor v = tensor({0.0, 1}, {1, 1, 2, 1}, DType::Float64);
  const auto sigmoid = [](double x) { return 1 / (1 + std::exp(-x)); };
  const double got = nn::scaled_dot_product_attention(q, k, v).item<double>();  // = the weight of key 1
  if (std::abs(got - sigmoid(1)) < 1e-9) {
    ADD_FAILURE() << "the scores are scaled by 1/dh, expected 1/sqrt(dh) (weight " << fmt::format("{:.6g}", got)
                  << ", expected " << fmt::format("{:.6g}", sigmoid(2)) << ")";
  } else if (std::abs(got - sigmoid(4)) < 1e-9) {
    ADD_FAILURE() << "the scores are not scaled, expected q.k / sqrt(dh) (weight " << got << ", expected " << sigmoid(2)
                  << ")";
  } else if (std::abs(got - sigmoid(2)) > 1e-12) {
    ADD_FAILURE() << "weight " << got << ", expected sigmoid(q.k / sqrt(dh)) = " << sigmoid(2);
  }
  nn::AttentionOptions o;
  o.scale = 0.25;  // an explicit scale replaces 1/sqrt(dh)
  const double explicit_scale = nn::scaled_dot_product_attention(q, k, v, o).item<double>();
  if (std::abs(explicit_scale - sigmoid(1)) > 1e-12)
    ADD_FAILURE() << "options.scale = 0.25 is ignored: weight " << explicit_scale << ", expected " << sigmoid(1);
}

TEST(ex12_sdpa, a_query_that_may_attend_no_key_gives_zeros_not_nan) {
  Generator gen(25);
  for (const bool bool_mask : {true, false}) {
    Tensor q = randn({1, 2, 3, 4}, DType::Float64, &gen).requires_grad_();
    Tensor k = randn({1, 2, 5, 4}, DType::Float64, &gen).requires_grad_();
    Tensor v = randn({1, 2, 5, 3}, DType::Float64, &gen).requires_grad_();
    std::vector<bool> keep(15, true);
    std::vector<double> bias(15, 0.0);
    for (int j = 0; j < 5; ++j) keep[5 + j] = false, bias[5 + j] = -kInf;  // query 1 sees no key
    nn::AttentionOptions o;
    o.mask = bool_mask ? tensor_bool(keep, {3, 5}) : tensor(bias, {3, 5}, DType::Float64);
    const std::string what = bool_mask ? "bool mask all false" : "additive mask all -inf";
    const Tensor out = nn::scaled_dot_product_attention(q, k, v, o);  // (1, 2, 3, 3)
    const std::vector<double> row = select(out, 2, 1).to_vector<double>();
    for (double x : row) {
      if (x != 0) {
        ADD_FAILURE() << "query 1 (" << what << ") gives " << fmt::format("{:.6g}", x) << ", expected zeros (never NaN, never a mean of v)";
        return;
      }
    }
    backward(out, randn(out.shape(), DType::Float64, &gen));  // d sum(out * w)
    for (const Tensor& g : {q.grad(), k.grad(), v.grad()}) {
      if (!g.defined() || !all_finite(g)) {
        ADD_FAILURE() << "a gradient is missing or not finite after a fully masked query (" << what << ")";
        return;
      }
    }
  }
}

}  // namespace
}  // namespace ropegrad::course
