#include "tasks/synthetic.h"
#include "io/read_file.h"

#include <cmath>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <numeric>

#include "tasks/batch.h"
#include "nn/functional.h"

namespace ropegrad::tasks {

namespace {

// A batch from whole sequences (B, L): inputs are seq[:, :-1], targets
// seq[:, 1:] where `loss_at` is true (kIgnore elsewhere), scored where `score_at`.
Batch from_sequences(const std::vector<int64_t>& seqs, int64_t b, int64_t len, const std::vector<bool>& loss_at,
                     const std::vector<bool>& score_at) {
  const int64_t t = len - 1;
  std::vector<int64_t> in(b * t), tg(b * t);
  std::vector<bool> sc(b * t);
  for (int64_t i = 0; i < b; ++i) {
    for (int64_t j = 0; j < t; ++j) {
      in[i * t + j] = seqs[i * len + j];
      tg[i * t + j] = loss_at[j] ? seqs[i * len + j + 1] : kIgnore;
      sc[i * t + j] = score_at[j];
    }
  }
  return {tensor_i64(in, {b, t}), tensor_i64(tg, {b, t}), tensor_bool(sc, {b, t})};
}

// Distinct values from [0, n), k of them, in random order.
std::vector<int64_t> sample_distinct(int64_t n, int64_t k, Generator& gen) {
  std::vector<int64_t> all(n);
  std::iota(all.begin(), all.end(), 0);
  for (int64_t i = 0; i < k; ++i) std::swap(all[i], all[gen.integer(i, n)]);
  all.resize(k);
  return all;
}

}  // namespace

MetricSum Task::metric_sum(const Tensor& logits, const Batch& batch) const {
  const Shape& bt = batch.targets.shape();
  RG_CHECK(logits.dim() == 3 && logits.size(0) == bt[0] && logits.size(1) == bt[1], "metric",
           "logits of shape {} do not match the batch {}", shape_str(logits.shape()), shape_str(bt));
  // Accuracy of the argmax prediction over the scored positions.
  const Tensor predicted = argmax(logits, -1);  // (B, T)
  const std::vector<int64_t> pred = predicted.to_vector<int64_t>();
  const std::vector<int64_t> in = batch.inputs.to_vector<int64_t>();
  const std::vector<int64_t> target = batch.targets.to_vector<int64_t>();
  const std::vector<int64_t> scored = batch.scored.to_vector<int64_t>();
  int64_t hit = 0, total = 0;
  for (size_t i = 0; i < pred.size(); ++i) {
    if (!scored[i]) continue;
    ++total;
    hit += pred[i] == target[i];
  }
  return {static_cast<double>(hit), static_cast<double>(total)};
}

double Task::metric_of(const MetricSum& sum) const { return sum.count == 0 ? 0.0 : sum.total / sum.count; }

MetricSum cross_entropy_sum(const Tensor& logits, const Tensor& targets) {
  NoGradGuard no_grad;  // cross_entropy checks the shapes
  int64_t counted = 0;
  for (int64_t t : targets.to_vector<int64_t>()) counted += t != kIgnore;
  if (counted == 0) return {};
  // The batch's mean times its tokens: the sum of the per-token losses.
  const double mean = nn::cross_entropy(logits, targets, kIgnore).item<double>();
  return {mean * static_cast<double>(counted), static_cast<double>(counted)};
}

// ---- copy -----------------------------------------------------------------------------------

CopyTask::CopyTask(int64_t vocab_size, int64_t length) : vocab_(vocab_size), length_(length) {
  RG_CHECK(vocab_size >= 2, "copy", "vocab_size must be at least 2, got {}", vocab_size);
  RG_CHECK(length >= 4 && length % 2 == 0, "copy", "length must be even and >= 4, got {}", length);
}

Batch CopyTask::batch(int64_t b, Generator& gen) const {
  const int64_t half = length_ / 2;
  std::vector<int64_t> seqs(b * length_);
  for (int64_t i = 0; i < b; ++i) {
    for (int64_t j = 0; j < half; ++j) seqs[i * length_ + j] = seqs[i * length_ + half + j] = gen.integer(0, vocab_);
  }
  // Loss on every next token (as the seed trains); the metric on the second
  // half only: targets seq[half..] are predicted at positions half-1..L-2.
  std::vector<bool> loss_at(length_ - 1, true), score_at(length_ - 1, false);
  for (int64_t j = half - 1; j < length_ - 1; ++j) score_at[j] = true;
  return from_sequences(seqs, b, length_, loss_at, score_at);
}

// ---- associative recall ---------------------------------------------------------------------------

AssociativeRecallTask::AssociativeRecallTask(int64_t num_keys, int64_t num_values, int64_t num_pairs, int64_t num_queries)
    : num_keys_(num_keys), num_values_(num_values), pairs_(num_pairs), queries_(num_queries) {
  RG_CHECK(num_pairs >= 1 && num_pairs <= num_keys, "recall", "need 1 <= num_pairs <= num_keys, got {} and {}",
           num_pairs, num_keys);
  RG_CHECK(num_values >= 2 && num_queries >= 1, "recall", "need num_values >= 2 and num_queries >= 1, got {} and {}",
           num_values, num_queries);
}

Batch AssociativeRecallTask::batch(int64_t b, Generator& gen) const {
  const int64_t len = 2 * (pairs_ + queries_);
  std::vector<int64_t> seqs(b * len);
  for (int64_t i = 0; i < b; ++i) {
    int64_t* s = seqs.data() + i * len;
    const std::vector<int64_t> keys = sample_distinct(num_keys_, pairs_, gen);
    std::vector<int64_t> values(pairs_);
    for (int64_t p = 0; p < pairs_; ++p) {
      values[p] = num_keys_ + gen.integer(0, num_values_);
      s[2 * p] = keys[p];
      s[2 * p + 1] = values[p];
    }
    for (int64_t q = 0; q < queries_; ++q) {
      const int64_t p = gen.integer(0, pairs_);
      s[2 * (pairs_ + q)] = keys[p];
      s[2 * (pairs_ + q) + 1] = values[p];
    }
  }
  // Loss and metric where the next token is a queried key's value.
  std::vector<bool> at(len - 1, false);
  for (int64_t q = 0; q < queries_; ++q) at[2 * (pairs_ + q)] = true;
  return from_sequences(seqs, b, len, at, at);
}

// ---- entailment ------------------------------------------------------------------------------------

EntailmentTask::EntailmentTask(int64_t num_concepts) : n_(num_concepts) {
  RG_CHECK(num_concepts >= 3, "entailment", "num_concepts must be at least 3, got {}", num_concepts);
}

Batch EntailmentTask::batch(int64_t b, Generator& gen) const {
  const int64_t len = 2 * (n_ - 1) + 4;  // edges, "?", a, b, answer
  std::vector<int64_t> seqs(b * len);
  for (int64_t i = 0; i < b; ++i) {
    int64_t* s = seqs.data() + i * len;
    // A random recursive tree over shuffled concept ids: node k > 0 hangs
    // under a uniformly chosen earlier node.
    const std::vector<int64_t> id = sample_distinct(n_, n_, gen);
    std::vector<int64_t> parent(n_, -1);
    for (int64_t k = 1; k < n_; ++k) parent[k] = gen.integer(0, k);
    std::vector<int64_t> order = sample_distinct(n_ - 1, n_ - 1, gen);  // edges in random order
    for (int64_t e = 0; e < n_ - 1; ++e) {
      const int64_t child = order[e] + 1;
      s[2 * e] = id[child];
      s[2 * e + 1] = id[parent[child]];
    }
    const auto is_ancestor = [&](int64_t anc, int64_t node) {
      for (int64_t p = parent[node]; p >= 0; p = parent[p]) {
        if (p == anc) return true;
      }
      return false;
    };
    const bool positive = gen.integer(0, 2) == 1;  // balanced classes
    int64_t a, c;
    if (positive) {
      a = gen.integer(1, n_);  // has at least one ancestor
      std::vector<int64_t> ancestors;
      for (int64_t p = parent[a]; p >= 0; p = parent[p]) ancestors.push_back(p);
      c = ancestors[gen.integer(0, static_cast<int64_t>(ancestors.size()))];
    } else {
      do {
        a = gen.integer(0, n_);
        c = gen.integer(0, n_);
      } while (a == c || is_ancestor(c, a));
    }
    s[len - 4] = query_token();
    s[len - 3] = id[a];
    s[len - 2] = id[c];
    s[len - 1] = positive ? yes_token() : no_token();
  }
  std::vector<bool> at(len - 1, false);
  at[len - 2] = true;  // only the answer is scored
  return from_sequences(seqs, b, len, at, at);
}

// ---- text -------------------------------------------------------------------------------------------

TextTask::TextTask(const std::string& path, int64_t context_length, double holdout) : context_(context_length) {
  const std::string bytes = io::read_file(path, "text", "a text file");
  RG_CHECK(holdout > 0 && holdout < 1, "text", "holdout must be in (0, 1), got {}", holdout);
  const auto n = static_cast<int64_t>(bytes.size());
  const auto n_eval = static_cast<int64_t>(static_cast<double>(n) * holdout);
  RG_CHECK(n - n_eval > context_length + 1 && n_eval > context_length + 1, "text",
           "'{}' has {} bytes: too short for context {} with a {:.0f}% held-out part", path, n, context_length,
           holdout * 100);
  std::vector<int64_t> ids(bytes.size());
  for (size_t i = 0; i < bytes.size(); ++i) ids[i] = static_cast<unsigned char>(bytes[i]);
  const Tensor all = tensor_i64(ids);
  train_ = kernels::contiguous(kernels::narrow(all, 0, 0, n - n_eval));
  heldout_ = kernels::contiguous(kernels::narrow(all, 0, n - n_eval, n_eval));
}

namespace {
Batch text_batch(const Tensor& tokens, int64_t b, int64_t t, Generator& gen) {
  auto [x, y] = nn::get_batch(tokens, b, t, gen);
  return {x, y, ones({b, t}, DType::Bool)};
}
}  // namespace

Batch TextTask::batch(int64_t b, Generator& gen) const { return text_batch(train_, b, context_, gen); }
Batch TextTask::eval_batch(int64_t b, Generator& gen) const { return text_batch(heldout_, b, context_, gen); }

MetricSum TextTask::metric_sum(const Tensor& logits, const Batch& batch) const {
  return cross_entropy_sum(logits, batch.targets);
}

double TextTask::metric_of(const MetricSum& sum) const {
  return sum.count == 0 ? NAN : sum.total / sum.count / std::log(2.0);  // nats per byte -> bits per byte
}

// ---- factory -------------------------------------------------------------------------------------------

std::unique_ptr<Task> make_token_text_task(const TaskOptions& o, int64_t context);  // tasks/token_text_task.cpp

std::unique_ptr<Task> make_task(const std::string& name, const TaskOptions& o) {
  const auto pick = [](int64_t value, int64_t fallback) { return value > 0 ? value : fallback; };
  // Options of the text task given to another, or two ways of giving the
  // text at once, were ignored silently: each is an error naming them.
  if (name != "text") {
    RG_CHECK(o.tokenizer_dir.empty() && o.data_path.empty(), "task",
             "--tokenizer and --data are for --task text, not --task {}", name);
  } else {
    RG_CHECK(o.tokenizer_dir.empty() || o.text_path.empty(), "text",
             "give either --text FILE (bytes) or --tokenizer DIR --data IDS.npy (BPE ids), not both");
    RG_CHECK(!o.data_path.empty() ? !o.tokenizer_dir.empty() : true, "text",
             "--data {} needs --tokenizer DIR (the tokenizer that encoded it)", o.data_path);
  }
  if (name == "copy") return std::make_unique<CopyTask>(pick(o.vocab, 16), pick(o.length, 32));
  if (name == "recall") {
    return std::make_unique<AssociativeRecallTask>(pick(o.vocab, 32), pick(o.vocab, 32), pick(o.pairs, 8),
                                                   pick(o.queries, 4));
  }
  if (name == "entailment") return std::make_unique<EntailmentTask>(pick(o.concepts, 8));
  if (name == "text" && !o.tokenizer_dir.empty()) return make_token_text_task(o, pick(o.length, 128));
  if (name == "text") {
    RG_CHECK(!o.text_path.empty(), "text", "the text task needs a file (--text PATH)");
    return std::make_unique<TextTask>(o.text_path, pick(o.length, 128));
  }
  fail("task", "unknown task '{}' (expected copy, recall, entailment or text)", name);
}

}  // namespace ropegrad::tasks
