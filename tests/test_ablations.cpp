// CS336 assignment 1's ablations of the language model (nn/transformer.h;
// docs/17-language-model-and-decoding.md, "Ablations"): where the norms sit
// (pre, post, none), positions (RoPE or NoPE), the feed-forward (SwiGLU or SiLU).
// 1. Structure: the parameters each switch builds, counted from the formulas.
// 2. Parity with PyTorch, forward and every gradient, float64
//    (tests/fixtures/make_ablation_fixtures.py).
// 3. float64 gradchecks of whole ablated models, every attention variant without RoPE.
// 4. Properties: a post-norm block's output is normalised; without RoPE,
//    attention without a mask does not see order.
// 5. The run's files and the command line: the switches are recorded,
//    rebuilt, compared on --resume, and unknown values are errors.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <sstream>
#include <string>
#include <type_traits>
#include <vector>

#include "autograd/engine.h"
#include "autograd/gradcheck.h"
#include "autograd/ops.h"
#include "io/checkpoint.h"
#include "nn/attention_variants.h"
#include "nn/transformer.h"
#include "train/run_files.h"
#include "train/trainer.h"
#include "tensor/kernels.h"
#include "tensor/random.h"
#include "tests/support/temp_dir.h"
#include "tests/support/test_util.h"

using namespace ropegrad;
using namespace ropegrad::nn;
using namespace ropegrad::testing;
using ::testing::HasSubstr;
namespace fs = std::filesystem;

namespace {

constexpr DType F64 = DType::Float64;

struct Switches {
  NormPlacement norm = NormPlacement::Pre;
  PositionEncoding position = PositionEncoding::Rope;
  FeedForwardKind ffn = FeedForwardKind::SwiGLU;
};

std::string label(const Switches& s) {
  return fmt::format("norm {}, position {}, ffn {}", norm_placement_name(s.norm), position_encoding_name(s.position),
                     feed_forward_name(s.ffn));
}

TransformerConfig config_of(const Switches& s, int64_t vocab, int64_t d_model, int64_t heads, int64_t d_ff) {
  TransformerConfig c;
  c.vocab_size = vocab;
  c.context_length = 16;
  c.d_model = d_model;
  c.num_heads = heads;
  c.num_layers = 2;
  c.d_ff = d_ff;
  c.norm = s.norm;
  c.position = s.position;
  c.ffn = s.ffn;
  return c;
}

std::vector<Switches> every_combination() {
  std::vector<Switches> all;
  for (auto norm : {NormPlacement::Pre, NormPlacement::Post, NormPlacement::None})
    for (auto position : {PositionEncoding::Rope, PositionEncoding::None})
      for (auto ffn : {FeedForwardKind::SwiGLU, FeedForwardKind::SiLU}) all.push_back({norm, position, ffn});
  return all;
}

// ---- 1. structure --------------------------------------------------------------------------

TEST(AblationStructure, ParameterCountsFollowTheFormulas) {
  // V D + L (4 D^2 + m D d_ff + n D) + f D + V D: m = 3 (SwiGLU) or 2 (SiLU)
  // matrices, n = 2 norms per block unless none, f = 1 final norm for pre-norm.
  // D 48: SwiGLU's default d_ff is 8/3 D = 128, SiLU's 4 D = 192, and both
  // feed-forwards hold 18432 parameters: the matched pair.
  constexpr int64_t V = 11, D = 48, L = 2;
  for (const Switches& s : every_combination()) {
    SCOPED_TRACE(label(s));
    const int64_t m = s.ffn == FeedForwardKind::SwiGLU ? 3 : 2;
    const int64_t d_ff = s.ffn == FeedForwardKind::SwiGLU ? 128 : 192;
    const int64_t n = s.norm == NormPlacement::None ? 0 : 2;
    const int64_t f = s.norm == NormPlacement::Pre ? 1 : 0;
    const int64_t block = 4 * D * D + m * D * d_ff + n * D;
    Generator gen(1);
    TransformerLM model(config_of(s, V, D, 4, /*d_ff=*/0), &gen, F64);
    EXPECT_EQ(model.num_parameters(), V * D + L * block + f * D + V * D);
    EXPECT_EQ(feed_forward_parameters(s.ffn, D), m * D * d_ff);
    EXPECT_EQ(feed_forward_parameters(s.ffn, D), 18432);
    std::vector<std::pair<std::string, int64_t>> expected = {
        {"token_embeddings", V * D}, {"layers.0", block}, {"layers.1", block}};
    if (f == 1) expected.emplace_back("ln_final", D);
    expected.emplace_back("lm_head", V * D);
    expected.emplace_back("total", model.num_parameters());
    EXPECT_EQ(model.parameter_counts(), expected);
  }
}

TEST(AblationStructure, SiluAtFourDAgainstSwigluAtItsRoundedWidth) {
  // D 64: SwiGLU's 8/3 D = 170.7 rounds up to 192, 3 x 64 x 192 = 36864;
  // SiLU at 4 D = 256 has 2 x 64 x 256 = 32768, the two counts `train` prints.
  EXPECT_EQ(feed_forward_width(FeedForwardKind::SwiGLU, 64), 192);
  EXPECT_EQ(feed_forward_width(FeedForwardKind::SiLU, 64), 256);
  EXPECT_EQ(feed_forward_parameters(FeedForwardKind::SwiGLU, 64), 36864);
  EXPECT_EQ(feed_forward_parameters(FeedForwardKind::SiLU, 64), 32768);
  EXPECT_EQ(feed_forward_parameters(FeedForwardKind::SiLU, 64, 100), 2 * 64 * 100);  // an explicit d_ff wins
  const std::string line = tasks::ablation_header(config_of({NormPlacement::Pre, PositionEncoding::Rope,
                                                             FeedForwardKind::SiLU}, 11, 64, 4, 0), 12345);
  EXPECT_THAT(line, HasSubstr("ffn silu: 12345 parameters"));
  EXPECT_THAT(line, HasSubstr("silu 2 x 64 x 256 = 32768"));
  EXPECT_THAT(line, HasSubstr("(swiglu at its default width: 3 x 64 x 192 = 36864)"));
}

TEST(AblationStructure, EachSwitchBuildsItsParametersAndNoOthers) {
  Generator gen(2);
  const auto names = [&](const Switches& s) {
    std::vector<std::string> n;
    for (const auto& [name, p] : TransformerLM(config_of(s, 7, 8, 2, 16), &gen, F64).named_parameters())
      n.push_back(name);
    return n;
  };
  const auto has = [](const std::vector<std::string>& n, const std::string& name) {
    return std::find(n.begin(), n.end(), name) != n.end();
  };
  const auto post = names({NormPlacement::Post, PositionEncoding::Rope, FeedForwardKind::SwiGLU});
  EXPECT_TRUE(has(post, "layers.1.ln1.weight") && has(post, "layers.1.ln2.weight"));
  EXPECT_FALSE(has(post, "ln_final.weight")) << "post-norm has no final norm";
  for (const std::string& n : names({NormPlacement::None, PositionEncoding::Rope, FeedForwardKind::SwiGLU}))
    EXPECT_EQ(n.find("ln"), std::string::npos) << n << ": no norm anywhere";
  const auto silu = names({NormPlacement::Pre, PositionEncoding::Rope, FeedForwardKind::SiLU});
  EXPECT_TRUE(has(silu, "layers.0.ffn.w1.weight") && has(silu, "layers.0.ffn.w2.weight"));
  EXPECT_FALSE(has(silu, "layers.0.ffn.w3.weight")) << "SiLU has no gate";
  for (const AttentionKind kind : attention_kinds()) {
    TransformerConfig c = config_of({NormPlacement::Pre, PositionEncoding::None, FeedForwardKind::SwiGLU}, 7, 8, 2, 16);
    c.attention = kind;
    TransformerLM nope(c, &gen, F64);
    EXPECT_EQ(nope.rope, nullptr) << attention_kind_name(kind);
    const auto* mha = dynamic_cast<const MultiHeadAttention*>((*nope.layers)[0].attn.get());
    const auto* w2 = dynamic_cast<const W2Attention*>((*nope.layers)[0].attn.get());
    const auto* triple = dynamic_cast<const TripleAttention*>((*nope.layers)[0].attn.get());
    EXPECT_TRUE((mha && !mha->rope) || (w2 && !w2->rope) || (triple && !triple->rope))
        << attention_kind_name(kind) << ": the attention must hold no RoPE table";
  }
}

// ---- 2. parity with PyTorch ------------------------------------------------------------------

Tensor fixture(const std::string& name) { return load_fixture("ablations/" + name); }

struct ParityCase {
  std::string name;
  Switches switches;
  int64_t d_ff;
};

// The LMs of make_ablation_fixtures.py: V 23, D 16, 2 layers, H 4.
const std::vector<ParityCase> kLmCases = {
    {"lm_post", {NormPlacement::Post, PositionEncoding::Rope, FeedForwardKind::SwiGLU}, 32},
    {"lm_none", {NormPlacement::None, PositionEncoding::Rope, FeedForwardKind::SwiGLU}, 32},
    {"lm_nope", {NormPlacement::Pre, PositionEncoding::None, FeedForwardKind::SwiGLU}, 32},
    {"lm_silu", {NormPlacement::Pre, PositionEncoding::Rope, FeedForwardKind::SiLU}, 64},
};

TEST(AblationParity, LogitsAndEveryGradientMatchTorch) {
  for (const ParityCase& pc : kLmCases) {
    SCOPED_TRACE(pc.name);
    TransformerLM lm(config_of(pc.switches, 23, 16, 4, pc.d_ff), nullptr, F64);
    StateDict w;
    for (const auto& [name, p] : lm.named_parameters()) w[name] = fixture(pc.name + "." + name);
    lm.load_state_dict(w);
    const Tensor out = lm.forward(fixture(pc.name + ".ids"));
    expect_close(out, fixture(pc.name + ".out"), Tol{1e-10, 1e-12}, "logits");
    backward(out, fixture(pc.name + ".w"));  // d sum(out * w)
    for (const auto& [name, p] : lm.named_parameters())
      expect_close(p.grad(), fixture(pc.name + ".grad_" + name), Tol{1e-10, 1e-12}, "grad " + name);
  }
}

TEST(AblationParity, PostNormBlockMatchesTorchForwardAndBackward) {
  TransformerConfig c = config_of({NormPlacement::Post, PositionEncoding::Rope, FeedForwardKind::SwiGLU}, 1, 16, 4, 32);
  TransformerBlock block(c, make_rope(4, F64), nullptr, F64);
  StateDict w;
  for (const auto& [name, p] : block.named_parameters()) w[name] = fixture("block_post." + name);
  block.load_state_dict(w);
  Tensor x = fixture("block_post.in").requires_grad_();
  const Tensor out = block.forward(x, AttentionCall::causal());
  expect_close(out, fixture("block_post.out"), Tol{1e-10, 1e-12}, "out");
  backward(out, fixture("block_post.w"));
  expect_close(x.grad(), fixture("block_post.grad_in"), Tol{1e-10, 1e-12}, "grad in");
  for (const auto& [name, p] : block.named_parameters())
    expect_close(p.grad(), fixture("block_post.grad_" + name), Tol{1e-10, 1e-12}, "grad " + name);
}

// ---- 3. gradchecks -----------------------------------------------------------------------------

// The loss of a small float64 LM against every parameter, the norms' gains
// away from 1 so their gradients are not those of a constant.
void expect_lm_gradcheck(const Switches& s, AttentionKind kind) {
  SCOPED_TRACE(label(s) + ", attention " + attention_kind_name(kind));
  Generator gen(17);
  TransformerConfig c = config_of(s, 7, 8, 2, 16);
  c.context_length = 4;
  c.attention = kind;
  TransformerLM lm(c, &gen, F64);
  for (const Tensor& p : lm.parameters())
    if (p.dim() == 1) kernels::copy_into(p, add(mul(randn(p.shape(), F64, &gen), 0.25), 1.0));
  const Tensor ids = tensor_i64({1, 4, 6, 0, 2, 2, 5, 3}, {2, 4});
  const Tensor targets = tensor_i64({4, 6, 0, 1, 2, 5, 3, 3}, {2, 4});
  const GradcheckResult r =
      gradcheck([&](const std::vector<Tensor>&) { return cross_entropy(lm.forward(ids), targets); }, lm.parameters());
  EXPECT_TRUE(r.passed) << r.report;
}

TEST(AblationGradcheck, PostNormLM) {
  expect_lm_gradcheck({NormPlacement::Post, PositionEncoding::Rope, FeedForwardKind::SwiGLU}, AttentionKind::Standard);
}

TEST(AblationGradcheck, UnnormalisedLM) {
  expect_lm_gradcheck({NormPlacement::None, PositionEncoding::Rope, FeedForwardKind::SwiGLU}, AttentionKind::Standard);
}

TEST(AblationGradcheck, SiluLM) {
  expect_lm_gradcheck({NormPlacement::Pre, PositionEncoding::Rope, FeedForwardKind::SiLU}, AttentionKind::Standard);
}

TEST(AblationGradcheck, NoPELMForEveryAttentionVariant) {
  for (const AttentionKind kind : attention_kinds())
    expect_lm_gradcheck({NormPlacement::Pre, PositionEncoding::None, FeedForwardKind::SwiGLU}, kind);
}

TEST(AblationGradcheck, SiluFeedForwardModule) {
  Generator gen(5);
  SiLUFeedForward ffn(6, 10, &gen, F64);
  EXPECT_EQ(ffn.w1->weight.shape(), (Shape{10, 6}));
  EXPECT_EQ(ffn.w2->weight.shape(), (Shape{6, 10}));
  std::vector<Tensor> inputs = {randn({2, 3, 6}, F64, &gen).requires_grad_()};
  for (const Tensor& p : ffn.parameters()) inputs.push_back(p);
  const GradcheckResult r = gradcheck([&](const std::vector<Tensor>& in) { return ffn.forward(in[0]); }, inputs);
  EXPECT_TRUE(r.passed) << r.report;
  // And its forward is W2 silu(W1 x), computed here element by element.
  const Tensor x = inputs[0].detach();
  const Tensor out = ffn.forward(x);
  const auto w1 = ffn.w1->weight, w2 = ffn.w2->weight;
  for (int64_t t = 0; t < 3; ++t) {
    for (int64_t o = 0; o < 6; ++o) {
      double y = 0;
      for (int64_t h = 0; h < 10; ++h) {
        double a = 0;
        for (int64_t i = 0; i < 6; ++i) a += w1.at({h, i}) * x.at({1, t, i});
        y += w2.at({o, h}) * a / (1 + std::exp(-a));
      }
      EXPECT_NEAR(out.at({1, t, o}), y, 1e-12);
    }
  }
}

// ---- 4. properties ------------------------------------------------------------------------------

// mean(y^2) over the last dim, row by row.
std::vector<double> mean_squares(const Tensor& y) {
  const int64_t d = y.size(-1);
  const std::vector<double> v = y.to_vector<double>();
  std::vector<double> out;
  for (size_t r = 0; r < v.size() / static_cast<size_t>(d); ++r) {
    double s = 0;
    for (int64_t j = 0; j < d; ++j) s += v[r * d + j] * v[r * d + j];
    out.push_back(s / static_cast<double>(d));
  }
  return out;
}

TEST(AblationProperties, APostNormBlockEndsNormalisedAPreNormBlockDoesNot) {
  // With unit gains each output row of a post-norm block has mean square
  // ms / (ms + eps), 1 up to eps / ms (eps 1e-5); a pre-norm block's rows
  // carry the residual stream's scale (x ~ 3 N(0, 1): about 9).
  for (const NormPlacement norm : {NormPlacement::Post, NormPlacement::Pre}) {
    Generator gen(9);
    TransformerConfig c = config_of({norm, PositionEncoding::Rope, FeedForwardKind::SwiGLU}, 1, 16, 4, 32);
    TransformerBlock block(c, make_rope(4, F64), &gen, F64);
    const Tensor x = mul(randn({2, 5, 16}, F64, &gen), 3.0);
    double worst = 0;
    for (double ms : mean_squares(block.forward(x, AttentionCall::causal()))) worst = std::max(worst, std::abs(ms - 1));
    if (norm == NormPlacement::Post) EXPECT_LT(worst, 1e-3) << "post-norm: every row normalised";
    else EXPECT_GT(worst, 0.5) << "pre-norm: the output is the unnormalised stream";
  }
}

TEST(AblationProperties, WithoutRopeBidirectionalAttentionDoesNotSeeOrder) {
  // Permuting the tokens permutes the outputs of every variant without RoPE;
  // with RoPE it does not (the control, so the test can fail).
  Generator gen(11);
  const Tensor x = randn({1, 5, 8}, F64, &gen);
  const std::vector<int64_t> perm = {3, 0, 4, 1, 2};
  const auto permuted = [&](const Tensor& t) {
    std::vector<Tensor> rows;
    for (int64_t p : perm) rows.push_back(narrow(t, 1, p, 1));
    return cat(rows, 1);
  };
  TransformerConfig shape;  // D 8, H 2, scalar sigma, no dropout
  shape.d_model = 8, shape.num_heads = 2;
  std::vector<std::pair<std::string, std::shared_ptr<AttentionLayer>>> layers;
  for (const AttentionVariant& v : attention_variants()) layers.emplace_back(v.name, v.make(shape, nullptr, &gen, F64));
  for (const auto& [name, layer] : layers) {
    const Tensor a = permuted(layer->forward(x, AttentionCall::bidirectional()));
    const Tensor b = layer->forward(permuted(x), AttentionCall::bidirectional());
    EXPECT_LE(max_abs_diff(a, b), 1e-12) << name << " without RoPE";
  }
  MultiHeadAttention rope(8, 2, make_rope(4, F64), &gen, F64);
  const Tensor a = permuted(rope.forward(x, AttentionCall::bidirectional()));
  EXPECT_GT(max_abs_diff(a, rope.forward(permuted(x), AttentionCall::bidirectional())), 1e-3) << "with RoPE";
}

TEST(AblationProperties, ANoPELanguageModelIsStillCausal) {
  Generator gen(12);
  TransformerLM lm(config_of({NormPlacement::Pre, PositionEncoding::None, FeedForwardKind::SwiGLU}, 7, 8, 2, 16), &gen,
                   F64);
  const Tensor a = lm.forward(tensor_i64({1, 2, 3, 4}, {1, 4})), b = lm.forward(tensor_i64({1, 2, 3, 6}, {1, 4}));
  EXPECT_EQ(max_abs_diff(narrow(a, 1, 0, 3), narrow(b, 1, 0, 3)), 0.0);
  EXPECT_GT(max_abs_diff(narrow(a, 1, 3, 1), narrow(b, 1, 3, 1)), 0.0);
}

// ---- 4b. causal or bidirectional, by name ---------------------------------------------------------

// A call that the type allows without an AttentionCall: there must be none.
template <typename M>
concept ForwardsWithoutACall = requires(M& m, const Tensor& x) { m.forward(x); };

TEST(AttentionCallByName, NoLayerOrBlockRunsWithoutSayingCausalOrBidirectional) {
  static_assert(!std::is_default_constructible_v<AttentionCall>, "AttentionCall{} would be a silent default");
  static_assert(!ForwardsWithoutACall<MultiHeadAttention> && !ForwardsWithoutACall<W2Attention> &&
                !ForwardsWithoutACall<TripleAttention> && !ForwardsWithoutACall<AttentionLayer> &&
                !ForwardsWithoutACall<const TransformerBlock>,
                "every self-attention forward takes its AttentionCall");
  EXPECT_TRUE(AttentionCall::causal().is_causal);
  EXPECT_FALSE(AttentionCall::bidirectional().is_causal);
  // The two differ where they must: the first token sees only itself when causal.
  Generator gen(13);
  MultiHeadAttention mha(8, 2, nullptr, &gen, F64);
  const Tensor x = randn({1, 4, 8}, F64, &gen);
  const Tensor causal = mha.forward(x, AttentionCall::causal());
  const Tensor both = mha.forward(x, AttentionCall::bidirectional());
  EXPECT_LE(max_abs_diff(narrow(causal, 1, 0, 1), mha.forward(narrow(x, 1, 0, 1), AttentionCall::bidirectional())),
            1e-14);
  EXPECT_GT(max_abs_diff(narrow(causal, 1, 0, 1), narrow(both, 1, 0, 1)), 1e-6);
  EXPECT_LE(max_abs_diff(narrow(causal, 1, 3, 1), narrow(both, 1, 3, 1)), 1e-14);  // the last sees all in both
}

// ---- 5. names, run files, the command line -------------------------------------------------------

TEST(AblationNames, EveryNameRoundTripsAndAnUnknownOneIsAnError) {
  for (auto n : {NormPlacement::Pre, NormPlacement::Post, NormPlacement::None})
    EXPECT_EQ(parse_norm_placement(norm_placement_name(n)), n);
  for (auto p : {PositionEncoding::Rope, PositionEncoding::None})
    EXPECT_EQ(parse_position_encoding(position_encoding_name(p)), p);
  for (auto f : {FeedForwardKind::SwiGLU, FeedForwardKind::SiLU}) EXPECT_EQ(parse_feed_forward(feed_forward_name(f)), f);
  EXPECT_RG_ERROR(parse_norm_placement("sideways"), "norm", "'sideways'", "pre, post or none");
  EXPECT_RG_ERROR(parse_position_encoding("alibi"), "position", "'alibi'", "rope or none");
  EXPECT_RG_ERROR(parse_feed_forward("relu"), "ffn", "'relu'", "swiglu or silu");
}

const std::string kConfigBase =
    "task=copy\nvocab_size=8\ncontext_length=7\nd_model=16\nnum_layers=1\nnum_heads=2\nd_ff=0\n"
    "rope_theta=10000\nattention=standard\nsigma=scalar\ntie_embeddings=0\n";

TEST(AblationRunFiles, AConfigWithoutTheSwitchesIsPreRopeSwiglu) {
  const TransformerConfig m = tasks::parse_run_config(kConfigBase, "old/config.txt").model;
  EXPECT_EQ(m.norm, NormPlacement::Pre);
  EXPECT_EQ(m.position, PositionEncoding::Rope);
  EXPECT_EQ(m.ffn, FeedForwardKind::SwiGLU);
}

TEST(AblationRunFiles, TheConfigRecordsEverySwitch) {
  for (const Switches& s : every_combination()) {
    SCOPED_TRACE(label(s));
    tasks::TrainConfig c;
    c.model.norm = s.norm;
    c.model.position = s.position;
    c.model.ffn = s.ffn;
    const auto task = tasks::make_task("copy", {});
    const std::string text = tasks::model_config_text(c, *task);
    EXPECT_THAT(text, HasSubstr(fmt::format("\nnorm={}\nposition={}\nffn={}\n", norm_placement_name(s.norm),
                                            position_encoding_name(s.position), feed_forward_name(s.ffn))));
    const TransformerConfig m = tasks::parse_run_config(text, "run/config.txt").model;
    EXPECT_EQ(m.norm, s.norm);
    EXPECT_EQ(m.position, s.position);
    EXPECT_EQ(m.ffn, s.ffn);
  }
}

TEST(AblationRunFiles, AnUnknownValueIsAnErrorNamingFileLineAndKey) {
  const std::vector<std::pair<std::string, std::string>> bad = {
      {"norm=sideways", ":12: norm: 'sideways' is not pre, post or none"},
      {"position=alibi", ":12: position: 'alibi' is not rope or none"},
      {"ffn=relu", ":12: ffn: 'relu' is not swiglu or silu"},
      {"norm=", ":12: norm: '' is not pre, post or none"}};
  for (const auto& item : bad) {  // not a structured binding: the lambda captures it (clang 14 cannot)
    const std::string& line = item.first;
    SCOPED_TRACE(line);
    const std::string msg = error_of([&] { tasks::parse_run_config(kConfigBase + line + "\n", "run/config.txt"); });
    EXPECT_THAT(msg, HasSubstr("run/config.txt" + item.second));
  }
}

tasks::TrainConfig tiny_run(const Switches& s, const std::string& out) {
  tasks::TrainConfig c;
  c.task = "copy";
  c.task_options.vocab = 8;
  c.task_options.length = 8;
  c.model.d_model = 16;
  c.model.num_layers = 1;
  c.model.num_heads = 2;
  c.model.norm = s.norm;
  c.model.position = s.position;
  c.model.ffn = s.ffn;
  c.steps = 6;
  c.batch_size = 4;
  c.warmup = 1;
  c.eval_every = 3;
  c.eval_batches = 1;
  c.quiet = true;
  c.out_dir = out;
  return c;
}

TEST(AblationRunFiles, ACheckpointRebuildsTheSameModelAndResumeComparesTheSwitches) {
  const TempDir dir("run");
  const Switches s{NormPlacement::None, PositionEncoding::None, FeedForwardKind::SiLU};
  tasks::TrainConfig c = tiny_run(s, dir.path());
  c.stop_after = 3;
  const tasks::TrainResult r = tasks::train(c, nullptr);
  // What `generate` does: the model from config.txt, the weights from the checkpoint.
  const TransformerConfig m = tasks::read_run_config(dir.path() + "/config.txt").model;
  EXPECT_EQ(label({m.norm, m.position, m.ffn}), label(s));
  TransformerLM model(m);
  EXPECT_EQ(load_checkpoint(dir.path() + "/checkpoint.safetensors", model, nullptr), 3);
  const auto task = tasks::make_task("copy", c.task_options);
  EXPECT_NEAR(tasks::evaluate(model, *task, c.eval_batches, c.batch_size, c.seed).loss, r.final_loss, 1e-12);
  // The default model cannot take these weights: its norms and gates are missing.
  TransformerConfig d = m;
  d.norm = NormPlacement::Pre, d.position = PositionEncoding::Rope, d.ffn = FeedForwardKind::SwiGLU;
  TransformerLM defaults(d);
  EXPECT_RG_ERROR(load_checkpoint(dir.path() + "/checkpoint.safetensors", defaults, nullptr), "missing keys",
                  "ln_final.weight", "ffn.w3.weight");
  // --resume with another switch is refused, naming it; with the same ones it goes on.
  tasks::TrainConfig other = tiny_run({NormPlacement::Post, PositionEncoding::None, FeedForwardKind::SwiGLU}, dir.path());
  other.resume = true;
  const std::string msg = error_of([&] { tasks::train(other, nullptr); });
  EXPECT_THAT(msg, HasSubstr("norm post (was none)"));
  EXPECT_THAT(msg, HasSubstr("ffn swiglu (was silu)"));
  EXPECT_THAT(msg, ::testing::Not(HasSubstr("position")));
  tasks::TrainConfig same = tiny_run(s, dir.path());
  same.resume = true;
  EXPECT_EQ(tasks::train(same, nullptr).steps.size(), 3u);  // steps 4..6
}

// Runs the ropegrad program; returns the exit status and stdout + stderr.
std::pair<int, std::string> run_cli(const std::string& args) {
  const std::string command = std::string(ROPEGRAD_CLI) + " " + args + " 2>&1";
  std::FILE* pipe = ::popen(command.c_str(), "r");
  std::string out;
  char buffer[4096];
  for (size_t n; (n = std::fread(buffer, 1, sizeof buffer, pipe)) > 0;) out.append(buffer, n);
  const int status = ::pclose(pipe);
  return {WIFEXITED(status) ? WEXITSTATUS(status) : -1, out};
}

TEST(AblationCli, UnknownValuesAreErrorsNamingTheFlag) {
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"train --norm sideways", "ropegrad train: --norm must be one of pre | post | none, got 'sideways'"},
      {"train --position alibi", "ropegrad train: --position must be one of rope | none, got 'alibi'"},
      {"train --ffn relu", "ropegrad train: --ffn must be one of swiglu | silu, got 'relu'"},
      {"compare --norm Pre", "ropegrad compare: --norm must be one of pre | post | none, got 'Pre'"},
      {"train --ffn", "--ffn needs a value"}};
  for (const auto& [args, words] : cases) {
    const auto [status, out] = run_cli(args);
    EXPECT_EQ(status, 1) << args << "\n" << out;
    EXPECT_THAT(out, ::testing::StartsWith("error: ")) << args;
    EXPECT_THAT(out, HasSubstr(words)) << args;
  }
  const auto [status, help] = run_cli("train --help");
  EXPECT_EQ(status, 0);
  for (const char* flag : {"--norm pre", "--position rope", "--ffn swiglu"}) EXPECT_THAT(help, HasSubstr(flag));
}

TEST(AblationCli, TrainPrintsBothFeedForwardCountsAndGenerateRebuildsTheModel) {
  const TempDir dir("cli");
  const auto [status, out] = run_cli("train --steps 3 --warmup 1 --batch 2 --d-model 64 --heads 4 --layers 1 "
                                     "--eval-every 3 --eval-batches 1 --norm post --position none --ffn silu --out " +
                                     dir.path());
  ASSERT_EQ(status, 0) << out;
  EXPECT_THAT(out, HasSubstr("model: norm post, position none, ffn silu: "));
  EXPECT_THAT(out, HasSubstr("silu 2 x 64 x 256 = 32768 (swiglu at its default width: 3 x 64 x 192 = 36864)"));
  const auto [gen_status, tokens] =
      run_cli("generate --checkpoint " + dir.path() + " --prompt '1 2 3' --max-new-tokens 4 --temperature 0");
  EXPECT_EQ(gen_status, 0) << tokens;
  std::istringstream words(tokens);
  EXPECT_EQ(std::distance(std::istream_iterator<std::string>(words), std::istream_iterator<std::string>()), 4)
      << tokens;
  // The default model prints no such line (its output is what the book shows).
  const TempDir plain("plain");
  const auto [plain_status, plain_out] =
      run_cli("train --steps 3 --warmup 1 --batch 2 --d-model 16 --heads 2 --layers 1 --eval-every 3 "
              "--eval-batches 1 --out " + plain.path());
  ASSERT_EQ(plain_status, 0) << plain_out;
  EXPECT_THAT(plain_out, ::testing::Not(HasSubstr("model: norm")));
}

}  // namespace
