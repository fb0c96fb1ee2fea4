// Language modelling of BPE token ids (ropegrad tokenize encode): the ids
// stay on disk and are read through a memory mapping (nn/token_memmap.h).
// Metric: perplexity, exp of the mean cross-entropy per token.
#pragma once

#include <memory>
#include <string>

#include "nn/token_memmap.h"
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
  double metric(const Tensor& logits, const Batch& batch) const override;
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

}  // namespace ropegrad::tasks
