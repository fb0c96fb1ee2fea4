// The task generators of docs/appendix-a-formulas.md, model and tasks (tasks/synthetic.h): copy, associative
// recall, entailment and byte-level text. Each batch is decoded back into its
// sequences here and checked against the task's definition: shapes, targets
// = inputs shifted by one, exactly the right positions scored, the answer
// recomputed independently (entailment walks the listed edges), determinism
// per seed, the metrics by hand, and bad inputs.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <functional>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "autograd/ops.h"
#include "tasks/synthetic.h"
#include "tensor/random.h"
#include "tests/support/test_util.h"

using namespace ropegrad;
using namespace ropegrad::tasks;
using namespace ropegrad::testing;
using ::testing::HasSubstr;

namespace {

// A batch as plain row-major vectors.
struct Rows {
  int64_t b, t;
  std::vector<int64_t> in, tg;
  std::vector<bool> sc;
  int64_t input(int64_t i, int64_t j) const { return in[i * t + j]; }
  int64_t target(int64_t i, int64_t j) const { return tg[i * t + j]; }
  bool scored(int64_t i, int64_t j) const { return sc[i * t + j]; }
};

Rows rows_of(const Batch& batch, const Task& task, int64_t b) {
  EXPECT_EQ(batch.inputs.shape(), (Shape{b, task.seq_len()}));
  EXPECT_EQ(batch.targets.shape(), (Shape{b, task.seq_len()}));
  EXPECT_EQ(batch.scored.shape(), (Shape{b, task.seq_len()}));
  EXPECT_EQ(batch.inputs.dtype(), DType::Int64);
  EXPECT_EQ(batch.targets.dtype(), DType::Int64);
  EXPECT_EQ(batch.scored.dtype(), DType::Bool);
  Rows r{b, task.seq_len(), batch.inputs.to_vector<int64_t>(), batch.targets.to_vector<int64_t>(), {}};
  for (int64_t s : batch.scored.to_vector<int64_t>()) r.sc.push_back(s != 0);
  for (int64_t x : r.in) EXPECT_TRUE(x >= 0 && x < task.vocab_size()) << "input id " << x;
  for (int64_t y : r.tg) EXPECT_TRUE(y == kIgnore || (y >= 0 && y < task.vocab_size())) << "target id " << y;
  return r;
}

// Wherever a target is set (not the last position), it is the next input.
void expect_targets_are_shifted_inputs(const Rows& r) {
  for (int64_t i = 0; i < r.b; ++i) {
    for (int64_t j = 0; j + 1 < r.t; ++j) {
      if (r.target(i, j) != kIgnore) {
        EXPECT_EQ(r.target(i, j), r.input(i, j + 1)) << "row " << i << " pos " << j;
      }
    }
  }
}

bool same_batch(const Batch& a, const Batch& b) {
  return a.inputs.to_vector<int64_t>() == b.inputs.to_vector<int64_t>() &&
         a.targets.to_vector<int64_t>() == b.targets.to_vector<int64_t>() &&
         a.scored.to_vector<int64_t>() == b.scored.to_vector<int64_t>();
}

// Logits (B, T, V) putting 5.0 on each position's target (token 0 where ignored).
Tensor perfect_logits(const Batch& batch, int64_t vocab) {
  const std::vector<int64_t> tg = batch.targets.to_vector<int64_t>();
  std::vector<double> v(tg.size() * static_cast<size_t>(vocab), 0.0);
  for (size_t i = 0; i < tg.size(); ++i) v[i * static_cast<size_t>(vocab) + static_cast<size_t>(tg[i] == kIgnore ? 0 : tg[i])] = 5.0;
  return tensor(v, {batch.targets.size(0), batch.targets.size(1), vocab}, DType::Float64);
}

// ---- copy ---------------------------------------------------------------------------------------

TEST(CopyTask, SecondHalfRepeatsFirstAndOnlyItIsScored) {
  const CopyTask task(16, 10);  // sequences of 10 tokens, inputs of 9
  EXPECT_EQ(task.seq_len(), 9);
  EXPECT_EQ(task.vocab_size(), 16);
  Generator gen(1);
  const int64_t b = 64;
  const Rows r = rows_of(task.batch(b, gen), task, b);
  expect_targets_are_shifted_inputs(r);
  for (int64_t i = 0; i < b; ++i) {
    std::vector<int64_t> seq(r.in.begin() + i * 9, r.in.begin() + i * 9 + 9);
    seq.push_back(r.target(i, 8));  // the 10th token only appears as the last target
    for (int64_t j = 0; j < 5; ++j) EXPECT_EQ(seq[5 + j], seq[j]) << "row " << i;
    for (int64_t j = 0; j < 9; ++j) {
      EXPECT_NE(r.target(i, j), kIgnore) << "the loss sees every next token";
      // Positions 4..8 predict tokens 5..9, the second half.
      EXPECT_EQ(r.scored(i, j), j >= 4) << "row " << i << " pos " << j;
    }
  }
  // The first half is random: across 64 rows every token kind shows up.
  std::set<int64_t> seen(r.in.begin(), r.in.end());
  EXPECT_EQ(seen.size(), 16u);
}

TEST(CopyTask, PerfectPredictionsScoreOneAndAllWrongScoreZero) {
  const CopyTask task(8, 6);
  Generator gen(2);
  const Batch batch = task.batch(5, gen);
  EXPECT_DOUBLE_EQ(task.metric(perfect_logits(batch, 8), batch), 1.0);
  // Predict target + 1 everywhere: nothing right.
  const std::vector<int64_t> tg = batch.targets.to_vector<int64_t>();
  std::vector<double> v(tg.size() * 8, 0.0);
  for (size_t i = 0; i < tg.size(); ++i) v[i * 8 + static_cast<size_t>((tg[i] + 1) % 8)] = 1.0;
  EXPECT_DOUBLE_EQ(task.metric(tensor(v, {5, 5, 8}, DType::Float64), batch), 0.0);
}

// ---- associative recall ------------------------------------------------------------------------------

TEST(AssociativeRecallTask, DistinctKeysAndQueriesRecallTheirValues) {
  const int64_t keys = 10, values = 6, pairs = 4, queries = 3;
  const AssociativeRecallTask task(keys, values, pairs, queries);
  EXPECT_EQ(task.vocab_size(), 16);
  EXPECT_EQ(task.seq_len(), 2 * (pairs + queries) - 1);  // 13
  Generator gen(3);
  const int64_t b = 50;
  const Rows r = rows_of(task.batch(b, gen), task, b);
  expect_targets_are_shifted_inputs(r);
  for (int64_t i = 0; i < b; ++i) {
    std::map<int64_t, int64_t> value_of;
    for (int64_t p = 0; p < pairs; ++p) {
      const int64_t k = r.input(i, 2 * p), v = r.input(i, 2 * p + 1);
      EXPECT_TRUE(k >= 0 && k < keys) << "key " << k;
      EXPECT_TRUE(v >= keys && v < keys + values) << "value " << v;
      EXPECT_EQ(value_of.count(k), 0u) << "key " << k << " repeated in row " << i;
      value_of[k] = v;
    }
    for (int64_t q = 0; q < queries; ++q) {
      const int64_t pos = 2 * (pairs + q);
      const int64_t k = r.input(i, pos);
      ASSERT_EQ(value_of.count(k), 1u) << "queried key " << k << " was never paired";
      EXPECT_EQ(r.target(i, pos), value_of[k]);
      if (pos + 1 < r.t) {
        EXPECT_EQ(r.input(i, pos + 1), value_of[k]);
      }
    }
    for (int64_t j = 0; j < r.t; ++j) {
      const bool query = j >= 2 * pairs && (j - 2 * pairs) % 2 == 0;
      EXPECT_EQ(r.scored(i, j), query) << "pos " << j;
      EXPECT_EQ(r.target(i, j) != kIgnore, query) << "pos " << j;
    }
  }
  // All pairs used: num_pairs == num_keys gives a permutation of the keys.
  const AssociativeRecallTask full(5, 3, 5, 2);
  const Rows f = rows_of(full.batch(8, gen), full, 8);
  for (int64_t i = 0; i < 8; ++i) {
    std::set<int64_t> ks;
    for (int64_t p = 0; p < 5; ++p) ks.insert(f.input(i, 2 * p));
    EXPECT_EQ(ks, (std::set<int64_t>{0, 1, 2, 3, 4}));
  }
}

// ---- entailment -----------------------------------------------------------------------------------

TEST(EntailmentTask, AnswerMatchesAncestryRecomputedFromTheEdges) {
  const int64_t n = 6;
  const EntailmentTask task(n);
  EXPECT_EQ(task.vocab_size(), n + 3);
  EXPECT_EQ(task.seq_len(), 2 * (n - 1) + 3);  // 13
  Generator gen(4);
  const int64_t b = 2000;
  const Rows r = rows_of(task.batch(b, gen), task, b);
  int64_t yes = 0;
  for (int64_t i = 0; i < b; ++i) {
    // Edges (child, parent): every concept but the root is a child exactly once.
    std::map<int64_t, int64_t> parent;
    std::set<int64_t> nodes;
    for (int64_t e = 0; e < n - 1; ++e) {
      const int64_t child = r.input(i, 2 * e), par = r.input(i, 2 * e + 1);
      ASSERT_TRUE(child >= 0 && child < n && par >= 0 && par < n);
      ASSERT_EQ(parent.count(child), 0u) << "concept " << child << " has two parents";
      parent[child] = par;
      nodes.insert(child);
      nodes.insert(par);
    }
    ASSERT_EQ(nodes.size(), static_cast<size_t>(n));
    const int64_t q = 2 * (n - 1);
    EXPECT_EQ(r.input(i, q), task.query_token());
    const int64_t a = r.input(i, q + 1), c = r.input(i, q + 2);
    ASSERT_TRUE(a < n && c < n);
    EXPECT_NE(a, c);
    bool ancestor = false;
    int64_t steps = 0;
    for (auto it = parent.find(a); it != parent.end(); it = parent.find(it->second)) {
      ASSERT_LT(++steps, n) << "the edges contain a cycle";
      ancestor = ancestor || it->second == c;
    }
    const int64_t answer = r.target(i, q + 2);
    EXPECT_EQ(answer, ancestor ? task.yes_token() : task.no_token()) << "row " << i;
    yes += answer == task.yes_token();
    for (int64_t j = 0; j < r.t; ++j) {
      EXPECT_EQ(r.scored(i, j), j == q + 2) << "only the answer is scored";
      EXPECT_EQ(r.target(i, j) != kIgnore, j == q + 2);
    }
  }
  const double share = static_cast<double>(yes) / static_cast<double>(b);
  EXPECT_GT(share, 0.45);
  EXPECT_LT(share, 0.55);
}

TEST(EntailmentTask, HierarchiesVaryAndEdgeOrderIsShuffled) {
  const EntailmentTask task(8);
  Generator gen(5);
  const Rows r = rows_of(task.batch(200, gen), task, 200);
  std::set<std::vector<int64_t>> edge_lists;
  int64_t root_edge_first = 0;
  for (int64_t i = 0; i < 200; ++i) {
    edge_lists.insert(std::vector<int64_t>(r.in.begin() + i * r.t, r.in.begin() + i * r.t + 14));
    // If edges were listed in generation order, the first edge's parent would always be the root.
    std::set<int64_t> children;
    for (int64_t e = 0; e < 7; ++e) children.insert(r.input(i, 2 * e));
    root_edge_first += children.count(r.input(i, 1)) == 0;
  }
  EXPECT_GT(edge_lists.size(), 190u);
  EXPECT_LT(root_edge_first, 150);
}

// ---- text -------------------------------------------------------------------------------------------

class TempFile {
 public:
  explicit TempFile(const std::string& contents) {
    path_ = (std::filesystem::temp_directory_path() /
             ("ropegrad_test_tasks_" + std::to_string(::getpid()) + "_" + std::to_string(counter_++) + ".txt"))
                .string();
    std::ofstream(path_, std::ios::binary) << contents;
  }
  ~TempFile() { std::filesystem::remove(path_); }
  const std::string& path() const { return path_; }

 private:
  std::string path_;
  static inline int counter_ = 0;
};

// 1000 pseudo-random bytes, including bytes >= 128 (they must come out as 128..255, not negative).
std::string random_bytes(size_t n) {
  Generator gen(77);
  std::string s(n, '\0');
  for (char& ch : s) ch = static_cast<char>(gen.integer(0, 256));
  return s;
}

// Does `seq` occur in bytes[lo, hi)?
bool occurs_in(const std::vector<int64_t>& seq, const std::string& bytes, size_t lo, size_t hi) {
  for (size_t s = lo; s + seq.size() <= hi; ++s) {
    bool match = true;
    for (size_t k = 0; k < seq.size() && match; ++k) match = static_cast<unsigned char>(bytes[s + k]) == seq[k];
    if (match) return true;
  }
  return false;
}

TEST(TextTask, BatchesAreByteWindowsOfTheTrainingAndHeldOutParts) {
  const std::string bytes = random_bytes(1000);
  const TempFile file(bytes);
  const TextTask task(file.path(), 16, 0.1);  // train bytes [0, 900), held out [900, 1000)
  EXPECT_EQ(task.vocab_size(), 256);
  EXPECT_EQ(task.seq_len(), 16);
  EXPECT_FALSE(task.higher_is_better());
  EXPECT_EQ(task.metric_name(), "bits/byte");
  Generator gen(6);
  const int64_t b = 8;
  for (const bool heldout : {false, true}) {
    SCOPED_TRACE(heldout ? "eval_batch" : "batch");
    const Batch batch = heldout ? task.eval_batch(b, gen) : task.batch(b, gen);
    const Rows r = rows_of(batch, task, b);
    for (int64_t i = 0; i < b; ++i) {
      std::vector<int64_t> window(r.in.begin() + i * 16, r.in.begin() + i * 16 + 16);
      window.push_back(r.target(i, 15));  // 17 consecutive bytes
      for (int64_t j = 0; j < 16; ++j) {
        EXPECT_EQ(r.target(i, j), window[j + 1]);
        EXPECT_TRUE(r.scored(i, j));
      }
      EXPECT_TRUE(heldout ? occurs_in(window, bytes, 900, 1000) : occurs_in(window, bytes, 0, 900))
          << "row " << i << " is not a window of the " << (heldout ? "held-out" : "training") << " bytes";
    }
  }
}

TEST(TextTask, BitsPerByteIsCrossEntropyOverLn2) {
  const TempFile file(random_bytes(400));
  const TextTask task(file.path(), 8, 0.25);
  Generator gen(7);
  const Batch batch = task.batch(2, gen);
  // Uniform logits: exactly 8 bits per byte.
  EXPECT_NEAR(task.metric(zeros({2, 8, 256}, DType::Float64), batch), 8.0, 1e-12);
  // Random logits: mean over the 16 positions of (logsumexp - logit[target]), in bits.
  const Tensor logits = randn({2, 8, 256}, DType::Float64, &gen);
  const std::vector<double> z = logits.to_vector<double>();
  const std::vector<int64_t> tg = batch.targets.to_vector<int64_t>();
  double nats = 0;
  for (size_t p = 0; p < 16; ++p) {
    double mx = -1e300, total = 0;
    for (size_t v = 0; v < 256; ++v) mx = std::max(mx, z[p * 256 + v]);
    for (size_t v = 0; v < 256; ++v) total += std::exp(z[p * 256 + v] - mx);
    nats += mx + std::log(total) - z[p * 256 + static_cast<size_t>(tg[p])];
  }
  EXPECT_NEAR(task.metric(logits, batch), nats / 16 / std::log(2.0), 1e-10);
}

// ---- shared behaviour -------------------------------------------------------------------------------

TEST(Tasks, SameSeedSameBatchDifferentSeedDifferentBatch) {
  const TempFile file(random_bytes(2000));
  TaskOptions o;
  o.text_path = file.path();
  o.length = 16;
  for (const char* name : {"copy", "recall", "entailment", "text"}) {
    SCOPED_TRACE(name);
    const auto task = make_task(name, o);
    Generator g1(123), g2(123), g3(124);
    const Batch a = task->batch(4, g1), b = task->batch(4, g2), c = task->batch(4, g3);
    EXPECT_TRUE(same_batch(a, b));
    EXPECT_FALSE(same_batch(a, c));
    // The next batch of a generator differs from its first.
    EXPECT_FALSE(same_batch(a, task->batch(4, g1)));
  }
}

TEST(Tasks, MakeTaskDefaultsAndOptions) {
  const auto copy = make_task("copy");
  EXPECT_EQ(copy->name(), "copy");
  EXPECT_EQ(copy->vocab_size(), 16);
  EXPECT_EQ(copy->seq_len(), 31);
  const auto recall = make_task("recall");
  EXPECT_EQ(recall->vocab_size(), 64);  // 32 keys + 32 values
  EXPECT_EQ(recall->seq_len(), 23);     // 2 (8 + 4) - 1
  const auto ent = make_task("entailment");
  EXPECT_EQ(ent->vocab_size(), 11);
  EXPECT_EQ(ent->seq_len(), 17);
  for (const auto* t : {copy.get(), recall.get(), ent.get()}) EXPECT_TRUE(t->higher_is_better());

  TaskOptions o;
  o.vocab = 5, o.length = 12, o.pairs = 3, o.queries = 2, o.concepts = 4;
  EXPECT_EQ(make_task("copy", o)->vocab_size(), 5);
  EXPECT_EQ(make_task("copy", o)->seq_len(), 11);
  EXPECT_EQ(make_task("recall", o)->vocab_size(), 10);
  EXPECT_EQ(make_task("recall", o)->seq_len(), 9);
  EXPECT_EQ(make_task("entailment", o)->seq_len(), 9);
}

TEST(Tasks, AccuracyMetricByHandOnTinyLogits) {
  // B 1, T 4, V 3. argmax per position: 2, 1, 0, 2.
  const Tensor logits = tensor({0.1, 0.2, 0.9,  //
                                0.0, 3.0, -1.0,  //
                                2.0, 1.0, 1.5,   //
                                -5.0, -4.0, -3.0},
                               {1, 4, 3}, DType::Float64);
  Batch batch;
  batch.inputs = tensor_i64({0, 0, 0, 0}, {1, 4});
  batch.targets = tensor_i64({2, 0, 0, 1}, {1, 4});
  batch.scored = tensor_bool({true, true, false, true}, {1, 4});  // position 2 (a hit) is not counted
  const CopyTask task(3, 6);
  EXPECT_DOUBLE_EQ(task.metric(logits, batch), 1.0 / 3.0);  // hits at 0 only, of 0, 1, 3
  batch.scored = tensor_bool({true, true, true, true}, {1, 4});
  EXPECT_DOUBLE_EQ(task.metric(logits, batch), 2.0 / 4.0);
  batch.scored = tensor_bool({false, false, true, false}, {1, 4});
  EXPECT_DOUBLE_EQ(task.metric(logits, batch), 1.0);
}

TEST(Tasks, PerfectLogitsScoreOneForRecallAndEntailment) {
  Generator gen(8);
  const AssociativeRecallTask recall(6, 4, 3, 2);
  const Batch rb = recall.batch(6, gen);
  EXPECT_DOUBLE_EQ(recall.metric(perfect_logits(rb, recall.vocab_size()), rb), 1.0);
  const EntailmentTask ent(5);
  const Batch eb = ent.batch(6, gen);
  EXPECT_DOUBLE_EQ(ent.metric(perfect_logits(eb, ent.vocab_size()), eb), 1.0);
}

TEST(Tasks, MetricRejectsLogitsThatDoNotMatchTheBatch) {
  // Logits for 3 positions against a batch of 4: an error, not an accuracy over 3 of them.
  Batch batch;
  batch.inputs = tensor_i64({0, 0, 0, 0}, {1, 4});
  batch.targets = tensor_i64({2, 0, 0, 1}, {1, 4});
  batch.scored = tensor_bool({true, true, true, true}, {1, 4});
  const CopyTask task(3, 6);
  const std::string msg = error_of([&] { task.metric(zeros({1, 3, 3}, DType::Float64), batch); });
  EXPECT_THAT(msg, HasSubstr("metric"));
  EXPECT_THAT(msg, HasSubstr("[1, 3, 3]"));
  EXPECT_THAT(msg, HasSubstr("[1, 4]"));
}

// ---- bad inputs ---------------------------------------------------------------------------------------

TEST(TaskErrors, BadSizes) {
  std::string msg = error_of([] { CopyTask(16, 7); });
  EXPECT_THAT(msg, HasSubstr("copy"));
  EXPECT_THAT(msg, HasSubstr("even"));
  EXPECT_THAT(msg, HasSubstr("7"));
  msg = error_of([] { CopyTask(16, 2); });
  EXPECT_THAT(msg, HasSubstr("copy"));
  EXPECT_THAT(msg, HasSubstr("got 2"));
  msg = error_of([] { CopyTask(1, 8); });
  EXPECT_THAT(msg, HasSubstr("copy"));
  EXPECT_THAT(msg, HasSubstr("vocab_size"));

  msg = error_of([] { AssociativeRecallTask(4, 4, 5, 1); });  // 5 pairs need 5 distinct keys
  EXPECT_THAT(msg, HasSubstr("recall"));
  EXPECT_THAT(msg, HasSubstr("num_pairs <= num_keys"));
  EXPECT_THAT(msg, HasSubstr("5 and 4"));
  msg = error_of([] { AssociativeRecallTask(4, 4, 2, 0); });
  EXPECT_THAT(msg, HasSubstr("recall"));
  EXPECT_THAT(msg, HasSubstr("num_queries"));

  msg = error_of([] { EntailmentTask(2); });
  EXPECT_THAT(msg, HasSubstr("entailment"));
  EXPECT_THAT(msg, HasSubstr("got 2"));

  msg = error_of([] { make_task("sorting"); });
  EXPECT_THAT(msg, HasSubstr("task"));
  EXPECT_THAT(msg, HasSubstr("'sorting'"));
}

TEST(TaskErrors, BadTextFiles) {
  const TempFile tiny("hello, world\n");  // 13 bytes
  std::string msg = error_of([&] { TextTask(tiny.path(), 8); });
  EXPECT_THAT(msg, HasSubstr("text"));
  EXPECT_THAT(msg, HasSubstr(tiny.path()));
  EXPECT_THAT(msg, HasSubstr("13 bytes"));

  msg = error_of([] { TextTask("/nonexistent/ropegrad/corpus.txt", 8); });
  EXPECT_THAT(msg, HasSubstr("text"));
  EXPECT_THAT(msg, HasSubstr("/nonexistent/ropegrad/corpus.txt"));

  const TempFile big(random_bytes(500));
  msg = error_of([&] { TextTask(big.path(), 8, 0.0); });
  EXPECT_THAT(msg, HasSubstr("text"));
  EXPECT_THAT(msg, HasSubstr("holdout"));

  msg = error_of([] { make_task("text"); });  // no file given
  EXPECT_THAT(msg, HasSubstr("text"));
  EXPECT_THAT(msg, HasSubstr("--text"));
}

}  // namespace
