#include "tasks/token_text_task.h"

#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <vector>

#include "autograd/node.h"
#include "io/fnv1a.h"
#include "nn/functional.h"
#include "tensor/error.h"

namespace ropegrad::tasks {

std::string validation_path_for(const std::string& train_path) {
  const std::filesystem::path p(train_path);
  std::string name = p.filename().string();
  const size_t at = name.rfind("train");
  RG_CHECK(at != std::string::npos, "text", "--data {}: the training ids' file name must contain 'train' (its "
           "validation file is the same name with 'valid')", train_path);
  name.replace(at, 5, "valid");
  return (p.parent_path() / name).string();
}

TokenTextTask::TokenTextTask(const std::string& tokenizer_dir, const std::string& train_path, int64_t context_length)
    : tokenizer_(tok::load_tokenizer(tokenizer_dir)), context_(context_length) {
  RG_CHECK(context_length > 0, "text", "context length {} must be positive", context_length);
  const std::string valid = validation_path_for(train_path);
  train_ = std::make_unique<nn::TokenMemmap>(train_path);
  RG_CHECK(std::filesystem::exists(valid), "text", "no validation ids {} beside {}", valid, train_path);
  valid_ = std::make_unique<nn::TokenMemmap>(valid);
  // Every id must be a token of this tokenizer; checked once, by scanning the mapping.
  for (const nn::TokenMemmap* ids : {train_.get(), valid_.get()}) ids->check_ids(vocab_size(), "text");
}

Batch TokenTextTask::batch(int64_t b, Generator& gen) const {
  auto [x, y] = train_->get_batch(b, context_, gen);
  return {x, y, ones({b, context_}, DType::Bool)};
}

Batch TokenTextTask::eval_batch(int64_t b, Generator& gen) const {
  auto [x, y] = valid_->get_batch(b, context_, gen);
  return {x, y, ones({b, context_}, DType::Bool)};
}

MetricSum TokenTextTask::metric_sum(const Tensor& logits, const Batch& batch) const {
  return cross_entropy_sum(logits, batch.targets);
}

// Exp once, of the mean over all tokens: the mean of each batch's exp would be
// larger (Jensen), and would change with how the tokens are split into batches.
double TokenTextTask::metric_of(const MetricSum& sum) const {
  return sum.count == 0 ? NAN : std::exp(sum.total / sum.count);
}

std::string tokenizer_of_run(const std::string& run_dir) {
  std::ifstream in(run_dir + "/config.txt");
  for (std::string line; std::getline(in, line);)
    if (line.rfind("tokenizer=", 0) == 0) return line.substr(10);
  return "";
}

namespace {

struct Fnv1a {
  uint64_t h = kFnv1aOffset;
  void add(const char* p, size_t n) { h = fnv1a_bytes(p, n, h); }
  void add_file(const std::string& path) {
    std::error_code error;
    RG_CHECK(std::filesystem::is_regular_file(path, error), "checksum", "cannot read '{}': not a file", path);
    std::ifstream in(path, std::ios::binary);
    RG_CHECK(in.good(), "checksum", "cannot open '{}'", path);
    std::vector<char> buffer(1 << 20);
    while (in) {
      in.read(buffer.data(), static_cast<std::streamsize>(buffer.size()));
      add(buffer.data(), static_cast<size_t>(in.gcount()));
    }
    RG_CHECK(in.eof(), "checksum", "reading '{}' failed", path);
  }
  std::string text() const { return fmt::format("fnv1a64:{:016x}", h); }
};

std::string setting(const std::map<std::string, std::string>& s, const std::string& key) {
  auto it = s.find(key);
  return it == s.end() ? "" : it->second;
}

}  // namespace

std::string file_checksum(const std::string& path) {
  Fnv1a f;
  f.add_file(path);
  return f.text();
}

std::string tokenizer_checksum(const std::string& dir) {
  Fnv1a f;
  for (const char* name : {"vocab.json", "merges.txt", "special_tokens.txt"}) {
    const std::string path = dir + "/" + name;
    if (std::string(name) == "special_tokens.txt" && !std::filesystem::exists(path)) continue;
    f.add(name, std::strlen(name) + 1);  // the name and its NUL: files cannot trade bytes unnoticed
    f.add_file(path);
  }
  return f.text();
}

std::string run_inputs_text(const TaskOptions& o, int64_t tokenizer_vocab) {
  const std::string valid = validation_path_for(o.data_path);
  return fmt::format("tokenizer_checksum={}\ntokenizer_vocab={}\ndata_bytes={}\ndata_checksum={}\nvalid_bytes={}\n"
                     "valid_checksum={}\n",
                     tokenizer_checksum(o.tokenizer_dir), tokenizer_vocab, std::filesystem::file_size(o.data_path),
                     file_checksum(o.data_path), std::filesystem::file_size(valid), file_checksum(valid));
}

void check_tokenizer_of_run(const std::string& run_dir, const std::map<std::string, std::string>& recorded,
                            const std::string& tokenizer_dir, int64_t tokenizer_vocab, int64_t model_vocab) {
  const std::string want = setting(recorded, "tokenizer_checksum"), want_vocab = setting(recorded, "tokenizer_vocab");
  if (!want.empty()) {
    const std::string have = tokenizer_checksum(tokenizer_dir);
    // The same files but another size recorded: the record is what is wrong (config.txt's reader has
    // checked that it is a number).
    RG_CHECK(have != want || std::to_string(tokenizer_vocab) == want_vocab, "generate",
             "'{}/config.txt' records tokenizer_vocab={}, but the tokenizer '{}' it records (checksum {}, the same "
             "files) has {} tokens: the entry was edited or is corrupt; restore it to {}",
             run_dir, want_vocab, tokenizer_dir, have, tokenizer_vocab, tokenizer_vocab);
    RG_CHECK(have == want, "generate",
             "the tokenizer in '{}' (checksum {}, {} tokens) is not the one the run in '{}' was trained with (checksum "
             "{}, {} tokens); it would encode and decode differently. Restore that tokenizer or train a new run",
             tokenizer_dir, have, tokenizer_vocab, run_dir, want, want_vocab);
  }
  RG_CHECK(tokenizer_vocab == model_vocab, "generate",
           "the tokenizer in '{}' has {} tokens but the model of '{}' has a vocabulary of {}: it is not the run's "
           "tokenizer", tokenizer_dir, tokenizer_vocab, run_dir, model_vocab);
}

std::string check_run_inputs(const std::string& run_dir, const std::map<std::string, std::string>& before,
                             const std::map<std::string, std::string>& now, bool allow_changed_data) {
  const std::string was = setting(before, "tokenizer_checksum"), is = setting(now, "tokenizer_checksum");
  RG_CHECK(was.empty() || is.empty() || was != is || setting(before, "tokenizer_vocab") == setting(now, "tokenizer_vocab"),
           "train",
           "--resume: '{}/config.txt' records tokenizer_vocab={}, but the tokenizer '{}' it records (checksum {}, the "
           "same files) has {} tokens: the entry was edited or is corrupt; restore it to {}",
           run_dir, setting(before, "tokenizer_vocab"), setting(now, "tokenizer"), is, setting(now, "tokenizer_vocab"),
           setting(now, "tokenizer_vocab"));
  RG_CHECK(was.empty() || is.empty() || was == is,
           "train",
           "--resume: the tokenizer '{}' (checksum {}, {} tokens) is not the one the run in '{}' was trained with "
           "(checksum {}, {} tokens); restore it, or start a new --out",
           setting(now, "tokenizer"), is, setting(now, "tokenizer_vocab"), run_dir, was, setting(before, "tokenizer_vocab"));
  std::vector<std::string> changed;
  for (const auto& [file, prefix] : {std::pair<std::string, std::string>{"data", "data"}, {"validation data", "valid"}}) {
    const std::string bytes = prefix + "_bytes", sum = prefix + "_checksum";
    if (setting(before, sum).empty() || setting(now, sum).empty()) continue;  // a run from before the record
    if (setting(before, sum) == setting(now, sum) && setting(before, bytes) == setting(now, bytes)) continue;
    const std::string path = prefix == "data" ? setting(now, "data") : validation_path_for(setting(now, "data"));
    changed.push_back(fmt::format("the {} '{}' is now {} bytes, checksum {} (the run began on {} bytes, checksum {})",
                                  file, path, setting(now, bytes), setting(now, sum), setting(before, bytes),
                                  setting(before, sum)));
  }
  if (changed.empty()) return "";
  RG_CHECK(allow_changed_data, "train", "--resume: {}; pass --allow-changed-data to continue on the changed data",
           fmt::join(changed, "; "));
  return fmt::format("train: --allow-changed-data: continuing the run in '{}' on changed data: {}", run_dir,
                     fmt::join(changed, "; "));
}

}  // namespace ropegrad::tasks

namespace ropegrad::tasks {
std::unique_ptr<Task> make_token_text_task(const TaskOptions& o, int64_t context) {
  RG_CHECK(!o.data_path.empty(), "text", "--tokenizer needs --data TRAIN_IDS.npy (from `ropegrad tokenize encode`)");
  return std::make_unique<TokenTextTask>(o.tokenizer_dir, o.data_path, context);
}
}  // namespace ropegrad::tasks
