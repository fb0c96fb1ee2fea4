// ex17-post-norm: the post-norm transformer block (nn/transformer.cpp,
// TransformerBlock::post_norm_forward): z = ln1(x + attn(x)), then
// ln2(z + ffn(z)), the original transformer's order.
#include <cmath>
#include <functional>
#include <memory>

#include "autograd/engine.h"
#include "course/checks/attention_check_util.h"
#include "nn/transformer.h"
#include "tensor/kernels.h"

namespace ropegrad::course {
namespace {

// tests/fixtures/ablations/block_post.*: the post-norm block in float64
// torch, D = 16, H = 4, d_ff = 32, RoPE theta 10000 (interleaved), causal;
// in (2, 6, 16), out, w and the gradients of sum(out * w)
// (tests/fixtures/make_ablation_fixtures.py).
Tensor post_block_fixture(const std::string& name) { return load_fixture("ablations/block_post." + name); }

nn::TransformerConfig post_block_config() { return small_block_config(nn::NormPlacement::Post); }

std::unique_ptr<nn::TransformerBlock> make_post_block(DType dtype, Generator* gen = nullptr) {
  return make_small_block(nn::NormPlacement::Post, dtype, gen);
}

std::unique_ptr<nn::TransformerBlock> fixture_block() {
  auto block = make_post_block(DType::Float64);
  nn::StateDict w;
  for (const std::string& n : kBlockWeights) w[n] = post_block_fixture(n);
  block->load_state_dict(w);
  return block;
}

std::vector<Tensor> post_block_leaves() {
  std::vector<Tensor> leaves = {post_block_fixture("in")};
  for (const std::string& n : kBlockWeights) leaves.push_back(post_block_fixture(n));
  return leaves;
}

TEST(ex17_post_norm, output_matches_torch_float64) {
  expect_values(fixture_block()->forward(post_block_fixture("in"), nn::AttentionCall::causal()), post_block_fixture("out"), f64_tol(),
                "post-norm block output vs torch");
}

TEST(ex17_post_norm, output_matches_torch_float32_within_the_error_bound) {
  // float32 against torch's float64. K: the longest sum, over D = 16 or d_ff
  // = 32 features; stages: the q/k/v projections, RoPE, the scores, the
  // softmax (exp, sum), P V, the output projection, the residual, ln1 (2),
  // w1 and w3, SiLU times w3, w2, the residual, ln2 (2): 16.
  const ForwardRun run = causal_layer_run([](DType dt) { return make_post_block(dt); }, kBlockWeights);
  expect_f32_forward(run, post_block_leaves(), post_block_fixture("out"), {32, 16}, "post-norm block/f32 out");
}

TEST(ex17_post_norm, the_output_is_normalised) {
  // Unit gains: ln2 acts last, on the whole sum, so every output row has mean
  // square 1 (up to eps / mean square). Pre-norm would leave the stream's scale.
  Generator gen(23);
  const auto block = make_post_block(DType::Float64, &gen);
  const Tensor x = mul(randn({2, 5, 16}, DType::Float64, &gen), 3.0);
  const std::vector<double> y = block->forward(x, nn::AttentionCall::causal()).to_vector<double>();
  for (size_t row = 0; row < y.size() / 16; ++row) {
    double ms = 0;
    for (size_t j = 0; j < 16; ++j) ms += y[row * 16 + j] * y[row * 16 + j] / 16;
    if (std::abs(ms - 1) > 1e-3) {
      ADD_FAILURE() << "output row " << row << " is not normalised (mean square " << fmt::format("{:.4g}", ms)
                    << ", expected 1 with unit gains): in post-norm, ln2 acts on the sum z + ffn(z), last";
      return;
    }
  }
}

TEST(ex17_post_norm, with_silent_sublayers_the_block_is_ln2_of_ln1_of_x) {
  // Zero output projections (attention's output_proj, the FFN's w2): both
  // sublayers add 0, so z = ln1(x) and the block returns ln2(ln1(x)) (the
  // fixture's gains, away from 1 and different, so the order shows).
  const auto block = fixture_block();
  nn::StateDict w = block->state_dict();
  w["attn.output_proj.weight"] = zeros({16, 16}, DType::Float64);
  w["ffn.w2.weight"] = zeros({16, 32}, DType::Float64);
  block->load_state_dict(w);
  const Tensor x = post_block_fixture("in");
  const Tensor out = block->forward(x, nn::AttentionCall::causal());
  if (all_close(out, x, f64_tol())) {
    ADD_FAILURE() << "with both sublayers adding 0 the block returns x unchanged: no norm (their gains are not 1) "
                     "acts on the residual stream x + sublayer(x) itself; post-norm normalises each residual sum";
    return;
  }
  const ::testing::AssertionResult same = all_close(out, block->ln2->forward(block->ln1->forward(x)), f64_tol());
  if (!same)
    ADD_FAILURE() << "with both sublayers adding 0 the block must return ln2(ln1(x)): ln1 on x + attn(x), then ln2 "
                     "on z + ffn(z)\n"
                  << same.message();
}

// The block's output against blocks built from its own pieces in other ways
// (the fixture's block: its norms' gains away from 1 and different): each of
// eight forms of the attention step z (from x) with each of nine forms of the
// feed-forward step (from z and x). A form is named only when the output is
// exactly that block, on an input where they all differ.
TEST(ex17_post_norm, the_two_steps_compared_with_look_alikes) {
  const auto block = fixture_block();
  const nn::AttentionCall call = nn::AttentionCall::causal();
  const Tensor x = post_block_fixture("in");
  const auto attn = [&](const Tensor& t) { return block->attn->forward(t, call); };
  const auto ffn = [&](const Tensor& t) { return block->ffn->forward(t); };
  const auto ln1 = [&](const Tensor& t) { return block->ln1->forward(t); };
  const auto ln2 = [&](const Tensor& t) { return block->ln2->forward(t); };
  const Tensor got = block->forward(x, call);
  using Step = std::function<Tensor(const Tensor& z)>;
  // The attention step's forms, the right one first.
  const std::vector<std::pair<std::string, Tensor>> attention_steps = {
      {"ln1(x + attn(x))", ln1(add(x, attn(x)))},       {"ln1(x + attn(ln1(x)))", ln1(add(x, attn(ln1(x))))},
      {"x + attn(ln1(x))", add(x, attn(ln1(x)))},       {"x + ln1(attn(x))", add(x, ln1(attn(x)))},
      {"x + attn(x)", add(x, attn(x))},                 {"ln1(attn(x))", ln1(attn(x))},
      {"ln1(x) + attn(ln1(x))", add(ln1(x), attn(ln1(x)))}, {"ln2(x + attn(x))", ln2(add(x, attn(x)))}};
  // The feed-forward step's forms, the right one first.
  const std::vector<std::pair<std::string, Step>> ffn_steps = {
      {"ln2(z + ffn(z))", [&](const Tensor& z) { return ln2(add(z, ffn(z))); }},
      {"ln2(x + ffn(z))", [&](const Tensor& z) { return ln2(add(x, ffn(z))); }},
      {"ln2(ffn(z))", [&](const Tensor& z) { return ln2(ffn(z)); }},
      {"z + ffn(z)", [&](const Tensor& z) { return add(z, ffn(z)); }},
      {"ln2(z + ffn(x))", [&](const Tensor& z) { return ln2(add(z, ffn(x))); }},
      {"z + ffn(ln2(z))", [&](const Tensor& z) { return add(z, ffn(ln2(z))); }},
      {"ln2(z + ffn(ln2(z)))", [&](const Tensor& z) { return ln2(add(z, ffn(ln2(z)))); }},
      {"z + ln2(ffn(z))", [&](const Tensor& z) { return add(z, ln2(ffn(z))); }},
      {"ln1(z + ffn(z))", [&](const Tensor& z) { return ln1(add(z, ffn(z))); }}};
  for (size_t a = 0; a < attention_steps.size(); ++a) {
    for (size_t f = 0; f < ffn_steps.size(); ++f) {
      if (!all_close(got, ffn_steps[f].second(attention_steps[a].second), f64_tol())) continue;
      if (a == 0 && f == 0) return;
      const std::string attention =
          a == 0 ? "its attention step z = ln1(x + attn(x)) is right"
                 : "its attention step is z = " + attention_steps[a].first + ", where z = ln1(x + attn(x)) belongs";
      const std::string feed_forward =
          f == 0 ? "its feed-forward step ln2(z + ffn(z)) is right"
                 : "its feed-forward step is " + ffn_steps[f].first + ", where ln2(z + ffn(z)) belongs";
      ADD_FAILURE() << "the output is exactly that of a block built from the same pieces in which "
                    << (a == 0 ? feed_forward + ", and " + attention : attention + ", and " + feed_forward);
      return;
    }
  }
  ADD_FAILURE() << "the output is none of the 72 blocks built from the same pieces (8 forms of the attention step, "
                   "9 of the feed-forward step, the right ones included)";
}

TEST(ex17_post_norm, gradients_match_torch_float64) {
  COURSE_AFTER_FORWARD("output_matches_torch_float64", "the_output_is_normalised",
                       "with_silent_sublayers_the_block_is_ln2_of_ln1_of_x",
                       "the_two_steps_compared_with_look_alikes");
  const auto block = fixture_block();
  Tensor x = post_block_fixture("in");
  x.requires_grad_(true);
  backward(block->forward(x, nn::AttentionCall::causal()), post_block_fixture("w"));  // d sum(out * w)
  expect_values(x.grad(), post_block_fixture("grad_in"), f64_tol(), "grad of the input");
  for (const auto& [name, p] : block->named_parameters())
    expect_values(p.grad(), post_block_fixture("grad_" + name), f64_tol(), "grad of " + name);
}

TEST(ex17_post_norm, gradients_of_the_input_and_every_weight_pass_gradcheck) {
  COURSE_AFTER_FORWARD("output_matches_torch_float64", "the_output_is_normalised",
                       "with_silent_sublayers_the_block_is_ln2_of_ln1_of_x",
                       "the_two_steps_compared_with_look_alikes");
  Generator gen(17);
  nn::TransformerConfig c = post_block_config();
  c.d_model = 8, c.num_heads = 2, c.d_ff = 8;
  nn::RopeConfig rc;
  rc.head_dim = 4;
  rc.max_seq_len = 16;
  nn::TransformerBlock block(c, std::make_shared<nn::RotaryEmbedding>(rc, DType::Float64), &gen, DType::Float64);
  for (const Tensor& p : block.parameters()) {  // RMSNorm gains away from 1, so each norm's gain gradient shows
    std::vector<double> v = p.to_vector<double>();
    if (p.dim() == 1)
      for (size_t i = 0; i < v.size(); ++i) v[i] = 0.5 + 0.25 * static_cast<double>(i % 4);
    kernels::copy_into(p, tensor(v, p.shape(), DType::Float64));
  }
  std::vector<Tensor> inputs = {randn({1, 4, 8}, DType::Float64, &gen).requires_grad_()};
  for (const Tensor& p : block.parameters()) inputs.push_back(p);
  expect_gradcheck([&](const std::vector<Tensor>& in) { return block.forward(in[0], nn::AttentionCall::causal()); },
                   inputs, "post-norm TransformerBlock");
}

}  // namespace
}  // namespace ropegrad::course
