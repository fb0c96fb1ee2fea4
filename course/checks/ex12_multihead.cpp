// ex12-multihead: multi-head self-attention with RoPE (nn/attention.cpp:
// split_heads, merge_heads, q and k rotated, the heads' output merged and
// projected in MultiHeadAttention::forward).
#include <memory>

#include "autograd/engine.h"
#include "course/checks/attention_check_util.h"
#include "nn/attention.h"

namespace ropegrad::course {
namespace {

// tests/fixtures/attention/mha_<case>.*: x (2, 6, 16), w (upstream weights),
// wq, wk, wv, wo (16, 16) and a mask; D = 16, H = 2, dh = 8, interleaved RoPE
// with base 10000; results out, grad_x and grad_wq/wk/wv/wo
// (tests/fixtures/make_attention_fixtures.py).
Tensor mha_fixture(const std::string& name) { return load_fixture("attention/" + name); }

// Without `with_backward` only "out": a forward check never runs the backward.
ParityRun mha_run(const std::string& name, bool has_mask, bool causal, bool with_backward = true) {
  const Tensor mask = has_mask ? mha_fixture(name + ".mask") : Tensor();
  return [mask, causal, with_backward](const std::vector<Tensor>& ls) {
    const DType dt = ls[0].dtype();
    nn::MultiHeadAttention mha(16, 2, make_rope(8, dt), nullptr, dt);
    mha.load_state_dict(
        {{"q_proj.weight", ls[2]}, {"k_proj.weight", ls[3]}, {"v_proj.weight", ls[4]}, {"output_proj.weight", ls[5]}});
    Tensor x = ls[0];
    x.requires_grad_(true);
    nn::AttentionCall call = causal ? nn::AttentionCall::causal() : nn::AttentionCall::bidirectional();
    call.mask = mask;
    const Tensor out = mha.forward(x, call);
    if (!with_backward) return NamedTensors{{"out", out.detach()}};
    backward(out, clone(ls[1]));  // d sum(out * w)
    return NamedTensors{{"out", out.detach()},
                        {"grad_x", x.grad()},
                        {"grad_wq", mha.q_proj->weight.grad()},
                        {"grad_wk", mha.k_proj->weight.grad()},
                        {"grad_wv", mha.v_proj->weight.grad()},
                        {"grad_wo", mha.output_proj->weight.grad()}};
  };
}

std::vector<Tensor> mha_leaves(const std::string& name) {
  std::vector<Tensor> leaves;
  for (const char* n : {".x", ".w", ".wq", ".wk", ".wv", ".wo"}) leaves.push_back(mha_fixture(name + n));
  return leaves;
}

void expect_mha_torch_f64(const std::string& name, bool has_mask, bool causal, Part part) {
  const ParityRun run = mha_run(name, has_mask, causal, part != Part::Forward);
  for (const auto& [n, t] : run(testing::detail::fresh(mha_leaves(name), DType::Float64)))
    if (in_part(n, part)) expect_values(t, mha_fixture(name + ".f64." + n), f64_tol(), name + " " + n);
}

// The forward first: these run no backward.
TEST(ex12_multihead, output_matches_torch_float64_with_a_causal_mask) {
  expect_mha_torch_f64("mha_causal", false, true, Part::Forward);
}

TEST(ex12_multihead, output_matches_torch_float64_with_a_padding_mask) {
  expect_mha_torch_f64("mha_bool_padding", true, false, Part::Forward);
}

// x[b, t, f] = its flat index, so each value says which element of x it is.
std::string x_element(double value, int64_t t_count, int64_t d) {
  const auto flat = static_cast<int64_t>(value);
  return fmt::format("x[{}, {}, {}]", flat / (t_count * d), flat / d % t_count, flat % d);
}

TEST(ex12_multihead, heads_are_contiguous_blocks_of_features_and_merge_undoes_split) {
  const int64_t B = 2, T = 3, D = 8, H = 2, dh = 4;
  const Tensor x = reshape(arange(0.0, 48.0, 1.0, DType::Float64), {B, T, D});  // x[b, t, f] = (b T + t) D + f
  const Tensor heads = nn::split_heads(x, H);
  if (heads.shape() != Shape{B, H, T, dh}) {
    ADD_FAILURE() << "split_heads gives shape " << shape_str(heads.shape()) << ", expected (B, H, T, dh) = [2, 2, 3, 4]";
    return;
  }
  // head h of token t is x[b, t, h dh : (h + 1) dh]: element [b, h, t, j] is x[b, t, h dh + j].
  const std::vector<double> got = heads.to_vector<double>();
  for (int64_t b = 0; b < B; ++b)
    for (int64_t h = 0; h < H; ++h)
      for (int64_t t = 0; t < T; ++t)
        for (int64_t j = 0; j < dh; ++j) {
          const double value = got[static_cast<size_t>(((b * H + h) * T + t) * dh + j)];
          const double want = static_cast<double>((b * T + t) * D + h * dh + j);
          if (value != want) {
            ADD_FAILURE() << "split_heads(x)[" << b << ", " << h << ", " << t << ", " << j << "] (head " << h
                          << " of token " << t << ") holds " << x_element(value, T, D) << ", expected "
                          << x_element(want, T, D) << ": head h of token t is features h dh .. (h + 1) dh - 1 of "
                          << "token t (x (B, T, D) with B = 2, T = 3, D = 8, H = 2)";
            return;
          }
        }
  const Tensor back = nn::merge_heads(heads);
  if (back.shape() != x.shape()) {
    ADD_FAILURE() << "merge_heads gives shape " << shape_str(back.shape()) << ", expected (B, T, D) = [2, 3, 8]";
    return;
  }
  const std::vector<double> merged = back.to_vector<double>();
  for (size_t e = 0; e < merged.size(); ++e)
    if (merged[e] != static_cast<double>(e)) {
      ADD_FAILURE() << "merge_heads(split_heads(x)) is not x: its element " << x_element(static_cast<double>(e), T, D)
                    << " holds " << x_element(merged[e], T, D) << " (split_heads is right)";
      return;
    }
}

TEST(ex12_multihead, rope_rotates_queries_and_keys_but_not_values) {
  COURSE_REQUIRES("heads_are_contiguous_blocks_of_features_and_merge_undoes_split");
  // With q = k = 0 every score is 0: position t averages the values of tokens
  // 0..t, so out[t] = Wo mean(Wv x[0..t]), rotated or not only if v is.
  Generator gen(5);
  const auto rope = make_rope(4, DType::Float64);
  nn::MultiHeadAttention mha(8, 2, rope, &gen, DType::Float64);
  mha.q_proj->weight = zeros({8, 8}, DType::Float64);
  mha.k_proj->weight = zeros({8, 8}, DType::Float64);
  const Tensor x = randn({1, 4, 8}, DType::Float64, &gen);
  nn::AttentionCall call = nn::AttentionCall::causal();
  const Tensor out = reshape(mha.forward(x, call), {4, 8});
  const Tensor v = matmul(reshape(x, {4, 8}), transpose(mha.v_proj->weight, 0, 1));  // (T, D)
  std::vector<double> mean(16, 0.0);  // (T, T): row t averages tokens 0..t
  for (int t = 0; t < 4; ++t)
    for (int j = 0; j <= t; ++j) mean[t * 4 + j] = 1.0 / (t + 1);
  const auto averaged = [&](const Tensor& values) {
    return matmul(matmul(tensor(mean, {4, 4}, DType::Float64), values), transpose(mha.output_proj->weight, 0, 1));
  };
  const ::testing::AssertionResult r = all_close(out, averaged(v), f64_tol());
  if (r) return;
  // The values rotated as q and k are (heads (1, 2, 4, 4), positions 0..3), then averaged.
  const Tensor v_heads = transpose(reshape(v, {1, 4, 2, 4}), 1, 2);
  const Tensor v_rotated = reshape(transpose(rope->forward(v_heads, Tensor(), false), 1, 2), {4, 8});
  if (all_close(out, averaged(v_rotated), f64_tol())) {
    ADD_FAILURE() << "with q = k = 0 (every score 0, so position t averages the values of tokens 0..t) the output "
                     "is Wo times the mean of the values rotated by RoPE: v is rotated too, where RoPE turns q and "
                     "k only";
    return;
  }
  ADD_FAILURE() << "with q = k = 0 (every score 0, so position t averages the values of tokens 0..t) the output is "
                   "not Wo times the mean of the values\n" << r.message();
}

TEST(ex12_multihead, the_output_at_position_t_does_not_depend_on_later_tokens) {
  Generator gen(7);
  nn::MultiHeadAttention mha(8, 2, make_rope(4, DType::Float64), &gen, DType::Float64);
  const Tensor x = randn({2, 6, 8}, DType::Float64, &gen);
  nn::AttentionCall call = nn::AttentionCall::causal();
  const std::vector<double> base = mha.forward(x, call).to_vector<double>();
  for (int64_t t = 0; t < 5; ++t) {
    std::vector<double> changed = x.to_vector<double>();
    for (int64_t b = 0; b < 2; ++b)
      for (int64_t s = t + 1; s < 6; ++s)
        for (int64_t d = 0; d < 8; ++d) changed[(b * 6 + s) * 8 + d] += 1.0;
    const std::vector<double> out = mha.forward(tensor(changed, {2, 6, 8}, DType::Float64), call).to_vector<double>();
    for (int64_t b = 0; b < 2; ++b)
      for (int64_t s = 0; s <= t; ++s)
        for (int64_t d = 0; d < 8; ++d) {
          const size_t e = static_cast<size_t>((b * 6 + s) * 8 + d);
          if (std::abs(out[e] - base[e]) > 1e-12) {
            ADD_FAILURE() << "the output at position " << s << " changes when tokens after " << t
                          << " change (causal attention: position t sees tokens 0..t only)";
            return;
          }
        }
  }
}

// The gradients, once the forward is right.
#define AFTER_MHA_FORWARD()                                                                        \
  COURSE_AFTER_FORWARD("output_matches_torch_float64_with_a_causal_mask",                          \
                       "output_matches_torch_float64_with_a_padding_mask",                         \
                       "heads_are_contiguous_blocks_of_features_and_merge_undoes_split")

// The tokens' positions reach RoPE: given explicitly (call.positions), and
// from the cache's length when decoding. Two observations, each a comparison
// of the layer with itself: no reference rotation is assumed.
TEST(ex12_multihead, the_tokens_positions_reach_rope) {
  AFTER_MHA_FORWARD();
  Generator gen(31);
  nn::MultiHeadAttention mha(8, 2, make_rope(4, DType::Float64), &gen, DType::Float64);
  const Tensor x = randn({1, 6, 8}, DType::Float64, &gen);
  const Tensor at_default = mha.forward(x, nn::AttentionCall::causal());  // positions 0..5
  nn::AttentionCall spread = nn::AttentionCall::causal();
  spread.positions = tensor({0.0, 3.0, 5.0, 6.0, 10.0, 11.0}, {6}, DType::Int64);
  const Tensor at_spread = mha.forward(x, spread);
  // Relative distances differ between the two (3 against 1 for tokens 0 and 1): the outputs must differ.
  if (all_close(at_spread, at_default, f64_tol())) {
    ADD_FAILURE() << "the output with call.positions = [0, 3, 5, 6, 10, 11] equals the output with no positions "
                     "(0..5), though the distances between tokens differ: call.positions never changes the rotation";
    return;
  }
  // Decoding: tokens 0..3 in one call, then 4 and 5 one at a time with a cache, against all six at once.
  nn::KVCache cache;
  nn::AttentionCall with_cache = nn::AttentionCall::causal();
  with_cache.cache = &cache;
  std::vector<double> decoded = mha.forward(slice(x, 1, 0, 4, 1), with_cache).to_vector<double>();
  for (int64_t t = 4; t < 6; ++t) {
    const std::vector<double> one = mha.forward(slice(x, 1, t, t + 1, 1), with_cache).to_vector<double>();
    decoded.insert(decoded.end(), one.begin(), one.end());
  }
  const std::vector<double> full = at_default.to_vector<double>();
  std::vector<int64_t> wrong;
  for (int64_t t = 0; t < 6; ++t)
    for (int64_t d = 0; d < 8; ++d)
      if (std::abs(decoded[t * 8 + d] - full[t * 8 + d]) > 1e-10 * (1 + std::abs(full[t * 8 + d]))) {
        wrong.push_back(t);
        break;
      }
  if (!wrong.empty()) {
    std::string tokens;
    for (int64_t t : wrong) tokens += (tokens.empty() ? "" : ", ") + std::to_string(t);
    ADD_FAILURE() << "decoding with a KV cache (tokens 0..3 in one call, then 4 and 5 one at a time) differs from "
                     "the whole sequence in one call at token(s) "
                  << tokens << "; with the cache a token's position is the cache's length (4, then 5), which "
                  << "MultiHeadAttention::forward puts in `positions`";
  }
}

TEST(ex12_multihead, gradients_match_torch_float64_with_a_causal_and_a_padding_mask) {
  AFTER_MHA_FORWARD();
  expect_mha_torch_f64("mha_causal", false, true, Part::Gradients);
  expect_mha_torch_f64("mha_bool_padding", true, false, Part::Gradients);
}

TEST(ex12_multihead, output_matches_torch_float32_within_the_error_bound) {
  AFTER_MHA_FORWARD();
  // K: the longest sum, over D = 16 features; stages: the projections, RoPE,
  // the scores, the softmax (exp, sum), P V, the output projection: 7.
  const ForwardRun run = [](const std::vector<Tensor>& ls) {
    const DType dt = ls[0].dtype();
    auto mha = std::make_shared<nn::MultiHeadAttention>(16, 2, make_rope(8, dt), nullptr, dt);
    mha->load_state_dict(
        {{"q_proj.weight", ls[1]}, {"k_proj.weight", ls[2]}, {"v_proj.weight", ls[3]}, {"output_proj.weight", ls[4]}});
    Tensor x = ls[0];
    x.requires_grad_(true);
    nn::AttentionCall call = nn::AttentionCall::causal();
    return std::make_pair(mha->forward(x, call), std::vector<Tensor>{x, mha->q_proj->weight, mha->k_proj->weight,
                                                                     mha->v_proj->weight, mha->output_proj->weight});
  };
  std::vector<Tensor> leaves;
  for (const char* n : {".x", ".wq", ".wk", ".wv", ".wo"}) leaves.push_back(mha_fixture(std::string("mha_causal") + n));
  expect_f32_forward(run, leaves, mha_fixture("mha_causal.f32.out"), {16, 7}, "mha_causal/f32 out");
}

TEST(ex12_multihead, gradients_of_the_input_and_all_projections_pass_gradcheck) {
  AFTER_MHA_FORWARD();
  Generator gen(23);
  nn::MultiHeadAttention mha(8, 2, make_rope(4, DType::Float64), &gen, DType::Float64);  // D 8, H 2, dh 4
  std::vector<Tensor> inputs = {randn({1, 5, 8}, DType::Float64, &gen).requires_grad_()};
  for (const Tensor& p : mha.parameters()) inputs.push_back(p);  // perturbed in place: the module sees them
  nn::AttentionCall call = nn::AttentionCall::causal();
  expect_gradcheck([&](const std::vector<Tensor>& in) { return mha.forward(in[0], call); }, inputs,
                   "MultiHeadAttention");
}

}  // namespace
}  // namespace ropegrad::course
