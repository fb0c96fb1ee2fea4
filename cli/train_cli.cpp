// `ropegrad train` and `ropegrad compare`: their flag table (one, compare's
// being train's without the attention variant, checkpoints and data
// parallelism) and the TrainConfig it gives.
#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <fstream>
#include <limits>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "cli/commands.h"
#include "cli/model_flags.h"
#include "nn/attention_variants.h"
#include "train/plot.h"
#include "train/trainer.h"
#if ROPEGRAD_WITH_MPI
#include "dist/mpi/data_parallel.h"
#endif

namespace ropegrad::tasks {

namespace {

// Steps, warmup, evaluation and checkpoint intervals: a billion steps is
// decades of training.
constexpr int64_t kMaxSteps = 1000000000;

// Task, model and training flags, shared by train and compare.
std::vector<flags::Flag> common_flags() {
  using namespace flags;
  return {
      choice("task", {"copy", "recall", "entailment", "text"}, "copy", ""),
      path("text", "FILE", "text task: the file to model (bytes)"),
      path("tokenizer", "DIR", "text task: a BPE tokenizer directory (ropegrad tokenize train)"),
      path("data", "FILE", "text task with --tokenizer: training ids .npy; validation: same name with 'valid'"),
      // A task's sequence is at most kMaxContext tokens: recall's 2 (pairs + queries), entailment's 2 concepts + 2.
      whole("vocab", 0, kMaxVocab, "0", "copy: token kinds (16); recall: keys = values (32)"),
      whole("length", 0, kMaxContext, "0", "copy: tokens per sequence (32); text: context (128)"),
      whole("pairs", 0, kMaxContext / 4, "0", "recall: key-value pairs (8)"),
      whole("queries", 0, kMaxContext / 4, "0", "recall: queried keys (4)"),
      whole("concepts", 0, kMaxContext / 2 - 1, "0", "entailment: concepts in the hierarchy (8)"),
      whole("d-model", 1, kMaxDModel, "64", "model width D"),
      whole("layers", 1, kMaxLayers, "2", "transformer blocks L"),
      whole("heads", 1, kMaxHeads, "4", "attention heads H"),
      whole("d-ff", 0, kMaxDff, "0", "FFN width (0: swiglu 8/3 D rounded up to 64, silu 4 D)"),
      choice("norm", {"pre", "post", "none"}, "pre", "RMSNorm before each sublayer, after each residual add, or nowhere"),
      choice("position", {"rope", "none"}, "rope", "(NoPE: no rotation in any attention variant)"),
      choice("ffn", {"swiglu", "silu"}, "swiglu", "(W2 SiLU(W1 x), two matrices)"),
      choice("sigma", {"scalar", "vector"}, "scalar", "W2's sigma"),
      on_off("tie", "tie the output head to the embedding"),
      whole("steps", 1, kMaxSteps, "300", "training steps"),
      whole("batch", 1, kMaxBatch, "32", "sequences per step"),
      real("lr", open_closed(0, 1e3), "0.003", "peak learning rate (AdamW)"),
      real("min-lr", closed(0, 1e3), "0.0003", "final learning rate of the cosine schedule"),
      whole("warmup", 0, kMaxSteps, "20", "linear warmup steps; unless given, 20 or --steps when fewer"),
      real("weight-decay", closed(0, 1e3), "0.01", "AdamW decoupled weight decay"),
      real("beta1", closed(0, 0.999999), "0.9", "AdamW first-moment decay"),
      real("beta2", closed(0, 0.999999), "0.98",
           "AdamW second-moment decay (0.98: quicker to adapt on short runs than torch's 0.999)"),
      real("clip", closed(0, 1e30), "1.0", "global gradient-norm clip (0: off)"),
      whole("eval-every", 1, kMaxSteps, "50", "steps between evaluations"),
      whole("eval-batches", 1, 1000000, "4", "batches per evaluation"),
      whole("seed", 0, std::numeric_limits<int64_t>::max(), "0", "seed of the initialisation and the data"),
      path("out", "DIR", "directory for metrics.csv, summary.json, checkpoints"),
      on_off("quiet", "no progress line"),
  };
}

// train's: compare's, the attention variant, checkpoints and data parallelism.
std::vector<flags::Flag> train_flags() {
  using namespace flags;
  std::vector<Flag> f = common_flags();
  f.insert(f.begin() + 9, choice("attention", nn::attention_variant_names(), nn::attention_variants().front().name, ""));
  f.insert(f.end(), {
      whole("checkpoint-every", 0, kMaxSteps, "0", "steps between checkpoints (0: only at the end)"),
      on_off("resume", "continue from OUT/checkpoint.safetensors"),
      on_off("allow-changed-data", "with --resume: continue although --data changed (said, not silent)"),
      on_off("allow-changed-optimizer",
             "with --resume: continue with other --beta1, --beta2, --weight-decay (said, not silent)"),
      whole("stop-after", 0, kMaxSteps, "0", "stop after this step, as if interrupted (0: run all)"),
      // Data parallelism: mpirun -np N ropegrad train ... (dist/mpi/data_parallel.h).
      whole("micro-batch", 0, kMaxBatch, "0",
            "rows per micro-batch: the step sums --batch/b micro-batches' gradients in float64 (0: one backward)"),
      real("bucket-mb", open_closed(0, 1e6), "1", "under mpirun: float32 gradient per all-reduce bucket", "MB"),
      choice("zero", {"0", "1"}, "0", "under mpirun, 1 shards AdamW's state across the ranks (ZeRO-1)"),
      real("dp-timeout", open_closed(0, 1e6), "60", "under mpirun: how long a rank waits for the others before it "
           "stops the job", "seconds"),
  });
  return f;
}

// The task's options; --text only with --task text.
TaskOptions task_options_of(const flags::Values& v) {
  TaskOptions t;
  t.text_path = v.text("text");
  RG_CHECK(t.text_path.empty() || v.text("task") == "text", "ropegrad", "--text is for --task text, not --task {}",
           v.text("task"));
  t.tokenizer_dir = v.text("tokenizer");
  t.data_path = v.text("data");
  t.vocab = v.whole("vocab");
  t.length = v.whole("length");
  t.pairs = v.whole("pairs");
  t.queries = v.whole("queries");
  t.concepts = v.whole("concepts");
  return t;
}

nn::TransformerConfig model_of(const flags::Values& v, bool with_attention) {
  nn::TransformerConfig m;
  m.d_model = v.whole("d-model");
  m.num_layers = v.whole("layers");
  m.num_heads = v.whole("heads");
  m.d_ff = v.whole("d-ff");
  m.sigma = v.text("sigma") == "vector" ? nn::SigmaMode::Vector : nn::SigmaMode::Scalar;
  m.tie_embeddings = v.on("tie");
  m.norm = nn::parse_norm_placement(v.text("norm"));
  m.position = nn::parse_position_encoding(v.text("position"));
  m.ffn = nn::parse_feed_forward(v.text("ffn"));
  if (with_attention) m.attention = nn::parse_attention_kind(v.text("attention"));
  return m;
}

// Checkpoints, resume and data parallelism: train's own.
void train_only_options(const flags::Values& v, TrainConfig& c) {
  c.checkpoint_every = v.whole("checkpoint-every");
  c.resume = v.on("resume");
  c.allow_changed_data = v.on("allow-changed-data");
  RG_CHECK(!c.allow_changed_data || c.resume, "ropegrad train", "--allow-changed-data goes with --resume");
  c.allow_changed_optimizer = v.on("allow-changed-optimizer");
  RG_CHECK(!c.allow_changed_optimizer || c.resume, "ropegrad train", "--allow-changed-optimizer goes with --resume");
  c.stop_after = v.whole("stop-after");
  c.micro_batch = v.whole("micro-batch");
#if ROPEGRAD_WITH_MPI
  c.bucket_mb = v.real("bucket-mb");
  RG_CHECK(c.bucket_mb * 1e6 >= 1, "ropegrad train", "--bucket-mb {} is {} bytes: a bucket holds at least one byte "
           "(1e-6 MB)", v.typed("bucket-mb"), c.bucket_mb * 1e6);
  c.zero = v.text("zero") == "1" ? 1 : 0;
#else
  for (const char* name : {"bucket-mb", "zero", "dp-timeout"}) {
    RG_CHECK(!v.given(name), "ropegrad train",
             "--{} is for data-parallel training over MPI, and this build has none (configure with "
             "-DROPEGRAD_MPI=ON, as scripts/dev.sh test-mpi does); --micro-batch works without it",
             name);
  }
#endif
}

TrainConfig train_config(const flags::Values& v, bool with_attention) {
  TrainConfig c;
  c.task = v.text("task");
  c.task_options = task_options_of(v);
  c.model = model_of(v, with_attention);
  if (with_attention) train_only_options(v, c);
  c.steps = v.whole("steps");
  c.batch_size = v.whole("batch");
  c.lr = v.real("lr");
  c.min_lr = v.real("min-lr");
  // A default that does not fit a short run adapts (capped at --steps, so a
  // run that was valid before keeps its schedule, and its --resume); a value
  // given must fit.
  c.warmup = v.given("warmup") ? v.whole("warmup") : std::min<int64_t>(20, c.steps);
  c.weight_decay = v.real("weight-decay");
  c.beta1 = v.real("beta1");
  c.beta2 = v.real("beta2");
  c.clip = v.real("clip");
  c.eval_every = v.whole("eval-every");
  c.eval_batches = v.whole("eval-batches");
  c.seed = static_cast<uint64_t>(v.whole("seed"));  // >= 0: the flag's range
  c.out_dir = v.text("out");
  c.quiet = v.on("quiet");
  return c;
}

std::string megabytes(int64_t bytes) { return fmt::format("{:.1f} MB", static_cast<double>(bytes) / 1e6); }

void print_result(const TrainConfig& config, const TrainResult& r) {
  if (r.already_finished_at > 0) {
    fmt::print("{}: the run already finished at step {} (--steps {}); nothing to do, its files are unchanged\n",
               config.out_dir, r.already_finished_at, config.steps);
    return;
  }
  fmt::print("{} / {}: {} parameters, eval loss {:.4f}, {} {:.4f}, {:.0f} tokens/s, peak memory {}\n", r.task,
             r.attention, r.parameters, r.final_loss, r.metric_name, r.final_metric, r.tokens_per_second,
             megabytes(r.peak_bytes));
}

void write_compare_files(const TrainConfig& base, const std::vector<TrainResult>& results, const std::string& table) {
  std::vector<Series> series;
  for (const auto& r : results) {
    Series s{r.attention, {}};
    for (const auto& st : r.steps) s.points.emplace_back(static_cast<double>(st.step), st.loss);
    series.push_back(std::move(s));
  }
  const std::string plot = base.out_dir + "/loss_curves.svg";
  write_svg_plot(plot, series, fmt::format("{} task: training loss", base.task), "step", "loss");
  std::ofstream(base.out_dir + "/results.md") << table;
  fmt::print("\nwrote {} and {}/results.md\n", plot, base.out_dir);
}

}  // namespace

const flags::Command& train_command() {
  static const flags::Command c{"ropegrad train", "",
                                "Trains one transformer LM on one task and reports loss and the task's metric.",
                                train_flags()};
  return c;
}

const flags::Command& compare_command() {
  static const flags::Command c{
      "ropegrad compare", "",
      "Trains standard, W2 and triple-product attention on one task with the same budget and prints a\n"
      "Markdown table; with --out, also the loss curves (loss_curves.svg) and each run's files.",
      common_flags()};
  return c;
}

void check_train(const std::vector<std::string>& words) {
  if (const std::optional<flags::Values> v = flags::read(train_command(), words))
    check_train_config(train_config(*v, true));
}

void check_compare(const std::vector<std::string>& words) {
  if (const std::optional<flags::Values> v = flags::read(compare_command(), words))
    check_train_config(train_config(*v, false));
}

int run_train(int argc, char** argv) {
  const std::optional<flags::Values> v = flags::read(train_command(), argc, argv);
  if (!v) return 0;  // --help
  TrainConfig config = train_config(*v, true);
#if ROPEGRAD_WITH_MPI
  // Under mpirun every rank runs this; rank 0 alone writes and prints.
  std::unique_ptr<MpiGroup> group;
  if (MpiGroup::launched_by_mpirun()) group = std::make_unique<MpiGroup>(v->real("dp-timeout"));
  config.group = group.get();
  TrainResult r;
  try {
    r = train(config);
  } catch (const std::exception& e) {
    if (group == nullptr) throw;
    // One rank's error stops them all (the others would wait for it), each saying who it is.
    fmt::print(stderr, "{}error: {}\n", group->rank() > 0 ? fmt::format("rank {}: ", group->rank()) : "", e.what());
    std::fflush(stderr);
    if (group->size() > 1) MpiGroup::abort_all(1);
    return 1;
  }
  if (group != nullptr && group->rank() > 0) return 0;
#else
  const TrainResult r = train(config);
#endif
  print_result(config, r);
  return 0;
}

int run_compare(int argc, char** argv) {
  const std::optional<flags::Values> v = flags::read(compare_command(), argc, argv);
  if (!v) return 0;  // --help
  const TrainConfig base = train_config(*v, false);
  std::vector<TrainResult> results;
  for (const nn::AttentionKind kind : nn::attention_kinds()) {
    TrainConfig c = base;
    c.model.attention = kind;
    if (!base.out_dir.empty()) c.out_dir = base.out_dir + "/" + nn::attention_kind_name(kind);
    results.push_back(train(c));
  }
  const double base_step = results[0].seconds_per_step;
  std::string table = fmt::format("| variant | parameters | final loss | {} | peak memory | tokens/s | time/step vs standard |\n",
                                  results[0].metric_name);
  table += "|---|---:|---:|---:|---:|---:|---:|\n";
  for (const auto& r : results) {
    table += fmt::format("| {} | {} | {:.4f} | {:.4f} | {} | {:.0f} | {:.2f}x |\n", r.attention, r.parameters,
                         r.final_loss, r.final_metric, megabytes(r.peak_bytes), r.tokens_per_second,
                         r.seconds_per_step / base_step);
  }
  fmt::print("\n{}", table);
  if (!base.out_dir.empty()) write_compare_files(base, results, table);
  return 0;
}

TrainOptionReader train_option_reader() {
  TrainOptionReader reader;
  reader.parse = [](const std::vector<std::string>& words) {
    const std::optional<flags::Values> v = flags::read(train_command(), words);
    RG_CHECK(v.has_value(), "ropegrad sweep", "--help is no train setting");
    return train_config(*v, true);
  };
  reader.is_flag = [](const std::string& name) -> std::optional<bool> {
    const flags::Flag* f = flags::find(train_command(), name);
    if (f == nullptr) return std::nullopt;
    return f->type == flags::Type::Switch;
  };
  reader.canonical = [](const std::string& name, const std::string& value) {
    const flags::Flag* f = flags::find(train_command(), name);
    RG_CHECK(f != nullptr, "ropegrad train", "no flag --{}", name);
    return flags::canonical(*f, value, train_command().name);
  };
  return reader;
}

}  // namespace ropegrad::tasks
