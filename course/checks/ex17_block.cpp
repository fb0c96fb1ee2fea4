// ex17-block: the pre-norm transformer block (nn/transformer.cpp,
// TransformerBlock::forward): h = x + attn(ln1(x)), then h + ffn(ln2(h)).
#include <functional>
#include <memory>

#include "autograd/engine.h"
#include "course/checks/attention_check_util.h"
#include "nn/transformer.h"
#include "tensor/kernels.h"

namespace ropegrad::course {
namespace {

// tests/fixtures/adapters/block.*: CS336's transformer block in float64 torch,
// D = 16, H = 4, d_ff = 32, RoPE theta 10000 (interleaved), causal; in (2, 6,
// 16) and out (tests/fixtures/make_adapter_fixtures.py).
Tensor block_fixture(const std::string& name) { return load_fixture("adapters/" + name); }

nn::TransformerConfig block_config() { return small_block_config(nn::NormPlacement::Pre); }

std::unique_ptr<nn::TransformerBlock> make_block(DType dtype, Generator* gen = nullptr) {
  return make_small_block(nn::NormPlacement::Pre, dtype, gen);
}

// leaves: in, then the weights in kBlockWeights order; the result: the block's output.
ParityRun block_run() {
  return [](const std::vector<Tensor>& ls) {
    const auto block = make_block(ls[0].dtype());
    load_leaves(*block, kBlockWeights, ls, 1);
    nn::AttentionCall call = nn::AttentionCall::causal();
    return NamedTensors{{"out", block->forward(ls[0], call)}};
  };
}

std::vector<Tensor> block_leaves() {
  std::vector<Tensor> leaves = {block_fixture("block.in")};
  for (const std::string& n : kBlockWeights) leaves.push_back(block_fixture("block." + n));
  return leaves;
}

TEST(ex17_block, output_matches_torch_float64) {
  expect_f64_results(block_run(), block_leaves(), [](const std::string&) { return block_fixture("block.out"); }, "block");
}

// The fixture's block with its two norms' gains set apart (ln1 0.5.., ln2
// 1.5..), so that reading one norm for the other shows.
std::unique_ptr<nn::TransformerBlock> probe_block() {
  auto block = make_block(DType::Float64);
  load_leaves(*block, kBlockWeights, block_leaves(), 1);
  nn::StateDict w = block->state_dict();
  std::vector<double> g1, g2;
  for (int i = 0; i < 16; ++i) g1.push_back(0.5 + 0.05 * i), g2.push_back(1.5 - 0.04 * i);
  w["ln1.weight"] = tensor(g1, {16}, DType::Float64);
  w["ln2.weight"] = tensor(g2, {16}, DType::Float64);
  block->load_state_dict(w);
  return block;
}

bool same(const Tensor& a, const Tensor& b) { return all_close(a, b, f64_tol()); }

TEST(ex17_block, each_step_is_the_residual_of_its_normalised_sublayer) {
  const auto block = probe_block();
  const nn::AttentionCall call = nn::AttentionCall::causal();
  const Tensor x = block_fixture("block.in");
  const auto attn = [&](const Tensor& t) { return block->attn->forward(t, call); };
  const auto ffn = [&](const Tensor& t) { return block->ffn->forward(t); };
  const Tensor h = add(x, attn(block->ln1->forward(x)));
  const Tensor want = add(h, ffn(block->ln2->forward(h)));
  const Tensor got = block->forward(x, call);
  if (same(got, want)) return;
  // Each cause is the block built from the module's own pieces in another
  // way; it is named only when the block's output is that one (and not the
  // right one) on this input, where all of them differ.
  const Tensor g = add(x, ffn(block->ln2->forward(x)));
  const Tensor a = attn(block->ln1->forward(x));
  const std::vector<std::pair<std::string, Tensor>> causes = {
      {"the feed-forward reads ln2 of the block's input x, not of h = x + attention", add(h, ffn(block->ln2->forward(x)))},
      {"the feed-forward's input is normalised with ln1, not ln2", add(h, ffn(block->ln1->forward(h)))},
      {"the sublayers run in the other order: the feed-forward step first, then attention on its result",
       add(g, attn(block->ln1->forward(g)))},
      {"the residual around attention is missing (h = attention alone)", add(a, ffn(block->ln2->forward(a)))},
      {"the residual around the feed-forward is missing", ffn(block->ln2->forward(h))},
  };
  for (const auto& [cause, built] : causes) {
    if (same(got, built)) {
      ADD_FAILURE() << "the block's output is exactly that of this block: " << cause;
      return;
    }
  }
  // Then each of eight forms of the attention step h (from x) with each of
  // eleven forms of the feed-forward step (from h and x), the right ones first.
  using Step = std::function<Tensor(const Tensor& h)>;
  const auto ln1 = [&](const Tensor& t) { return block->ln1->forward(t); };
  const auto ln2 = [&](const Tensor& t) { return block->ln2->forward(t); };
  const std::vector<std::pair<std::string, Tensor>> attention_steps = {
      {"x + attn(ln1(x))", h},
      {"ln1(x) + attn(ln1(x))", add(ln1(x), attn(ln1(x)))},
      {"x + ln1(attn(x))", add(x, ln1(attn(x)))},
      {"x + attn(x)", add(x, attn(x))},
      {"attn(ln1(x))", attn(ln1(x))},
      {"ln1(x + attn(x))", ln1(add(x, attn(x)))},
      {"x + attn(ln2(x))", add(x, attn(ln2(x)))},
      {"x + ln1(attn(ln1(x)))", add(x, ln1(attn(ln1(x))))}};
  const std::vector<std::pair<std::string, Step>> ffn_steps = {
      {"h + ffn(ln2(h))", [&](const Tensor& t) { return add(t, ffn(ln2(t))); }},
      {"h + ffn(ln2(x))", [&](const Tensor& t) { return add(t, ffn(ln2(x))); }},
      {"h + ffn(ln1(h))", [&](const Tensor& t) { return add(t, ffn(ln1(t))); }},
      {"ffn(ln2(h))", [&](const Tensor& t) { return ffn(ln2(t)); }},
      {"ln2(h) + ffn(ln2(h))", [&](const Tensor& t) { return add(ln2(t), ffn(ln2(t))); }},
      {"h + ln2(ffn(h))", [&](const Tensor& t) { return add(t, ln2(ffn(t))); }},
      {"h + ffn(h)", [&](const Tensor& t) { return add(t, ffn(t)); }},
      {"ln2(h + ffn(h))", [&](const Tensor& t) { return ln2(add(t, ffn(t))); }},
      {"x + ffn(ln2(h))", [&](const Tensor& t) { return add(x, ffn(ln2(t))); }},
      {"h alone (no feed-forward step)", [&](const Tensor& t) { return t; }},
      {"h + attn(ln2(h)) (the attention again, the feed-forward never used)",
       [&](const Tensor& t) { return add(t, attn(ln2(t))); }}};
  for (size_t ai = 0; ai < attention_steps.size(); ++ai) {
    for (size_t fi = 0; fi < ffn_steps.size(); ++fi) {
      if (!same(got, ffn_steps[fi].second(attention_steps[ai].second))) continue;
      const std::string attention = ai == 0 ? "its attention step h = x + attn(ln1(x)) is right"
                                            : "its attention step is h = " + attention_steps[ai].first +
                                                  ", where h = x + attn(ln1(x)) belongs";
      const std::string feed_forward = fi == 0 ? "its feed-forward step h + ffn(ln2(h)) is right"
                                               : "its feed-forward step is " + ffn_steps[fi].first +
                                                     ", where h + ffn(ln2(h)) belongs";
      ADD_FAILURE() << "the output is exactly that of a block built from the same pieces in which "
                    << (ai == 0 ? feed_forward + ", and " + attention : attention + ", and " + feed_forward);
      return;
    }
  }
  // None fits: which step is wrong, with the other sublayer silenced.
  nn::StateDict w = block->state_dict();
  w["ffn.w2.weight"] = zeros({16, 32}, DType::Float64);
  block->load_state_dict(w);
  const Tensor silenced = block->forward(x, call);
  if (same(silenced, h)) {
    ADD_FAILURE() << "with the feed-forward silenced (w2 = 0) the block is x + attn(ln1(x)), as it should: the "
                     "attention step is right, the feed-forward step h + ffn(ln2(h)) is not";
    return;
  }
  // What the block adds to h then: x once more, or h once more, is said; otherwise nothing is blamed.
  const Tensor extra = sub(silenced, h);
  const char* added = same(extra, x) ? "x: the input x is added once more"
                      : same(extra, h) ? "h: the attention step's result is added once more"
                                       : nullptr;
  ADD_FAILURE() << "with the feed-forward silenced (w2 = 0) the block is not x + attn(ln1(x)), which the two steps "
                   "give when the feed-forward adds 0"
                << (added != nullptr ? fmt::format(": it is that plus {}", added)
                                     : std::string(" (either step may add something else there)"));
}

// The call the block is given is the one its attention gets: with a
// bidirectional call, and with a causal call at positions 5.. (as after a
// cache of 5 tokens), the block equals the same pieces run with that call.
TEST(ex17_block, the_call_reaches_attention) {
  COURSE_REQUIRES("each_step_is_the_residual_of_its_normalised_sublayer");
  const auto block = probe_block();
  const Tensor x = block_fixture("block.in");
  const auto built = [&](const nn::AttentionCall& call) {
    const Tensor h = add(x, block->attn->forward(block->ln1->forward(x), call));
    return add(h, block->ffn->forward(block->ln2->forward(h)));
  };
  nn::AttentionCall later = nn::AttentionCall::causal();
  later.positions = arange(int64_t{5}, 5 + x.size(1));
  const std::pair<std::string, nn::AttentionCall> calls[] = {
      {"AttentionCall::bidirectional()", nn::AttentionCall::bidirectional()},
      {"a causal call with positions 5..", later}};
  for (const auto& [name, call] : calls) {
    const Tensor got = block->forward(x, call);
    if (same(got, built(call))) continue;
    const bool as_plain = same(got, built(nn::AttentionCall::causal()));
    ADD_FAILURE() << "with " << name << " the block's output "
                  << (as_plain ? "is that of the same block under a plain AttentionCall::causal(): the block does not "
                                 "pass the call it is given to its attention (is_causal, mask, positions, cache)"
                               : "is not x + attn(ln1(x), call) followed by h + ffn(ln2(h)), though it is under "
                                 "AttentionCall::causal()");
    return;
  }
}

// The block runs its attention once per forward: with a KV cache, one call
// on T tokens leaves T keys in the cache (a second attention call appends
// them again).
TEST(ex17_block, attention_runs_once_per_forward) {
  COURSE_REQUIRES("each_step_is_the_residual_of_its_normalised_sublayer");
  const auto block = probe_block();
  const Tensor x = block_fixture("block.in");
  nn::KVCache cache;
  nn::AttentionCall call = nn::AttentionCall::causal();
  call.cache = &cache;
  block->forward(x, call);
  if (cache.length() != x.size(1)) {
    ADD_FAILURE() << "one forward on " << x.size(1) << " tokens with a KVCache leaves " << cache.length()
                  << " keys in it, expected " << x.size(1) << ": the attention ran "
                  << (cache.length() % x.size(1) == 0 ? std::to_string(cache.length() / x.size(1)) + " times"
                                                      : "more than once")
                  << " in one forward (h = x + attn(ln1(x), call) once, then reused)";
  }
}

TEST(ex17_block, output_matches_torch_float32_within_the_error_bound) {
  // float32 against torch's float64 (the bound of two float32 programs covers
  // one). K: the longest sum, over D = 16 or d_ff = 32 features; stages: ln1
  // (mean square, scaling), the q/k/v projections, RoPE, the scores, the
  // softmax (exp, sum), P V, the output projection, the residual, ln2 (2),
  // w1 and w3, SiLU times w3, w2, the residual: 16.
  const ForwardRun run = causal_layer_run([](DType dt) { return make_block(dt); }, kBlockWeights);
  expect_f32_forward(run, block_leaves(), block_fixture("block.out"), {32, 16}, "block/f32 out");
}

TEST(ex17_block, gradients_of_the_input_and_every_weight_pass_gradcheck) {
  Generator gen(17);
  nn::TransformerConfig c = block_config();
  c.d_model = 8, c.num_heads = 2, c.d_ff = 8;
  nn::RopeConfig rc;
  rc.head_dim = 4;
  rc.max_seq_len = 16;
  nn::TransformerBlock block(c, std::make_shared<nn::RotaryEmbedding>(rc, DType::Float64), &gen, DType::Float64);
  for (const Tensor& p : block.parameters()) {  // RMSNorm gains away from 1, so a missing norm shows
    std::vector<double> v = p.to_vector<double>();
    if (p.dim() == 1)
      for (size_t i = 0; i < v.size(); ++i) v[i] = 0.5 + 0.25 * static_cast<double>(i % 4);
    kernels::copy_into(p, tensor(v, p.shape(), DType::Float64));
  }
  std::vector<Tensor> inputs = {randn({1, 4, 8}, DType::Float64, &gen).requires_grad_()};
  for (const Tensor& p : block.parameters()) inputs.push_back(p);
  nn::AttentionCall call = nn::AttentionCall::causal();
  expect_gradcheck([&](const std::vector<Tensor>& in) { return block.forward(in[0], call); }, inputs,
                   "TransformerBlock");
}

TEST(ex17_block, with_silent_sublayers_the_block_passes_its_input_through) {
  // Zero output projections (attention's output_proj, the FFN's w2): both
  // sublayers add 0, so a pre-norm block returns x itself. (The norms' gains
  // away from 1 and different, so that which norm acted on x shows.)
  Generator gen(3);
  const auto block = make_block(DType::Float64, &gen);
  const Tensor x = randn({1, 4, 16}, DType::Float64, &gen);
  nn::StateDict w = block->state_dict();
  std::vector<double> g1, g2;
  for (int i = 0; i < 16; ++i) g1.push_back(0.5 + 0.05 * i), g2.push_back(1.5 - 0.04 * i);
  w["ln1.weight"] = tensor(g1, {16}, DType::Float64);
  w["ln2.weight"] = tensor(g2, {16}, DType::Float64);
  w["attn.output_proj.weight"] = zeros({16, 16}, DType::Float64);
  w["ffn.w2.weight"] = zeros({16, 32}, DType::Float64);
  block->load_state_dict(w);
  nn::AttentionCall call = nn::AttentionCall::causal();
  const Tensor out = block->forward(x, call);
  if (max_abs_diff(out, zeros(out.shape(), DType::Float64)) == 0) {
    ADD_FAILURE() << "the block gives 0, expected x: the residual is missing (x + attn(ln1(x)), then + ffn(ln2(h)))";
    return;
  }
  const ::testing::AssertionResult same = all_close(out, x, f64_tol());
  if (same) return;
  // A multiple of x: the input added more than once (or not at all, 0 x).
  {
    const std::vector<double> o = out.to_vector<double>(), xv = x.to_vector<double>();
    std::vector<size_t> every(o.size());
    for (size_t i = 0; i < every.size(); ++i) every[i] = i;
    const double c = findings_detail::common_ratio(o, xv, every);
    if (!std::isnan(c) && std::abs(c - std::round(c)) <= 1e-9 && std::round(c) >= 2) {
      ADD_FAILURE() << "the block returns " << std::round(c) << " x though both sublayers add 0, not x: the input x "
                    << "is added " << std::round(c) << " times along the residual stream";
      return;
    }
  }
  // Which norms the stream itself went through, when it is one of these.
  const auto ln1 = [&](const Tensor& t) { return block->ln1->forward(t); };
  const auto ln2 = [&](const Tensor& t) { return block->ln2->forward(t); };
  const std::vector<std::pair<std::string, Tensor>> normed = {
      {"ln1(x)", ln1(x)}, {"ln2(x)", ln2(x)}, {"ln2(ln1(x))", ln2(ln1(x))}, {"ln1(ln2(x))", ln1(ln2(x))}};
  for (const auto& [text, t] : normed) {
    if (!all_close(out, t, f64_tol())) continue;
    ADD_FAILURE() << "the block returns " << text << " though both sublayers add 0, not x: the residual stream itself "
                  << "went through " << (text.size() > 6 ? "both norms" : "a norm")
                  << "; the norms act only on each sublayer's input (pre-norm)";
    return;
  }
  ADD_FAILURE() << "the block changes x though both sublayers add 0 (it is none of ln1(x), ln2(x) and their "
                   "compositions); with zero sublayers a pre-norm block returns x\n"
                << same.message();
}

}  // namespace
}  // namespace ropegrad::course
