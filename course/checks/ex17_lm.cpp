// ex17-lm: the transformer language model's forward (nn/transformer.cpp,
// TransformerLM::forward): embedding, the blocks (causal), the final norm and
// the head (h E^T when the embeddings are tied).
#include <memory>

#include "course/checks/attention_check_util.h"
#include "nn/transformer.h"

namespace ropegrad::course {
namespace {

// tests/fixtures/adapters/lm.*: CS336's transformer LM in float64 torch, V = 23,
// context 16, D = 16, 2 layers, H = 4, d_ff = 32, RoPE theta 10000; ids (2, 6)
// and the logits out (tests/fixtures/make_adapter_fixtures.py).
Tensor lm_fixture(const std::string& name) { return load_fixture("adapters/" + name); }

nn::TransformerConfig lm_config() {
  nn::TransformerConfig c;
  c.vocab_size = 23;
  c.context_length = 16;
  c.d_model = 16;
  c.num_layers = 2;
  c.num_heads = 4;
  c.d_ff = 32;
  return c;
}

std::unique_ptr<nn::TransformerLM> fixture_lm() {
  auto lm = std::make_unique<nn::TransformerLM>(lm_config(), nullptr, DType::Float64);
  nn::StateDict w;
  for (const auto& [name, p] : lm->named_parameters()) w[name] = lm_fixture("lm." + name);
  lm->load_state_dict(w);
  return lm;
}

TEST(ex17_lm, logits_match_torch_float64) {
  expect_values(fixture_lm()->forward(lm_fixture("lm.ids")), lm_fixture("lm.out"), f64_tol(), "logits");
}

TEST(ex17_lm, logits_match_torch_float32_within_the_error_bound) {
  // float32 against torch's float64 (the bound of two float32 programs covers
  // one). K: the longest sum, over D = 16 or d_ff = 32 features; stages: the
  // embedding, 2 blocks of 16 (see ex17-block), ln_final (2), the head: 36.
  const std::vector<std::string> names = [] {
    std::vector<std::string> n;
    for (const auto& [name, p] : nn::TransformerLM(lm_config(), nullptr, DType::Float64).named_parameters())
      n.push_back(name);
    return n;
  }();
  const ForwardRun run = [&names](const std::vector<Tensor>& ls) {
    auto lm = std::make_shared<nn::TransformerLM>(lm_config(), nullptr, ls[0].dtype());
    nn::StateDict w;
    for (size_t i = 0; i < names.size(); ++i) w[names[i]] = ls[i];
    lm->load_state_dict(w);
    std::vector<Tensor> held;
    for (const auto& [name, p] : lm->named_parameters()) held.push_back(p);  // the same order as names
    return std::make_pair(lm->forward(lm_fixture("lm.ids")), held);
  };
  std::vector<Tensor> leaves;
  for (const std::string& n : names) leaves.push_back(lm_fixture("lm." + n));
  expect_f32_forward(run, leaves, lm_fixture("lm.out"), {32, 36}, "logits/f32");
}

TEST(ex17_lm, logits_are_batch_by_time_by_vocabulary) {
  const Tensor logits = fixture_lm()->forward(tensor_i64({1, 2, 3}, {1, 3}));
  if (logits.shape() != Shape{1, 3, 23})
    ADD_FAILURE() << "logits of shape " << shape_str(logits.shape()) << ", expected (B, T, V) = [1, 3, 23]";
}

TEST(ex17_lm, the_logits_at_position_t_do_not_depend_on_later_tokens) {
  const auto lm = fixture_lm();
  const std::vector<double> a = lm->forward(tensor_i64({3, 1, 4, 1, 5}, {1, 5})).to_vector<double>();
  const std::vector<double> b = lm->forward(tensor_i64({3, 1, 4, 9, 2}, {1, 5})).to_vector<double>();
  for (size_t e = 0; e < 3 * 23; ++e) {  // positions 0..2 share their prefix
    if (std::abs(a[e] - b[e]) > 1e-12) {
      ADD_FAILURE() << "the logits at position " << e / 23 << " change with tokens 3 and 4: every block must be causal";
      return;
    }
  }
}

TEST(ex17_lm, tied_embeddings_use_the_embedding_matrix_as_the_head) {
  nn::TransformerConfig c = lm_config();
  c.tie_embeddings = true;
  Generator gen(5);
  nn::TransformerLM lm(c, &gen, DType::Float64);
  const Tensor logits = lm.forward(tensor_i64({0, 7, 22}, {1, 3}));
  if (logits.shape() != Shape{1, 3, 23}) {
    ADD_FAILURE() << "tied: logits of shape " << shape_str(logits.shape()) << ", expected [1, 3, 23]";
    return;
  }
  // The same model untied, its head holding E (V, D): the same logits h E^T.
  nn::TransformerConfig u = c;
  u.tie_embeddings = false;
  Generator gen2(5);
  nn::TransformerLM untied(u, &gen2, DType::Float64);
  nn::StateDict w = lm.state_dict();
  w["lm_head.weight"] = lm.token_embeddings->weight;  // (V, D): the same matrix as a head
  untied.load_state_dict(w);
  const ::testing::AssertionResult same = all_close(logits, untied.forward(tensor_i64({0, 7, 22}, {1, 3})), f64_tol());
  if (!same) ADD_FAILURE() << "tied logits differ from a head holding the embedding matrix (h E^T): " << same.message();
}

TEST(ex17_lm, the_final_norm_comes_before_the_head) {
  // Scaling ln_final's gain by 2 doubles every logit (the head is linear and
  // comes after the norm); a missing final norm leaves them unchanged.
  const auto lm = fixture_lm();
  const Tensor ids = lm_fixture("lm.ids");
  const std::vector<double> before = lm->forward(ids).to_vector<double>();
  nn::StateDict w = lm->state_dict();
  w["ln_final.weight"] = mul(w["ln_final.weight"], 2.0);
  lm->load_state_dict(w);
  const std::vector<double> after = lm->forward(ids).to_vector<double>();
  for (size_t e = 0; e < before.size(); ++e) {
    if (std::abs(after[e] - 2 * before[e]) > 1e-10 * (1 + std::abs(before[e]))) {
      ADD_FAILURE() << "doubling ln_final's gain does not double the logits: is ln_final applied, right before "
                       "lm_head?\nlogit " << e << ": " << before[e] << " -> " << after[e];
      return;
    }
  }
}

}  // namespace
}  // namespace ropegrad::course
