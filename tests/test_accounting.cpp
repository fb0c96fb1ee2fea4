// Resource accounting (nn/accounting.h, `ropegrad account`), checked against what ropegrad really does:
// 1. parameters: each row equals the numel of the model's own parameters of that name, for every
//    variant, tied and untied;
// 2. FLOPs: a real training step's products, recorded by GemmTrace (tensor/kernels.h), equal the
//    forward + backward count, and the forward's split by component equals the rows', for ropegrad's
//    own shapes and every variant;
// 3. memory: the bytes autograd holds after a forward, the gradients and AdamW's state equal the
//    memory rows (the allocator's counters, tensor/storage.h);
// 4. the GPT-2 shapes against figures worked out by hand below;
// 5. the command: the table, JSON, and an error naming the flag and value for each bad input.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <map>
#include <string>
#include <vector>

#include "autograd/engine.h"
#include "autograd/ops.h"
#include "nn/accounting.h"
#include "nn/attention_path.h"
#include "nn/attention_variants.h"
#include "nn/functional.h"
#include "optim/optim.h"
#include "tensor/kernels.h"
#include "tensor/random.h"
#include "tensor/storage.h"
#include "tests/support/test_util.h"

namespace ropegrad::tasks {
int run_account(int argc, char** argv);  // cli/account_cli.cpp
}

using namespace ropegrad;
using namespace ropegrad::nn;
using namespace ropegrad::testing;
using ::testing::HasSubstr;

namespace {

struct ModelShape {
  const char* label;
  TransformerConfig config;
  int64_t batch;
};

TransformerConfig config_of(int64_t v, int64_t t, int64_t d, int64_t layers, int64_t heads, int64_t ff,
                            AttentionKind kind = AttentionKind::Standard, SigmaMode sigma = SigmaMode::Scalar,
                            bool tie = false) {
  TransformerConfig c;
  c.vocab_size = v;
  c.context_length = t;
  c.d_model = d;
  c.num_layers = layers;
  c.num_heads = heads;
  c.d_ff = ff;
  c.attention = kind;
  c.sigma = sigma;
  c.tie_embeddings = tie;
  return c;
}

// ropegrad's own shapes: the benchmarks' Base model (bench/models_bench.cpp: D 128, H 4, L 2, T 128,
// V 256, d_ff 344) and `ropegrad train`'s default model on the copy task (D 64, H 4, L 2, d_ff 0 ->
// 192, V 16, T 32 - 1), here with --tie, in each variant; batches small enough to keep the test quick.
std::vector<ModelShape> ropegrad_shapes() {
  std::vector<ModelShape> shapes;
  std::vector<std::pair<AttentionKind, SigmaMode>> variants;  // every variant, W2 with both sigmas
  for (const AttentionKind kind : attention_kinds()) {
    variants.emplace_back(kind, SigmaMode::Scalar);
    if (kind == AttentionKind::W2) variants.emplace_back(kind, SigmaMode::Vector);
  }
  for (const auto& [kind, sigma] : variants) {
    shapes.push_back({"base", config_of(256, 128, 128, 2, 4, 344, kind, sigma), 2});
    shapes.push_back({"copy", config_of(16, 31, 64, 2, 4, 0, kind, sigma, /*tie=*/true), 3});
  }
  return shapes;
}

std::string label(const ModelShape& s) {
  const TransformerConfig& c = s.config;
  return fmt::format("{} {}{}{}", s.label, attention_kind_name(c.attention),
                     c.attention == AttentionKind::W2 ? (c.sigma == SigmaMode::Scalar ? " scalar" : " vector") : "",
                     c.tie_embeddings ? " tied" : "");
}

// The row a parameter belongs to, from its CS336 name.
std::string row_of(const std::string& name) {
  if (name == "token_embeddings.weight" || name == "ln_final.weight" || name == "lm_head.weight") {
    return name.substr(0, name.find('.'));
  }
  const size_t layer_end = name.find('.', std::string("layers.").size());  // after "layers.N"
  const std::string rest = name.substr(layer_end + 1);                     // "attn.q_proj.weight", "ln1.weight"
  if (rest == "ln1.weight" || rest == "ln2.weight") return "ln1, ln2";
  if (rest == "attn.temperature") return "attn.scores";
  return rest.substr(0, rest.rfind(".weight"));
}

double flops_of(const std::vector<kernels::GemmCall>& calls) {
  double f = 0;
  for (const auto& c : calls) f += 2.0 * static_cast<double>(c.m * c.n * c.k * c.count);
  return f;
}

// Which group of rows a traced forward product belongs to, from its shape: weights multiply all
// B T tokens at once (count 1); attention's products run per sequence and head (count B H), scores
// (T, width) x (width, T), values (T, T) x (T, dh).
std::string group_of(const kernels::GemmCall& g, const TransformerConfig& c, int64_t batch, int64_t t) {
  const int64_t ff = c.d_ff > 0 ? c.d_ff : SwiGLU::default_d_ff(c.d_model);
  if (g.count == batch * c.num_heads) return g.n == t ? "attention scores" : "attention values";
  if (g.n == c.vocab_size) return "lm_head";
  if (g.n == ff || g.k == ff) return "feed-forward";
  return "attention projections";
}

struct ForcePath {
  explicit ForcePath(AttentionPath p) { set_attention_path(p); }
  ~ForcePath() { set_attention_path(AttentionPath::Auto); }
};

// ---- 1. parameters ----------------------------------------------------------------------------

TEST(AccountingParameters, EveryRowEqualsTheModelsOwnParametersForEveryVariant) {
  std::vector<ModelShape> shapes = ropegrad_shapes();
  shapes.push_back({"odd", config_of(37, 16, 24, 3, 3, 40, AttentionKind::W2, SigmaMode::Vector, true), 1});
  shapes.push_back({"odd", config_of(37, 16, 24, 1, 6, 0, AttentionKind::Triple), 1});
  for (const ModelShape& s : shapes) {
    SCOPED_TRACE(label(s));
    Generator gen(1);
    TransformerLM model(s.config, &gen);
    std::map<std::string, int64_t> real;
    for (const auto& [name, p] : model.named_parameters()) real[row_of(name)] += p.numel();
    const Accounting a = account(s.config, 1, 8);
    std::map<std::string, int64_t> counted;
    for (const AccountingRow& r : a.rows) {
      if (r.parameters > 0) counted[r.name] = r.parameters;
    }
    EXPECT_EQ(counted, real);
    EXPECT_EQ(a.parameters(), model.num_parameters());
  }
}

// ---- 2. FLOPs ---------------------------------------------------------------------------------

// A training step (forward, cross-entropy, backward, AdamW) on the materialised attention kernels,
// which compute every (query, key) pair as the accounting counts; T < context_length included.
TEST(AccountingFlops, ATrainingStepsProductsEqualForwardPlusBackwardForRopegradsShapes) {
  const ForcePath materialized(AttentionPath::Materialized);
  for (const ModelShape& s : ropegrad_shapes()) {
    for (const int64_t t : {s.config.context_length, s.config.context_length / 2}) {
      SCOPED_TRACE(label(s) + ", T " + std::to_string(t));
      Generator gen(2);
      TransformerLM model(s.config, &gen);
      AdamW opt(model.parameters());
      const Tensor ids = randint(0, s.config.vocab_size, {s.batch, t}, &gen);
      const Tensor targets = randint(0, s.config.vocab_size, {s.batch, t}, &gen);
      std::vector<kernels::GemmCall> forward, step;
      {
        const kernels::GemmTrace trace;
        const Tensor loss = cross_entropy(model.forward(ids), targets);
        forward = trace.calls();
        backward(loss);
        opt.step();
        step = trace.calls();
      }
      const Accounting a = account(s.config, s.batch, t);
      EXPECT_EQ(flops_of(forward), a.forward_flops());
      EXPECT_EQ(flops_of(step), a.forward_flops() + a.backward_flops());
      std::map<std::string, double> traced, counted;
      for (const auto& g : forward) traced[group_of(g, s.config, s.batch, t)] += flops_of({g});
      for (const AccountingRow& r : a.rows) {
        if (r.forward_flops > 0) counted[r.group] += r.forward_flops;
      }
      EXPECT_EQ(counted, traced);
    }
  }
}

TEST(AccountingFlops, BackwardRulesAreTwiceTheForwardButThriceForTripleScores) {
  const Accounting standard = account(config_of(50, 16, 32, 2, 4, 64), 2, 16);
  const Accounting triple = account(config_of(50, 16, 32, 2, 4, 64, AttentionKind::Triple), 2, 16);
  for (const Accounting* a : {&standard, &triple}) {
    for (const AccountingRow& r : a->rows) {
      SCOPED_TRACE(r.name);
      const double factor = a == &triple && r.name == "attn.scores" ? 3 : (r.forward_flops > 0 ? 2 : 0);
      EXPECT_EQ(r.backward_flops, factor * r.forward_flops);
    }
  }
  // The triple variant's two score products: twice standard's forward scores.
  const auto scores = [](const Accounting& a) { return a.group_forward_flops("attention scores"); };
  EXPECT_EQ(scores(triple), 2 * scores(standard));
}

// ---- 3. memory --------------------------------------------------------------------------------

// The allocator counts the bytes of live storages (tensor/storage.h): after the forward and the
// loss, what is held beyond the weights is exactly what autograd saved; after backward (graph freed)
// the gradients; after AdamW's first step its two moments.
TEST(AccountingMemory, SavedActivationsGradientsAndAdamStateAreTheBytesHeld) {
  const ForcePath materialized(AttentionPath::Materialized);
  for (const ModelShape& s : ropegrad_shapes()) {
    for (const DType dtype : {DType::Float32, DType::Float64}) {
      SCOPED_TRACE(label(s) + " " + std::string(dtype_name(dtype)));
      Generator gen(3);
      TransformerLM model(s.config, &gen, dtype);
      model.train();
      AdamW opt(model.parameters());
      const int64_t t = s.config.context_length;
      const Tensor ids = randint(0, s.config.vocab_size, {s.batch, t}, &gen);
      const Tensor targets = randint(0, s.config.vocab_size, {s.batch, t}, &gen);
      const Accounting a = account(s.config, s.batch, t, dtype);
      std::map<std::string, double> rows;
      for (const MemoryRow& m : a.memory) rows[m.name] = m.bytes;
      EXPECT_EQ(rows["parameters"], static_cast<double>(model.num_parameters() * element_size(dtype)));

      const int64_t start = memory_stats().current_bytes;
      {
        const Tensor loss = cross_entropy(model.forward(ids), targets);
        const int64_t loss_bytes = static_cast<int64_t>(element_size(dtype));  // the scalar itself
        EXPECT_EQ(static_cast<double>(memory_stats().current_bytes - start - loss_bytes), rows["activations"]);
        backward(loss);
      }
      EXPECT_EQ(static_cast<double>(memory_stats().current_bytes - start), rows["gradients"]);
      const int64_t before_step = memory_stats().current_bytes;
      opt.step();
      EXPECT_EQ(static_cast<double>(memory_stats().current_bytes - before_step), rows["AdamW state"]);
    }
  }
}

// ---- 4. GPT-2 small to XL ---------------------------------------------------------------------

// Worked out by hand (V = 50257, T = 1024, d_ff = 4 D, untied, SwiGLU's three matrices, RMSNorm
// gains, no biases, batch 1):
//   parameters = 2 V D (embedding, head) + L (4 D^2 + 3 D d_ff + 2 D) + D (ln_final)
//     XL: 2 * 50257 * 1600 = 160,822,400; per layer 10,240,000 + 30,720,000 + 3,200 = 40,963,200,
//         x 48 = 1,966,233,600; + 1,600: 2,127,057,600 (8.51 GB in float32).
//   forward FLOPs = L (2 T 4 D^2 [q, k, v, o] + 2 * 2 T^2 D [scores, values over all heads]
//                      + 2 T 3 D d_ff [w1, w3, w2]) + 2 T D V [head]
//     XL: 1,006,632,960,000 + 322,122,547,200 + 3,019,898,880,000 + 164,682,137,600
//         = 4,513,336,524,800 (about 4.5 TFLOPs).
struct Gpt2Figures {
  const char* size;
  int64_t parameters;
  double projections, attention, feed_forward, head;  // forward FLOPs at T = 1024
};

TEST(AccountingGpt2, ParametersAndForwardFlopsAsWorkedOutByHand) {
  const std::vector<Gpt2Figures> figures = {
      // small: 77,194,752 + 12 * (2,359,296 + 7,077,888 + 1,536) + 768
      {"small", 190460160, 12 * 2.0 * 1024 * 4 * 768 * 768, 12 * 4.0 * 1024 * 1024 * 768,
       12 * 2.0 * 1024 * 3 * 768 * 3072, 2.0 * 1024 * 768 * 50257},
      // medium: 102,926,336 + 24 * (4,194,304 + 12,582,912 + 2,048) + 1,024
      {"medium", 505629696, 24 * 2.0 * 1024 * 4 * 1024 * 1024, 24 * 4.0 * 1024 * 1024 * 1024,
       24 * 2.0 * 1024 * 3 * 1024 * 4096, 2.0 * 1024 * 1024 * 50257},
      // large: 128,657,920 + 36 * (6,553,600 + 19,660,800 + 2,560) + 1,280
      {"large", 1072469760, 36 * 2.0 * 1024 * 4 * 1280 * 1280, 36 * 4.0 * 1024 * 1024 * 1280,
       36 * 2.0 * 1024 * 3 * 1280 * 5120, 2.0 * 1024 * 1280 * 50257},
      {"xl", 2127057600, 1006632960000.0, 322122547200.0, 3019898880000.0, 164682137600.0},
  };
  double previous_ffn_share = 0, previous_head_share = 1;
  for (const Gpt2Figures& f : figures) {
    SCOPED_TRACE(f.size);
    const Accounting a = account(gpt2_config(f.size), 1, 1024);
    EXPECT_EQ(a.parameters(), f.parameters);
    EXPECT_EQ(a.group_forward_flops("attention projections"), f.projections);
    EXPECT_EQ(a.group_forward_flops("attention scores") + a.group_forward_flops("attention values"), f.attention);
    EXPECT_EQ(a.group_forward_flops("feed-forward"), f.feed_forward);
    EXPECT_EQ(a.group_forward_flops("lm_head"), f.head);
    // As the model grows the feed-forward's share grows and the head's shrinks.
    const double ffn_share = f.feed_forward / a.forward_flops(), head_share = f.head / a.forward_flops();
    EXPECT_GT(ffn_share, previous_ffn_share);
    EXPECT_LT(head_share, previous_head_share);
    previous_ffn_share = ffn_share;
    previous_head_share = head_share;
  }
  // Context 16,384: scores and values grow with T^2, the rest with T:
  // 16 * (1,006,632,960,000 + 3,019,898,880,000 + 164,682,137,600) + 256 * 322,122,547,200.
  EXPECT_EQ(account(gpt2_config("xl"), 1, 1024).forward_flops(), 4513336524800.0);
  TransformerConfig long_xl = gpt2_config("xl");
  long_xl.context_length = 16384;
  EXPECT_EQ(account(long_xl, 1, 16384).forward_flops(), 16 * 4191213977600.0 + 256 * 322122547200.0);
}

// GPT-2 XL's memory in float32 at batch B, from the saved tensors listed in nn/accounting.cpp:
// per token and layer 8 D + 2 + H T + 3 d_ff = 12,800 + 2 + 25,600 + 19,200 = 57,602 values,
// x 48 = 2,764,896, + 2 D + 1 + V = 53,458: 2,818,354 per token, x 1024 tokens x 4 bytes =
// 11,543,977,984 bytes per sequence; weights, gradients and AdamW's moments 4 x 4 x 2,127,057,600.
TEST(AccountingGpt2, Gpt2XlMemoryAsWorkedOutByHand) {
  const Accounting a = account(gpt2_config("xl"), 3, 1024);
  std::map<std::string, double> rows;
  for (const MemoryRow& m : a.memory) rows[m.name] = m.bytes;
  EXPECT_EQ(rows["parameters"], 8508230400.0);
  EXPECT_EQ(rows["gradients"], 8508230400.0);
  EXPECT_EQ(rows["AdamW state"], 17016460800.0);
  EXPECT_EQ(rows["activations"], 3 * 11543977984.0);
  EXPECT_EQ(a.memory_bytes(), 34032921600.0 + 3 * 11543977984.0);
  EXPECT_LT(a.memory_bytes(), 80e9);  // batch 3 fits 80 GB, batch 4 does not
  EXPECT_GT(account(gpt2_config("xl"), 4, 1024).memory_bytes(), 80e9);
}

// ---- errors -----------------------------------------------------------------------------------

TEST(AccountingErrors, BadShapesNameTheValue) {
  const TransformerConfig c = config_of(50, 16, 32, 2, 4, 64);
  EXPECT_RG_ERROR(account(c, 0, 8), "account", "batch must be >= 1, got 0");
  EXPECT_RG_ERROR(account(c, 1, 17), "account", "context must be in 1..16", "got 17");
  EXPECT_RG_ERROR(account(c, 1, 0), "account", "got 0");
  EXPECT_RG_ERROR(account(config_of(50, 16, 30, 2, 4, 64), 1, 8), "account", "d_model 30", "num_heads 4");
  EXPECT_RG_ERROR(account(config_of(50, 16, 32, 0, 4, 64), 1, 8), "account", "positive", "0");
  EXPECT_RG_ERROR(account(c, 1, 8, DType::Int64), "account", "float32 or float64", "int64");
  EXPECT_RG_ERROR(gpt2_config("xxl"), "gpt2_config", "'xxl'", "small, medium, large or xl");
}

// ---- 5. the command ---------------------------------------------------------------------------

std::string run_account(std::vector<std::string> args) {
  std::vector<char*> argv;
  for (auto& a : args) argv.push_back(a.data());
  ::testing::internal::CaptureStdout();
  int rc = 0;
  try {
    rc = tasks::run_account(static_cast<int>(argv.size()), argv.data());
  } catch (...) {
    ::testing::internal::GetCapturedStdout();
    throw;
  }
  EXPECT_EQ(rc, 0);
  return ::testing::internal::GetCapturedStdout();
}

TEST(AccountCli, TheXlPresetsTableShowsTheFiguresWorkedOutByHand) {
  const std::string out = run_account({"--preset", "xl"});
  EXPECT_THAT(out, HasSubstr("GPT-2 XL shape: vocab 50257, d_model 1600, 48 layers, 25 heads, d_ff 6400"));
  EXPECT_THAT(out, HasSubstr("batch B = 1, context T = 1024"));
  EXPECT_THAT(out, ::testing::ContainsRegex("\\| total +\\| +\\| +2,127,057,600 \\| +4\\.513e\\+12 \\|"));
  EXPECT_THAT(out, ::testing::ContainsRegex("\\| parameters +\\| +8\\.508 \\|"));
  EXPECT_THAT(out, HasSubstr("feed-forward 66.9%"));
}

TEST(AccountCli, JsonHoldsTheSameNumbersAndModelFlagsChangeThePreset) {
  const std::string out = run_account({"--preset", "small", "--json"});
  EXPECT_THAT(out, HasSubstr("\"parameters\": 190460160,"));
  EXPECT_THAT(out, HasSubstr("\"forward_flops\": 349630365696,"));
  EXPECT_THAT(out, HasSubstr("\"name\": \"ffn.w3\""));
  // --tie drops the head's weights (V D = 38,597,376) but not its product.
  const std::string tied = run_account({"--preset", "small", "--tie", "--json"});
  EXPECT_THAT(tied, HasSubstr("\"parameters\": 151862784,"));
  EXPECT_THAT(tied, HasSubstr("\"forward_flops\": 349630365696,"));
  // Without a preset: the flags' shape; triple attention adds r_proj.
  const std::string triple = run_account({"--d-model", "32", "--heads", "2", "--layers", "1", "--vocab", "10",
                                          "--d-ff", "64", "--context", "8", "--attention", "triple", "--json"});
  EXPECT_THAT(triple, HasSubstr("\"name\": \"attn.r_proj\", \"group\": \"attention projections\", \"copies\": 1, "
                                "\"parameters\": 1024,"));
}

TEST(AccountCli, EachBadValueIsAnErrorNamingTheFlagAndValue) {
  EXPECT_RG_ERROR(run_account({"--preset", "xxl"}), "ropegrad account", "--preset", "'xxl'");
  EXPECT_RG_ERROR(run_account({"--batch", "0"}), "ropegrad account", "--batch", "got 0");
  EXPECT_RG_ERROR(run_account({"--batch", "4x"}), "ropegrad account", "--batch", "'4x'");
  EXPECT_RG_ERROR(run_account({"--context", "-3"}), "ropegrad account", "--context", "got -3");
  EXPECT_RG_ERROR(run_account({"--layers", "1000000"}), "ropegrad account", "--layers", "1..100000");
  EXPECT_RG_ERROR(run_account({"--heads", "5"}), "ropegrad account", "--d-model 64", "--heads 5");
  EXPECT_RG_ERROR(run_account({"--dtype", "int64"}), "ropegrad account", "--dtype", "'int64'");
  EXPECT_RG_ERROR(run_account({"--attention", "linear"}), "ropegrad account", "--attention", "'linear'");
  EXPECT_RG_ERROR(run_account({"--sigma", "matrix"}), "ropegrad account", "--sigma", "'matrix'");
  EXPECT_RG_ERROR(run_account({"--depth", "3"}), "ropegrad account", "unknown argument '--depth'");
  EXPECT_RG_ERROR(run_account({"--batch"}), "ropegrad account", "--batch needs a value");
}

}  // namespace
