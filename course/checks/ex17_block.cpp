// ex17-block: the pre-norm transformer block (nn/transformer.cpp,
// TransformerBlock::forward): h = x + attn(ln1(x)), then h + ffn(ln2(h)).
#include <bit>
#include <functional>
#include <memory>

#include "autograd/engine.h"
#include "course/checks/attention_check_util.h"
#include "nn/functional.h"
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

// One step of a block, written out of its pieces: outer(base +- post(S(pre(src)))),
// each choice a norm (ln1, ln2) or none; `changes` counts the choices that
// differ from the pre-norm block's.
struct StepForm {
  std::string text;
  Tensor value;
  int changes;
};

// The forms of a step whose right form is base + S(pre(src)): `bases` and
// `sources` list the right one first; S is named `sublayer` in the text.
std::vector<StepForm> step_forms(const std::vector<std::pair<std::string, Tensor>>& bases,
                                 const std::vector<std::pair<std::string, Tensor>>& sources, const std::string& sublayer,
                                 const std::function<Tensor(const Tensor&)>& S, const nn::TransformerBlock& b,
                                 const std::string& right_pre) {
  const std::vector<std::pair<std::string, std::function<Tensor(const Tensor&)>>> norms = {
      {"", [](const Tensor& t) { return t; }},
      {"ln1", [&](const Tensor& t) { return b.ln1->forward(t); }},
      {"ln2", [&](const Tensor& t) { return b.ln2->forward(t); }}};
  const auto wrap = [](const std::string& n, const std::string& t) { return n.empty() ? t : n + "(" + t + ")"; };
  std::vector<StepForm> out;
  for (size_t si = 0; si < sources.size(); ++si)
    for (const auto& [pre, fpre] : norms) {
      const Tensor inner = S(fpre(sources[si].second));
      const std::string inner_text = sublayer + "(" + wrap(pre, sources[si].first) + ")";
      for (const auto& [post, fpost] : norms) {
        const Tensor branch = fpost(inner);
        for (size_t bi = 0; bi <= bases.size(); ++bi) {  // bi == size: no residual
          for (const bool minus : {false, true}) {         // the branch added, or subtracted
            if (minus && bi == bases.size()) continue;
            const Tensor sum = bi == bases.size() ? branch
                               : minus            ? sub(bases[bi].second, branch)
                                                  : add(bases[bi].second, branch);
            const std::string sum_text = bi < bases.size()
                                             ? bases[bi].first + (minus ? " - " : " + ") + wrap(post, inner_text)
                                             : wrap(post, inner_text);
            for (const auto& [outer, fouter] : norms) {
              const int changes = (si != 0) + (pre != right_pre) + !post.empty() + (bi != 0) + minus + !outer.empty();
              out.push_back({outer.empty() ? sum_text : outer + "(" + sum_text + ")", fouter(sum), changes});
            }
          }
        }
      }
    }
  return out;
}

// "the output is exactly that of a block built from the same pieces in
// which ..." when one form of the attention step h (from x) followed by one
// form of the feed-forward step (from h and x) gives `got`, the forms with
// the fewest changes first; "" when none does.
std::string fitted_block_form(const nn::TransformerBlock& b, const Tensor& x, const nn::AttentionCall& call,
                              const Tensor& got) {
  const auto attn = [&](const Tensor& t) { return b.attn->forward(t, call); };
  const auto ffn = [&](const Tensor& t) { return b.ffn->forward(t); };
  const std::vector<StepForm> attention =
      step_forms({{"x", x}, {"ln1(x)", b.ln1->forward(x)}, {"ln2(x)", b.ln2->forward(x)}}, {{"x", x}}, "attn", attn, b,
                 "ln1");
  int best = 1 << 20;
  std::string found;
  for (const StepForm& a : attention) {
    if (a.changes >= best) continue;
    const Tensor& h = a.value;
    const std::vector<StepForm> feed_forward = step_forms(
        {{"h", h}, {"x", x}, {"ln1(h)", b.ln1->forward(h)}, {"ln2(h)", b.ln2->forward(h)}}, {{"h", h}, {"x", x}},
        "ffn", ffn, b, "ln2");
    for (const StepForm& f : feed_forward) {
      if (a.changes + f.changes >= best || !same(got, f.value)) continue;
      best = a.changes + f.changes;
      const std::string attention_text = a.changes == 0 ? "its attention step h = x + attn(ln1(x)) is right"
                                                        : "its attention step is h = " + a.text +
                                                              ", where h = x + attn(ln1(x)) belongs";
      const std::string feed_forward_text = f.changes == 0 ? "its feed-forward step h + ffn(ln2(h)) is right"
                                                           : "its feed-forward step is " + f.text +
                                                                 ", where h + ffn(ln2(h)) belongs";
      found = "the output is exactly that of a block built from the same pieces in which " +
              (a.changes == 0 ? feed_forward_text + ", and " + attention_text
                              : attention_text + ", and " + feed_forward_text);
    }
  }
  return found;
}

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
      {"the feed-forward step is missing: the block returns h = x + attn(ln1(x))", h},
      {"the second step calls attention again (h + attn(ln2(h))): the feed-forward is never used",
       add(h, attn(block->ln2->forward(h)))},
  };
  for (const auto& [cause, built] : causes) {
    if (same(got, built)) {
      ADD_FAILURE() << "the block's output is exactly that of this block: " << cause;
      return;
    }
  }
  // Then every form of the two steps the pieces allow (forward_forms below),
  // the fewest changes from the right block first.
  if (const std::string form = fitted_block_form(*block, x, call, got); !form.empty()) {
    ADD_FAILURE() << form;
    return;
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

// The norms carry the block's own eps (config.norm_eps, here 0.25 on inputs
// of rms about 0.1, so that eps moves every value): the block equals its
// pieces ln1->forward and ln2->forward, which hold it.
TEST(ex17_block, the_norms_use_the_blocks_eps) {
  COURSE_REQUIRES("each_step_is_the_residual_of_its_normalised_sublayer");
  nn::TransformerConfig c = block_config();
  c.norm_eps = 0.25;
  nn::RopeConfig rc;
  rc.head_dim = 4;
  rc.max_seq_len = 16;
  Generator gen(5);
  nn::TransformerBlock block(c, std::make_shared<nn::RotaryEmbedding>(rc, DType::Float64), &gen, DType::Float64);
  const Tensor x = mul(randn({1, 4, 16}, DType::Float64, &gen), 0.1);
  const nn::AttentionCall call = nn::AttentionCall::causal();
  const auto built = [&](const std::function<Tensor(const Tensor&, const nn::RMSNorm&)>& norm) {
    const Tensor h = add(x, block.attn->forward(norm(x, *block.ln1), call));
    return add(h, block.ffn->forward(norm(h, *block.ln2)));
  };
  const Tensor got = block.forward(x, call);
  if (same(got, built([](const Tensor& t, const nn::RMSNorm& n) { return n.forward(t); }))) return;
  for (const double eps : {1e-5, 1e-6, 0.0}) {
    if (!same(got, built([eps](const Tensor& t, const nn::RMSNorm& n) { return nn::rms_norm(t, n.weight, eps); })))
      continue;
    ADD_FAILURE() << fmt::format("with config.norm_eps = 0.25 the block's output is that of its norms with eps {} "
                                 "(the gains right): the block's eps does not reach its norms (ln1 and ln2 hold it)",
                                 eps);
    return;
  }
  ADD_FAILURE() << "with config.norm_eps = 0.25 the block's output is not x + attn(ln1(x)) then h + ffn(ln2(h)) built "
                   "from its own pieces, though it is with the default eps";
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

// The gradients of x and of every weight for d sum(out * w), w fixed.
std::vector<Tensor> block_gradients(nn::TransformerBlock& b, const Tensor& x,
                                    const std::function<Tensor(const Tensor&)>& f) {
  b.zero_grad();
  const Tensor in = clone(x.detach()).requires_grad_();
  const Tensor out = f(in);
  Generator gen(41);
  backward(out, randn(out.shape(), out.dtype(), &gen));
  std::vector<Tensor> grads = {in.grad()};
  for (const Tensor& p : b.parameters()) grads.push_back(p.grad());
  return grads;
}

bool same_gradients(const std::vector<Tensor>& a, const std::vector<Tensor>& b) {
  for (size_t i = 0; i < a.size(); ++i) {
    if (a[i].defined() != b[i].defined()) return false;
    if (a[i].defined() && !same(a[i], b[i])) return false;
  }
  return true;
}

// When the block's output is right but its gradients are those of the same
// block with one path detached (x.detach(), or a value taken out of the
// graph), which path: "" otherwise, or when the block's own gradients are
// those of the pieces' right composition.
std::string gradient_cut(nn::TransformerBlock& b, const Tensor& x, const nn::AttentionCall& call) {
  const auto built = [&](int cuts) {  // bit k - 1 of cuts: path k detached
    return [&b, &call, cuts](const Tensor& in) {
      const auto d = [cuts](const Tensor& t, int k) { return (cuts >> (k - 1)) & 1 ? t.detach() : t; };
      const Tensor h = add(d(in, 1), d(b.attn->forward(b.ln1->forward(d(in, 2)), call), 3));
      return add(d(h, 4), d(b.ffn->forward(b.ln2->forward(d(h, 5))), 6));
    };
  };
  const std::vector<Tensor> got = block_gradients(b, x, [&](const Tensor& in) { return b.forward(in, call); });
  if (!same(b.forward(x, call), built(0)(x)) || same_gradients(got, block_gradients(b, x, built(0)))) return "";
  const char* paths[] = {
      "x where it is added to attention's output (h = x + attn(ln1(x))): the residual's identity path, dx += dh, "
      "is missing",
      "x where it enters ln1: no gradient reaches x through the attention",
      "attention's output where it is added to x: attention and ln1 get no gradient",
      "h where it is added to the feed-forward's output: the second residual's identity path, dh += dout, is missing",
      "h where it enters ln2: no gradient reaches h through the feed-forward",
      "the feed-forward's output where it is added to h: the feed-forward and ln2 get no gradient"};
  // One path cut, then two, then three (the fewest that explain every gradient).
  for (int count = 1; count <= 3; ++count)
    for (int cuts = 1; cuts < 64; ++cuts) {
      if (std::popcount(static_cast<unsigned>(cuts)) != count) continue;
      if (!same_gradients(got, block_gradients(b, x, built(cuts)))) continue;
      std::string which;
      for (int k = 0; k < 6; ++k)
        if ((cuts >> k) & 1) which += std::string(which.empty() ? "" : "; and with ") + paths[k];
      return "the output is right, but the gradients of x and of every weight are exactly those of the same block "
             "with " + which + " (a detached tensor, or a value computed outside the graph)";
    }
  return "";
}

TEST(ex17_block, gradients_of_the_input_and_every_weight_pass_gradcheck) {
  COURSE_AFTER_FORWARD("output_matches_torch_float64", "each_step_is_the_residual_of_its_normalised_sublayer");
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
  if (const std::string cut = gradient_cut(block, inputs[0], call); !cut.empty()) {
    ADD_FAILURE() << cut;
    return;
  }
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
