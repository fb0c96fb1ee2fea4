// The tasks the three attention variants are compared on (docs/appendix-a-formulas.md, model and tasks).
// Every batch is drawn from a caller-provided, seeded Generator, so a run is
// reproducible and the batch of step t does not depend on earlier steps.
#pragma once

#include <memory>
#include <string>

#include "tensor/random.h"
#include "tensor/tensor.h"

namespace ropegrad::tasks {

inline constexpr int64_t kIgnore = -100;  // target ignored by the loss (cross_entropy's ignore_index)

struct Batch {
  Tensor inputs;   // (B, T) int64
  Tensor targets;  // (B, T) int64; kIgnore where the loss does not look
  Tensor scored;   // (B, T) bool: the positions the metric counts
};

// A metric over evaluation batches as a sum and a count: batches combine by
// adding both, and the metric is computed once from the totals. An average of
// ratios (accuracy, cross-entropy per token) is its total numerator over its
// total denominator, not the mean of each batch's ratio; perplexity is exp of
// the mean cross-entropy over every token, not the mean of each batch's exp.
struct MetricSum {
  double total = 0;  // hits, or nats summed over the counted tokens
  double count = 0;  // the positions counted
  MetricSum& operator+=(const MetricSum& o) {
    total += o.total, count += o.count;
    return *this;
  }
};

class Task {
 public:
  virtual ~Task() = default;
  virtual std::string name() const = 0;
  virtual std::string metric_name() const = 0;  // e.g. "accuracy", "bits/byte"
  virtual bool higher_is_better() const { return true; }
  virtual int64_t vocab_size() const = 0;
  virtual int64_t seq_len() const = 0;  // model input length T
  virtual Batch batch(int64_t batch_size, Generator& gen) const = 0;
  // One batch's share of the metric, from the model's logits (B, T, V):
  // by default the argmax accuracy over the scored positions (hits, positions).
  virtual MetricSum metric_sum(const Tensor& logits, const Batch& batch) const;
  // The metric of summed batches: by default total / count.
  virtual double metric_of(const MetricSum& sum) const;
  // The metric over one batch: metric_of(metric_sum(logits, batch)).
  double metric(const Tensor& logits, const Batch& batch) const { return metric_of(metric_sum(logits, batch)); }
};

// Random tokens, then the same tokens again; next-token accuracy on the second half.
class CopyTask : public Task {
 public:
  CopyTask(int64_t vocab_size, int64_t length);  // length: tokens per sequence (even), input = length - 1
  std::string name() const override { return "copy"; }
  std::string metric_name() const override { return "accuracy (second half)"; }
  int64_t vocab_size() const override { return vocab_; }
  int64_t seq_len() const override { return length_ - 1; }
  Batch batch(int64_t batch_size, Generator& gen) const override;

 private:
  int64_t vocab_, length_;
};

// n key-value pairs, then q of the keys again; the model must recall each
// queried key's value. Keys and values come from disjoint token ranges.
class AssociativeRecallTask : public Task {
 public:
  AssociativeRecallTask(int64_t num_keys, int64_t num_values, int64_t num_pairs, int64_t num_queries);
  std::string name() const override { return "recall"; }
  std::string metric_name() const override { return "accuracy (recalled values)"; }
  int64_t vocab_size() const override { return num_keys_ + num_values_; }
  int64_t seq_len() const override { return 2 * (pairs_ + queries_) - 1; }
  Batch batch(int64_t batch_size, Generator& gen) const override;

 private:
  int64_t num_keys_, num_values_, pairs_, queries_;
};

// A random is-a hierarchy over n concepts, its (child, parent) edges listed in
// random order, then "? a b": the answer is yes iff b is an ancestor of a.
// Classes are balanced; the metric is answer accuracy.
class EntailmentTask : public Task {
 public:
  explicit EntailmentTask(int64_t num_concepts);
  std::string name() const override { return "entailment"; }
  std::string metric_name() const override { return "accuracy (answers)"; }
  int64_t vocab_size() const override { return n_ + 3; }
  int64_t seq_len() const override { return 2 * (n_ - 1) + 3; }
  Batch batch(int64_t batch_size, Generator& gen) const override;
  int64_t query_token() const { return n_; }
  int64_t yes_token() const { return n_ + 1; }
  int64_t no_token() const { return n_ + 2; }

 private:
  int64_t n_;
};

// Byte-level language modelling of a text file; metric: bits per byte.
class TextTask : public Task {
 public:
  // The last `holdout` fraction of the bytes is kept for evaluation.
  TextTask(const std::string& path, int64_t context_length, double holdout = 0.1);
  std::string name() const override { return "text"; }
  std::string metric_name() const override { return "bits/byte"; }
  bool higher_is_better() const override { return false; }
  int64_t vocab_size() const override { return 256; }
  int64_t seq_len() const override { return context_; }
  Batch batch(int64_t batch_size, Generator& gen) const override;  // from the training bytes
  Batch eval_batch(int64_t batch_size, Generator& gen) const;      // from the held-out bytes
  MetricSum metric_sum(const Tensor& logits, const Batch& batch) const override;  // (nats, tokens)
  double metric_of(const MetricSum& sum) const override;                          // nats per byte / ln 2

 private:
  Tensor train_, heldout_;
  int64_t context_;
};

// Sizes of a task; 0 picks the task's default.
struct TaskOptions {
  int64_t vocab = 0;     // copy: token kinds (default 16); recall: keys = values (default 32)
  int64_t length = 0;    // copy: tokens per sequence (default 32); text: context (default 128)
  int64_t pairs = 0;     // recall: key-value pairs (default 8)
  int64_t queries = 0;   // recall: queried keys (default 4)
  int64_t concepts = 0;  // entailment: nodes of the hierarchy (default 8)
  std::string text_path; // text: the file
  std::string tokenizer_dir;  // text with a BPE tokenizer (tasks/token_text_task.h): its directory
  std::string data_path;      // ... and the training ids (.npy)
};

// The cross-entropy summed over the targets that are not kIgnore, and their count.
MetricSum cross_entropy_sum(const Tensor& logits, const Tensor& targets);

// Builds a task by name: copy, recall, entailment or text.
std::unique_ptr<Task> make_task(const std::string& name, const TaskOptions& options = {});

}  // namespace ropegrad::tasks
