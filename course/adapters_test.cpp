// The CS336-style adapters (course/adapters.h) against an independent PyTorch
// reference: tests/fixtures/adapters/, written by
// tests/fixtures/make_adapter_fixtures.py. Everything here is float64, so the
// tolerance is float64 rounding (rtol 1e-10, atol 1e-12) as in the nn parity tests.
#include <gmock/gmock.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>
#include <unistd.h>

#include "course/adapters.h"
#include "nn/layers.h"
#include "io/npy.h"
#include "tensor/parse_number.h"
#include "nn/transformer.h"
#include "tests/support/test_util.h"

namespace ropegrad {
namespace {

using namespace ropegrad::testing;
using namespace ropegrad::adapters;

Tensor fx(const std::string& name) { return load_fixture("adapters/" + name); }
const Tol kTol{1e-10, 1e-12};

// The fixture script's sizes (batch 2, T = 6 are in the fixtures' shapes).
constexpr int64_t D = 16, H = 4, DFF = 32, V = 23, L = 2;
constexpr double THETA = 10000.0;

// Every adapters/<case>.<name>.npy whose name is a weight name (has a '.').
Weights weights_of(const std::string& c, const std::vector<std::string>& names) {
  Weights w;
  for (const std::string& n : names) w[n] = fx(c + "." + n);
  return w;
}

std::vector<std::string> block_names(const std::string& prefix = "") {
  std::vector<std::string> names;
  for (const char* n : {"attn.q_proj.weight", "attn.k_proj.weight", "attn.v_proj.weight", "attn.output_proj.weight",
                        "ln1.weight", "ln2.weight", "ffn.w1.weight", "ffn.w2.weight", "ffn.w3.weight"})
    names.push_back(prefix + n);
  return names;
}

TEST(Adapters, RunLinear) {
  expect_close(run_linear(D, 8, fx("linear.weights"), fx("linear.in")), fx("linear.out"), kTol, "run_linear");
}

TEST(Adapters, RunEmbeddingWithARepeatedId) {
  expect_close(run_embedding(V, D, fx("embedding.weights"), fx("embedding.ids")), fx("embedding.out"), kTol,
               "run_embedding");
}

TEST(Adapters, RunRmsnorm) {
  expect_close(run_rmsnorm(D, 1e-5, fx("rmsnorm.weights"), fx("rmsnorm.in")), fx("rmsnorm.out"), kTol, "run_rmsnorm");
}

TEST(Adapters, RunSwiglu) {
  expect_close(run_swiglu(D, DFF, fx("swiglu.w1"), fx("swiglu.w2"), fx("swiglu.w3"), fx("swiglu.in")),
               fx("swiglu.out"), kTol, "run_swiglu");
}

TEST(Adapters, RunSiluAndSoftmax) {
  expect_close(run_silu(fx("silu.in")), fx("silu.out"), kTol, "run_silu");
  expect_close(run_softmax(fx("softmax.in"), -1), fx("softmax.out"), kTol, "run_softmax");
}

TEST(Adapters, RunScaledDotProductAttentionWithABoolMask) {  // true = may attend
  expect_close(run_scaled_dot_product_attention(fx("sdpa.q"), fx("sdpa.k"), fx("sdpa.v"), fx("sdpa.mask")),
               fx("sdpa.out"), kTol, "run_scaled_dot_product_attention");
}

TEST(Adapters, RunMultiheadSelfAttentionIsCausal) {
  const Tensor out = run_multihead_self_attention(D, H, fx("mhsa.q_proj"), fx("mhsa.k_proj"), fx("mhsa.v_proj"),
                                                  fx("mhsa.o_proj"), fx("mhsa.in"));
  expect_close(out, fx("mhsa.out"), kTol, "run_multihead_self_attention");
}

TEST(Adapters, RunMultiheadSelfAttentionWithRopePositionsOneByT) {  // (1, T) broadcast over a batch of 2
  const Tensor out = run_multihead_self_attention_with_rope(D, H, 16, THETA, fx("mhsa.q_proj"), fx("mhsa.k_proj"),
                                                            fx("mhsa.v_proj"), fx("mhsa.o_proj"), fx("mhsa.in"),
                                                            fx("mhsa_rope.positions"));
  expect_close(out, fx("mhsa_rope.out"), kTol, "with positions (1, T)");
  // No positions: 0..T-1, the same as (1, T) = arange(T).
  const Tensor none = run_multihead_self_attention_with_rope(D, H, 16, THETA, fx("mhsa.q_proj"), fx("mhsa.k_proj"),
                                                             fx("mhsa.v_proj"), fx("mhsa.o_proj"), fx("mhsa.in"));
  expect_close(none, fx("mhsa_rope.out"), kTol, "without positions");
}

TEST(Adapters, RunMultiheadSelfAttentionWithRopePositionsBByT) {  // a second sequence shifted by 5
  const Tensor out = run_multihead_self_attention_with_rope(D, H, 16, THETA, fx("mhsa.q_proj"), fx("mhsa.k_proj"),
                                                            fx("mhsa.v_proj"), fx("mhsa.o_proj"), fx("mhsa.in"),
                                                            fx("mhsa_rope_bt.positions"));
  expect_close(out, fx("mhsa_rope_bt.out"), kTol, "with positions (B, T)");
}

TEST(Adapters, RunRopeWithPositionsPerSequence) {
  expect_close(run_rope(D / H, THETA, 16, fx("rope.in"), fx("rope.positions")), fx("rope.out"), kTol, "run_rope");
}

TEST(Adapters, RunTransformerBlockWithTheCourseWeightNames) {
  const Weights w = weights_of("block", block_names());
  expect_close(run_transformer_block(D, H, DFF, 16, THETA, w, fx("block.in")), fx("block.out"), kTol,
               "run_transformer_block");
}

TEST(Adapters, RunTransformerLmWithTheCourseWeightNames) {
  std::vector<std::string> names = {"token_embeddings.weight", "ln_final.weight", "lm_head.weight"};
  for (int64_t i = 0; i < L; ++i)
    for (const std::string& n : block_names("layers." + std::to_string(i) + ".")) names.push_back(n);
  const Weights w = weights_of("lm", names);
  expect_close(run_transformer_lm(V, 16, D, L, H, DFF, THETA, w, fx("lm.ids")), fx("lm.out"), kTol,
               "run_transformer_lm");
}

TEST(Adapters, AMissingWeightIsNamed) {
  Weights w = weights_of("block", block_names());
  w.erase("attn.output_proj.weight");
  EXPECT_RG_ERROR(run_transformer_block(D, H, DFF, 16, THETA, w, fx("block.in")), "run_transformer_block",
                  "attn.output_proj.weight");
}

TEST(Adapters, RunCrossEntropyWithALargeLogit) {
  expect_close(run_cross_entropy(fx("cross_entropy.in"), fx("cross_entropy.targets")), fx("cross_entropy.out"), kTol,
               "run_cross_entropy");
}

TEST(Adapters, RunGetLrCosineSchedule) {
  const std::vector<int64_t> its = fx("cosine.it").to_vector<int64_t>();
  const std::vector<double> want = fx("cosine.out").to_vector<double>();
  for (size_t i = 0; i < its.size(); ++i) {
    EXPECT_NEAR(run_get_lr_cosine_schedule(its[i], 1.0, 0.1, 7, 21), want[i], 1e-15) << "it = " << its[i];
  }
}

TEST(Adapters, RunGradientClipping) {
  std::vector<Tensor> ps;
  for (int i = 0; i < 2; ++i) {
    const Tensor g = fx("clip.grad" + std::to_string(i));
    Tensor p = zeros(g.shape(), kF64).requires_grad_();
    p.set_grad(clone(g));
    ps.push_back(p);
  }
  run_gradient_clipping(ps, 1.0);
  for (int i = 0; i < 2; ++i) expect_close(ps[i].grad(), fx("clip.clipped" + std::to_string(i)), kTol, "clipped grad");
}

TEST(Adapters, AdamWMatchesTorchOverTenSteps) {
  Tensor p = clone(fx("adamw.p0")).requires_grad_();
  AdamW opt({p}, {.lr = 0.01, .betas = {0.9, 0.95}, .eps = 1e-8, .weight_decay = 0.1});
  const Tensor grads = fx("adamw.grads");
  for (int64_t s = 0; s < 10; ++s) {
    p.set_grad(contiguous(select(grads, 0, s)));
    opt.step();
  }
  expect_close(p, fx("adamw.out"), kTol, "AdamW after 10 steps");
}

// CS336's get_adamw_cls()(params, lr=..., weight_decay=..., betas=..., eps=...)
// names the settings in that order, which designated initialisers refuse; the
// chain takes any order and gives the same optimizer as the designated form.
TEST(Adapters, AdamWSettingsInCs336sOrderThroughTheChain) {
  Tensor p = clone(fx("adamw.p0")).requires_grad_();
  AdamW opt({p}, nn::AdamWOptions::chain(0.01).weight_decay(0.1).betas(0.9, 0.95).eps(1e-8));
  EXPECT_EQ(opt.lr(), 0.01);
  EXPECT_EQ(opt.weight_decay(), 0.1);
  EXPECT_EQ(opt.betas(), (std::pair<double, double>{0.9, 0.95}));
  EXPECT_EQ(opt.eps(), 1e-8);
  const Tensor grads = fx("adamw.grads");
  for (int64_t s = 0; s < 10; ++s) {
    p.set_grad(contiguous(select(grads, 0, s)));
    opt.step();
  }
  expect_close(p, fx("adamw.out"), kTol, "AdamW (chained settings) after 10 steps");
  // Settings the chain checks as the constructor does.
  Tensor q = clone(fx("adamw.p0")).requires_grad_();
  EXPECT_RG_ERROR(AdamW({q}, nn::AdamWOptions::chain(0.01).betas(1.5, 0.95)), "AdamW", "beta parameter at index 0: 1.5");
}

TEST(Adapters, RunGetBatchShiftsByOneAndCoversEveryStart) {
  const int64_t n = 40, ctx = 8, batch = 16;
  const Tensor data = arange(n);  // token i is i: x[b, j] = start + j
  Generator gen(0);
  std::set<int64_t> starts;
  for (int round = 0; round < 60; ++round) {
    const auto [x, y] = run_get_batch(data, batch, ctx, gen);
    ASSERT_EQ(x.shape(), (Shape{batch, ctx}));
    ASSERT_EQ(y.shape(), (Shape{batch, ctx}));
    const std::vector<int64_t> xv = x.to_vector<int64_t>(), yv = y.to_vector<int64_t>();
    for (int64_t b = 0; b < batch; ++b) {
      const int64_t s = xv[b * ctx];
      ASSERT_GE(s, 0);
      ASSERT_LE(s, n - ctx - 1);
      starts.insert(s);
      for (int64_t j = 0; j < ctx; ++j) {
        ASSERT_EQ(xv[b * ctx + j], s + j);
        ASSERT_EQ(yv[b * ctx + j], s + j + 1);
      }
    }
  }
  EXPECT_EQ(starts.size(), static_cast<size_t>(n - ctx)) << "every start in [0, n - T - 1] is drawn";
}

TEST(Adapters, SaveAndLoadCheckpointRestoresModelOptimizerAndIteration) {
  nn::TransformerConfig c;
  c.vocab_size = 11, c.context_length = 8, c.d_model = 16, c.num_layers = 1, c.num_heads = 2;
  Generator gen(1);
  nn::TransformerLM model(c, &gen);
  AdamW opt(model.parameters(), {.lr = 1e-2});
  const Tensor ids = randint(0, 11, {2, 8}, &gen);
  backward(sum(model.forward(ids)));
  opt.step();
  const std::string path = (std::filesystem::temp_directory_path() / "ropegrad_adapters_ckpt.safetensors").string();
  run_save_checkpoint(model, opt, 7, path);

  Generator other(2);
  nn::TransformerLM restored(c, &other);
  AdamW restored_opt(restored.parameters(), {.lr = 1e-2});
  EXPECT_EQ(run_load_checkpoint(path, restored, restored_opt), 7);
  for (const auto& [name, t] : model.state_dict()) {
    expect_close(restored.state_dict().at(name), t, Tol{0, 0}, name);
  }
  const nn::StateDict a = opt.state_dict(), b = restored_opt.state_dict();
  ASSERT_EQ(a.size(), b.size());
  for (const auto& [name, t] : a) expect_close(b.at(name), t, Tol{0, 0}, "optimizer " + name);
  std::remove(path.c_str());
}

TEST(Adapters, RunLoadCheckpointRefusesAnOptimizerWithOtherSettings) {
  nn::Linear model(3, 2);
  AdamW opt(model.parameters(), {.lr = 1e-2, .betas = {0.9, 0.95}, .weight_decay = 0.1});
  const std::string path =
      (std::filesystem::temp_directory_path() / ("ropegrad_adapters_settings_" + std::to_string(::getpid()))).string();
  run_save_checkpoint(model, opt, 3, path);
  nn::Linear restored(3, 2);
  AdamW other(restored.parameters(), {.lr = 1e-2});  // the defaults: betas (0.9, 0.999), weight_decay 0.01
  EXPECT_RG_ERROR(run_load_checkpoint(path, restored, other), "AdamW.load_state_dict",
                  "beta2 saved 0.95, this optimizer 0.999", "weight_decay saved 0.1, this optimizer 0.01");
  AdamW same(restored.parameters(), {.lr = 1e-2, .betas = {0.9, 0.95}, .weight_decay = 0.1});
  EXPECT_EQ(run_load_checkpoint(path, restored, same), 3);
  std::remove(path.c_str());
}

TEST(Adapters, RunGetBatchOverAMemoryMappedUint16FileDrawsTheTensorsBatch) {
  const std::string path =
      (std::filesystem::temp_directory_path() / ("ropegrad_adapters_ids_" + std::to_string(::getpid()) + ".npy"))
          .string();
  std::vector<int32_t> ids(50);
  for (int32_t i = 0; i < 50; ++i) ids[i] = (i * 37 + 11) % 60000;  // ids above 255 and below 65536
  nn::save_token_ids(path, ids);                                     // '<u2'
  const nn::TokenMemmap mapped(path);
  std::vector<int64_t> wide(ids.begin(), ids.end());
  const Tensor dataset = tensor_i64(wide, {50});
  Generator a(7), b(7);
  const auto [x1, y1] = run_get_batch(mapped, 4, 9, a);
  const auto [x2, y2] = run_get_batch(dataset, 4, 9, b);
  EXPECT_EQ(x1.dtype(), DType::Int64);
  EXPECT_EQ(x1.to_vector<int64_t>(), x2.to_vector<int64_t>());
  EXPECT_EQ(y1.to_vector<int64_t>(), y2.to_vector<int64_t>());
  std::remove(path.c_str());
}

// torch's optimizer.load_state_dict(saved) adopts the saved settings: so does
// run_load_checkpoint(src, model, optimizer, take_saved); keep_mine keeps the
// optimizer's own, and the moments and step come back in both cases.
TEST(Adapters, RunLoadCheckpointCanTakeTheSavedSettingsAsTorchDoes) {
  nn::Linear model(3, 2);
  AdamW opt(model.parameters(), {.lr = 1e-2, .betas = {0.9, 0.95}, .weight_decay = 0.1});
  for (const Tensor& p : model.parameters()) p.set_grad(ones_like(p));
  opt.step();
  const std::string path =
      (std::filesystem::temp_directory_path() / ("ropegrad_adapters_take_" + std::to_string(::getpid()))).string();
  run_save_checkpoint(model, opt, 5, path);
  nn::Linear restored(3, 2);
  AdamW other(restored.parameters(), {.lr = 1e-3});  // betas (0.9, 0.999), weight_decay 0.01
  EXPECT_EQ(run_load_checkpoint(path, restored, other, nn::OptimizerSettingsOnLoad::take_saved), 5);
  EXPECT_EQ(other.betas(), (std::pair<double, double>{0.9, 0.95}));
  EXPECT_EQ(other.weight_decay(), 0.1);
  EXPECT_EQ(other.lr(), 1e-2) << "the saved learning rate, as torch's param_groups";
  ASSERT_TRUE(other.state(0).has_value());
  EXPECT_EQ(other.state(0)->step, 1);
  AdamW mine(restored.parameters(), {.lr = 1e-3});
  EXPECT_EQ(run_load_checkpoint(path, restored, mine, nn::OptimizerSettingsOnLoad::keep_mine), 5);
  EXPECT_EQ(mine.betas(), (std::pair<double, double>{0.9, 0.999}));
  EXPECT_EQ(mine.weight_decay(), 0.01);
  std::remove(path.c_str());
}

// ---- the tokenizer: run_train_bpe and get_tokenizer on tests/fixtures/bpe/ ---------------
// (written by tests/fixtures/make_bpe_fixtures.py, an independent Python BPE)

const std::vector<std::string> kSpecials = {"<|endoftext|>", "<|pad|>"};

std::string read_text(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

std::string unhex(const std::string& hex) {
  std::string out;
  for (size_t i = 0; i + 1 < hex.size(); i += 2) out += static_cast<char>(parse_int64(std::string_view(hex).substr(i, 2), 16).value());
  return out;
}

TEST(Adapters, RunTrainBpeMatchesThePythonReference) {
  const auto [vocab, merges] = run_train_bpe(fixture_path("bpe/corpus.txt"), 400, kSpecials);
  std::istringstream merges_ref(read_text(fixture_path("bpe/merges_ref.txt")));
  Merges want_merges;
  for (std::string left, right; merges_ref >> left >> right;) want_merges.emplace_back(unhex(left), unhex(right));
  ASSERT_EQ(want_merges.size(), 142u);
  EXPECT_EQ(merges, want_merges);
  std::istringstream vocab_ref(read_text(fixture_path("bpe/vocab_ref.txt")));
  Vocab want_vocab;
  std::string hex;
  for (int32_t id; vocab_ref >> id >> hex;) want_vocab.emplace(id, unhex(hex));
  ASSERT_EQ(want_vocab.size(), 400u);
  EXPECT_EQ(vocab, want_vocab);
  EXPECT_EQ(vocab.at(256), "<|endoftext|>");
}

TEST(Adapters, GetTokenizerEncodesAsThePythonReference) {
  const auto [vocab, merges] = run_train_bpe(fixture_path("bpe/corpus.txt"), 400, kSpecials);
  const tok::Tokenizer tokenizer = get_tokenizer(vocab, merges, kSpecials);
  EXPECT_EQ(tokenizer.vocab_size(), 400) << "specials already in the vocabulary are not added again";
  std::istringstream ids_ref(read_text(fixture_path("bpe/corpus_ids.txt")));
  std::vector<int32_t> want;
  for (int32_t id; ids_ref >> id;) want.push_back(id);
  ASSERT_FALSE(want.empty());
  const std::string text = read_text(fixture_path("bpe/corpus.txt"));
  EXPECT_EQ(tokenizer.encode(text), want);
  EXPECT_EQ(tokenizer.decode(want), text);
}

TEST(Adapters, GetTokenizerAddsAnAbsentSpecialTokenWithTheNextId) {
  const auto [vocab, merges] = run_train_bpe(fixture_path("bpe/corpus.txt"), 300, {});
  ASSERT_EQ(vocab.size(), 300u);
  const tok::Tokenizer tokenizer = get_tokenizer(vocab, merges, {"<|endoftext|>"});
  EXPECT_EQ(tokenizer.vocab_size(), 301);
  const std::vector<int32_t> ids = tokenizer.encode("the cat<|endoftext|>the dog");
  EXPECT_EQ(std::count(ids.begin(), ids.end(), 300), 1) << "the special token is one id, 300";
  EXPECT_EQ(tokenizer.decode(ids), "the cat<|endoftext|>the dog");
  // Without it in the list the same text is plain bytes: no id 300.
  const std::vector<int32_t> plain = get_tokenizer(vocab, merges, {}).encode("the cat<|endoftext|>the dog");
  EXPECT_EQ(std::count(plain.begin(), plain.end(), 300), 0);
}

TEST(Adapters, BadTokenizerInputsAreNamed) {
  // Plain variables, not a structured binding: EXPECT_RG_ERROR's lambda captures them (clang 14 cannot).
  const std::pair<Vocab, Merges> trained = run_train_bpe(fixture_path("bpe/corpus.txt"), 300, {});
  const Vocab& vocab = trained.first;
  const Merges& merges = trained.second;
  Vocab gap = vocab;
  gap.erase(17);
  EXPECT_RG_ERROR(get_tokenizer(gap, merges, {}), "get_tokenizer", "without gaps", "id 18 comes after 16");
  Vocab negative = vocab;
  negative[-1] = "x";
  EXPECT_RG_ERROR(get_tokenizer(negative, merges, {}), "get_tokenizer", "id -1 comes first");
  Vocab twice = vocab;
  twice[299] = "a";
  EXPECT_RG_ERROR(get_tokenizer(twice, merges, {}), "get_tokenizer", "tokens 97 and 299", "'a'");
  Merges unknown = merges;
  unknown.emplace_back("zz", "q");
  EXPECT_RG_ERROR(get_tokenizer(vocab, unknown, {}), "get_tokenizer", "merge 44", "'zz' is not in the vocabulary");
  EXPECT_RG_ERROR(get_tokenizer(vocab, merges, {"<s>", ""}), "get_tokenizer", "special token 1 is empty");
  EXPECT_RG_ERROR(get_tokenizer(vocab, merges, {"<s>", "<s>"}), "get_tokenizer", "'<s>'", "twice");
  EXPECT_RG_ERROR(run_train_bpe(fixture_path("bpe/no_such_corpus.txt"), 300, {}), "run_train_bpe",
                  "no_such_corpus.txt");
  EXPECT_RG_ERROR(run_train_bpe(fixture_path("bpe/corpus.txt"), 200, {}), "train_bpe", "200");
}

// CS336's get_tokenizer(vocab, merges) leaves special_tokens out (None): no
// special token, every byte of "<|endoftext|>" plain text.
TEST(Adapters, GetTokenizerWithoutSpecialTokensAsCs336CallsIt) {
  const auto [vocab, merges] = run_train_bpe(fixture_path("bpe/corpus.txt"), 300, {});
  const tok::Tokenizer tokenizer = get_tokenizer(vocab, merges);
  EXPECT_EQ(tokenizer.vocab_size(), 300);
  const std::vector<int32_t> ids = tokenizer.encode("the cat<|endoftext|>");
  EXPECT_EQ(tokenizer.decode(ids), "the cat<|endoftext|>");
  EXPECT_EQ(std::count_if(ids.begin(), ids.end(), [](int32_t id) { return id >= 300; }), 0);
}

// CS336's test: `with open(path) as f: ids = [i for i in tokenizer.encode_iterable(f)]`,
// then ids == tokenizer.encode(whole text), with memory bounded by the chunk.
TEST(Adapters, EncodeIterableOverAFileGivesTheIdsOfTheWholeText) {
  const auto [vocab, merges] = run_train_bpe(fixture_path("bpe/corpus.txt"), 400, kSpecials);
  const tok::Tokenizer tokenizer = get_tokenizer(vocab, merges, kSpecials);
  std::ifstream f(fixture_path("bpe/corpus.txt"), std::ios::binary);
  std::vector<int32_t> ids;
  encode_iterable(tokenizer, f, [&](int32_t id) { ids.push_back(id); });
  const std::string text = read_text(fixture_path("bpe/corpus.txt"));
  EXPECT_EQ(ids, tokenizer.encode(text));
  std::istringstream again(text + "<|endoftext|>" + text);
  EXPECT_EQ(encode_iterable(tokenizer, again), tokenizer.encode(text + "<|endoftext|>" + text));
}

}  // namespace
}  // namespace ropegrad
