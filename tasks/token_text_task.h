// Language modelling of BPE token ids (ropegrad tokenize encode): the ids
// stay on disk and are read through a memory mapping (io/token_memmap.h).
// Metric: perplexity, exp of the mean cross-entropy over every evaluated token.
#pragma once

#include <map>
#include <memory>
#include <string>

#include "io/token_memmap.h"
#include "tasks/synthetic.h"
#include "tokenizer/tokenizer.h"

namespace ropegrad::tasks {

class TokenTextTask : public Task {
 public:
  // train_path: the training ids; the validation ids are the file of the same
  // name with "train" replaced by "valid" (fortunes_train.npy -> fortunes_valid.npy).
  TokenTextTask(const std::string& tokenizer_dir, const std::string& train_path, int64_t context_length);
  std::string name() const override { return "text"; }
  std::string metric_name() const override { return "perplexity"; }
  bool higher_is_better() const override { return false; }
  int64_t vocab_size() const override { return tokenizer_.vocab_size(); }
  int64_t seq_len() const override { return context_; }
  Batch batch(int64_t batch_size, Generator& gen) const override;  // from the training ids
  Batch eval_batch(int64_t batch_size, Generator& gen) const;      // from the validation ids
  MetricSum metric_sum(const Tensor& logits, const Batch& batch) const override;  // (nats, tokens)
  double metric_of(const MetricSum& sum) const override;                          // exp(nats / tokens)
  const tok::Tokenizer& tokenizer() const { return tokenizer_; }

 private:
  tok::Tokenizer tokenizer_;
  std::unique_ptr<nn::TokenMemmap> train_, valid_;
  int64_t context_;
};

// The validation file that goes with a training file (see TokenTextTask).
std::string validation_path_for(const std::string& train_path);

// The tokenizer directory recorded in a run's config.txt ("" when none).
std::string tokenizer_of_run(const std::string& run_dir);

// ---- what a run knows of its inputs (issue 20) -------------------------------------------------------
// A run on BPE ids records, in config.txt, its tokenizer's checksum and
// vocabulary size and each data file's size and checksum; `generate` and
// `--resume` check them again, so a tokenizer retrained in place or a data
// file rewritten under a run is named instead of silently changing its output.

// "fnv1a64:<16 hex digits>", FNV-1a over the file's bytes (not cryptographic:
// it tells a changed file from the one a run used). An Error naming the file
// when it cannot be read.
std::string file_checksum(const std::string& path);

// The checksum of a tokenizer directory: over vocab.json, merges.txt and
// special_tokens.txt (each file's name and bytes; the last may be absent).
std::string tokenizer_checksum(const std::string& dir);

// The config.txt lines that record a run's inputs: tokenizer_checksum,
// tokenizer_vocab, data_bytes, data_checksum, valid_bytes, valid_checksum.
std::string run_inputs_text(const TaskOptions& options, int64_t tokenizer_vocab);

// `generate`: an Error when the tokenizer in `tokenizer_dir` (of
// `tokenizer_vocab` tokens) is not the one the run in `run_dir` recorded, or
// its vocabulary is not the model's `model_vocab`; both checksums and both
// sizes are named.
void check_tokenizer_of_run(const std::string& run_dir, const std::map<std::string, std::string>& recorded,
                            const std::string& tokenizer_dir, int64_t tokenizer_vocab, int64_t model_vocab);

// `--resume`: compares the inputs recorded by the run (`before`) with the
// inputs now (`now`), both config.txt settings. A different tokenizer is an
// Error naming both checksums and sizes. Changed data is an Error too, unless
// allow_changed_data, when the returned notice says what changed (empty
// when nothing did).
std::string check_run_inputs(const std::string& run_dir, const std::map<std::string, std::string>& before,
                             const std::map<std::string, std::string>& now, bool allow_changed_data);

}  // namespace ropegrad::tasks
