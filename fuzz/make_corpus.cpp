// Writes the fuzzers' seed corpus with the library itself:
//   make_corpus DIR  ->  DIR/{npy,npy_roundtrip,safetensors,checkpoint,config,tokenizer,encode_specials,
//                             metrics_csv,dp_csv}/<files>
// valid files of every dtype and shape kind, so the fuzzers start from inputs
// that reach deep into each reader.
#include <unistd.h>

#include <cstdio>

#include <filesystem>
#include <fstream>
#include <iterator>

#include "io/checkpoint.h"
#include "io/npy.h"
#include "optim/optim.h"
#include "io/safetensors.h"
#include "nn/transformer.h"
#include "train/trainer.h"
#include "tokenizer/tokenizer.h"

using namespace ropegrad;
namespace fs = std::filesystem;

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: make_corpus DIR\n");
    return 2;
  }
  const fs::path dir = argv[1];
  for (const char* sub : {"npy", "npy_roundtrip", "safetensors", "checkpoint", "config", "tokenizer", "encode_specials",
                          "metrics_csv", "dp_csv"})
    fs::create_directories(dir / sub);
  Generator gen(1);
  const std::vector<std::pair<std::string, Tensor>> samples = {
      {"f32_2x3", randn({2, 3}, DType::Float32, &gen)},
      {"f64_4", randn({4}, DType::Float64, &gen)},
      {"i64_2x2", randint(0, 9, {2, 2}, &gen)},
      {"bool_3", tensor_bool({true, false, true}, {3})},
      {"scalar", scalar_tensor(2.5, DType::Float64)},
      {"empty_0x3", zeros({0, 3})}};
  nn::StateDict all;
  for (const auto& [name, t] : samples) {
    nn::save_npy((dir / "npy" / (name + ".npy")).string(), t);
    nn::save_npy((dir / "npy_roundtrip" / (name + ".npy")).string(), t);
    all[name] = t;
  }
  nn::save_safetensors((dir / "safetensors" / "all.safetensors").string(), all, {{"note", "corpus"}});
  nn::save_safetensors((dir / "safetensors" / "one.safetensors").string(), {{"w", samples[0].second}});
  nn::TransformerConfig c;  // the model fuzz_checkpoint.cpp loads into
  c.vocab_size = 11, c.context_length = 8, c.d_model = 16, c.num_layers = 1, c.num_heads = 2;
  nn::TransformerLM model(c, &gen);
  nn::AdamW opt(model.parameters());
  nn::save_checkpoint((dir / "checkpoint" / "lm.safetensors").string(), model, opt.state_dict(), 3);
  tasks::TrainConfig tc;
  tc.model = c;
  const auto task = tasks::make_task("copy", {});
  std::ofstream(dir / "config" / "config.txt") << tasks::model_config_text(tc, *task);
  // A tokenizer's three files, joined by 0x00 (the layout fuzz_tokenizer.cpp splits).
  const std::string text = "The quick brown fox jumps over the lazy dog. Ünïcödé, 数字 123, emoji 🙂!<|end|> again";
  const fs::path tok_dir = dir / "tokenizer" / "files";
  tok::save_tokenizer(tok::train_bpe(text, 300, {"<|end|>"}), tok_dir.string());
  std::string joined;
  for (const char* name : {"vocab.json", "merges.txt", "special_tokens.txt"}) {
    std::ifstream in(tok_dir / name, std::ios::binary);
    joined += std::string(std::istreambuf_iterator<char>(in), {}) + (name[0] == 's' ? "" : std::string(1, '\0'));
  }
  fs::remove_all(tok_dir);
  std::ofstream(dir / "tokenizer" / "tokenizer.bin", std::ios::binary) << joined;
  // fuzz_encode_specials: bytes below 0x40 are special tokens. A run of one,
  // runs of alternating ones, and specials between words.
  std::ofstream(dir / "encode_specials" / "run.bin", std::ios::binary) << std::string(4096, '\x00');
  std::string alternating, words;
  for (int i = 0; i < 1000; ++i) alternating += static_cast<char>(i % 5);
  for (int i = 0; i < 200; ++i) words += std::string("hello ") + static_cast<char>(i % 5) + "world|>";
  std::ofstream(dir / "encode_specials" / "alternating.bin", std::ios::binary) << alternating;
  std::ofstream(dir / "encode_specials" / "words.bin", std::ios::binary) << words;
  // A run's CSV files, from a tiny --micro-batch run: metrics.csv and time.csv
  // joined by 0x00 (fuzz_metrics_csv.cpp), dp.csv and dp_buckets.csv (fuzz_dp_csv.cpp).
  // A directory of its own, removed after: never one the caller had there.
  const fs::path run = dir / ("make-corpus-run-" + std::to_string(::getpid()));
  if (fs::exists(run)) {
    std::fprintf(stderr, "make_corpus: %s exists; not replacing it\n", run.c_str());
    return 1;
  }
  tasks::TrainConfig rc;
  rc.task_options.vocab = 8, rc.task_options.length = 8;
  rc.model.d_model = 16, rc.model.num_layers = 1, rc.model.num_heads = 2, rc.model.d_ff = 32;
  rc.steps = 4, rc.warmup = 1, rc.batch_size = 4, rc.micro_batch = 2, rc.eval_every = 2, rc.eval_batches = 1;
  rc.quiet = true;
  rc.out_dir = run.string();
  tasks::train(rc, nullptr);
  const auto read = [&](const char* name) {
    std::ifstream in(run / name, std::ios::binary);
    return std::string(std::istreambuf_iterator<char>(in), {});
  };
  std::ofstream(dir / "metrics_csv" / "run.bin", std::ios::binary) << read("metrics.csv") << '\0' << read("time.csv");
  std::ofstream(dir / "dp_csv" / "run.bin", std::ios::binary) << read("dp.csv") << '\0' << read("dp_buckets.csv");
  fs::remove_all(run);
  return 0;
}
