// ex17-post-norm: the post-norm transformer block (nn/transformer.cpp,
// TransformerBlock::post_norm_forward): z = ln1(x + attn(x)), then
// ln2(z + ffn(z)), the original transformer's order.
#include <cmath>
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

TEST(ex17_post_norm, gradients_match_torch_float64) {
  COURSE_AFTER_FORWARD("output_matches_torch_float64", "the_output_is_normalised",
                       "with_silent_sublayers_the_block_is_ln2_of_ln1_of_x");
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
                       "with_silent_sublayers_the_block_is_ln2_of_ln1_of_x");
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
