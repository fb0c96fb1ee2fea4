#include "train/trainer.h"
#include "tasks/token_text_task.h"

#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <memory>
#include <optional>
#include <tuple>

#include "io/checkpoint.h"
#include "optim/optim.h"
#include "optim/schedule.h"
#include "train/dp_settings.h"
#include "dist/grad_buckets.h"
#include "train/run_files.h"
#include "dist/zero_adamw.h"
#include "tensor/exercise.h"

namespace ropegrad::tasks {

namespace {

uint64_t mix(uint64_t seed, uint64_t step) {
  uint64_t z = seed * 0x9E3779B97F4A7C15ull + step + 0x632BE59BD9B4E019ull;
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

constexpr uint64_t kEvalStream = 0xE7A1ull << 40;  // evaluation batches never meet training ones

std::string format_duration(double seconds) {
  const auto s = static_cast<int64_t>(std::max(0.0, seconds));
  return fmt::format("{}:{:02d}", s / 60, s % 60);
}

}  // namespace

EvalRecord evaluate(nn::TransformerLM& model, const Task& task, int64_t batches, int64_t batch_size, uint64_t seed) {
  NoGradGuard no_grad;
  const bool was_training = model.is_training();
  model.eval();
  const auto* text = dynamic_cast<const TextTask*>(&task);
  const auto* tokens = dynamic_cast<const TokenTextTask*>(&task);
  // Sums and counts over every batch, divided once: the loss is the mean over
  // all evaluated tokens, the metric computed from its totals (perplexity is
  // exp of that mean, not the mean of each batch's exp).
  MetricSum loss, metric;
  for (int64_t i = 0; i < batches; ++i) {
    Generator gen(mix(seed, kEvalStream + static_cast<uint64_t>(i)));
    const Batch b = text != nullptr     ? text->eval_batch(batch_size, gen)
                    : tokens != nullptr ? tokens->eval_batch(batch_size, gen)
                                        : task.batch(batch_size, gen);
    const Tensor logits = model.forward(b.inputs);
    loss += cross_entropy_sum(logits, b.targets);
    metric += task.metric_sum(logits, b);
  }
  model.train(was_training);
  return {0, loss.count == 0 ? NAN : loss.total / loss.count, task.metric_of(metric)};
}

std::string model_config_text(const TrainConfig& c, const Task& task) {
  const nn::TransformerConfig& m = c.model;
  const TaskOptions& t = c.task_options;
  return fmt::format(
      "task={}\nvocab_size={}\ncontext_length={}\nd_model={}\nnum_layers={}\nnum_heads={}\nd_ff={}\n"
      "rope_theta={}\nattention={}\nsigma={}\ntie_embeddings={}\nnorm={}\nposition={}\nffn={}\n"
      "steps={}\nbatch={}\nlr={}\nmin_lr={}\nwarmup={}\nweight_decay={}\nbeta1={}\nbeta2={}\nclip={}\nseed={}\n"
      "text={}\nvocab={}\nlength={}\npairs={}\nqueries={}\nconcepts={}\n",
      task.name(), task.vocab_size(), task.seq_len(), m.d_model, m.num_layers, m.num_heads, m.d_ff, m.rope_theta,
      nn::attention_kind_name(m.attention), m.sigma == nn::SigmaMode::Scalar ? "scalar" : "vector",
      m.tie_embeddings ? 1 : 0, nn::norm_placement_name(m.norm), nn::position_encoding_name(m.position),
      nn::feed_forward_name(m.ffn), c.steps, c.batch_size, c.lr, c.min_lr, c.warmup, c.weight_decay, c.beta1, c.beta2,
      c.clip, c.seed, t.text_path, t.vocab, t.length, t.pairs, t.queries, t.concepts) +
         // Micro-batches change the step's arithmetic (not the number of processes): --resume keeps them.
         (c.micro_batch > 0 ? fmt::format("micro_batch={}\n", c.micro_batch) : "") +
         // Absolute, so `generate` finds the tokenizer from any directory.
         (t.tokenizer_dir.empty() ? ""
                                  : "tokenizer=" + std::filesystem::absolute(t.tokenizer_dir).string() + "\n" +
                                        "data=" + std::filesystem::absolute(t.data_path).string() + "\n" +
                                        run_inputs_text(t, task.vocab_size()));
}

nn::TransformerConfig read_model_config(const std::string& path) { return read_run_config(path).model; }

namespace {

// --resume continues the run in OUT only with the settings it was started
// with (steps may grow: the run goes on); anything else is an error listing
// what differs, rather than a run that silently mixes two configurations.
// What the inputs recorded (checksums, sizes) are compared by check_run_inputs.
bool is_input_record(const std::string& key) {
  return key == "tokenizer_checksum" || key == "tokenizer_vocab" || key == "data_bytes" || key == "data_checksum" ||
         key == "valid_bytes" || key == "valid_checksum";
}

// The settings the optimizer's state was built with (AdamW's, which the
// checkpoint saves): --allow-changed-optimizer lets a resume change them.
bool is_optimizer_setting(const std::string& key) {
  return key == "beta1" || key == "beta2" || key == "weight_decay";
}

// The command-line flag of a config.txt setting: "min_lr" -> "--min-lr".
std::string flag_of(std::string key) {
  std::replace(key.begin(), key.end(), '_', '-');
  return "--" + key;
}

// Returns what --resume says (empty unless the data or the optimizer's
// settings changed and that was allowed).
std::string check_resume_matches(const std::string& path, const std::string& now_text, bool allow_changed_data,
                                 bool allow_changed_optimizer) {
  const RunConfigFile before = read_run_config(path);
  const RunConfigFile now = parse_run_config(now_text, "the command line");
  std::string notice = check_run_inputs(std::filesystem::path(path).parent_path().string(), before.settings,
                                        now.settings, allow_changed_data);
  std::vector<std::string> differ, optimizer_changes;
  bool optimizer_differs = false;
  const auto cmp = [&](const std::string& key, const std::string& a, const std::string& b) {
    if (a != b) differ.push_back(fmt::format("{} {} (was {})", key, b, a));
  };
  cmp("task", before.task, now.task);
  const nn::TransformerConfig &x = before.model, &y = now.model;
  cmp("d_model", std::to_string(x.d_model), std::to_string(y.d_model));
  cmp("num_layers", std::to_string(x.num_layers), std::to_string(y.num_layers));
  cmp("num_heads", std::to_string(x.num_heads), std::to_string(y.num_heads));
  cmp("d_ff", std::to_string(x.d_ff), std::to_string(y.d_ff));
  cmp("vocab_size", std::to_string(x.vocab_size), std::to_string(y.vocab_size));
  cmp("context_length", std::to_string(x.context_length), std::to_string(y.context_length));
  cmp("attention", nn::attention_kind_name(x.attention), nn::attention_kind_name(y.attention));
  cmp("sigma", x.sigma == y.sigma ? "" : "scalar/vector", "");
  cmp("tie_embeddings", std::to_string(x.tie_embeddings), std::to_string(y.tie_embeddings));
  cmp("norm", nn::norm_placement_name(x.norm), nn::norm_placement_name(y.norm));
  cmp("position", nn::position_encoding_name(x.position), nn::position_encoding_name(y.position));
  cmp("ffn", nn::feed_forward_name(x.ffn), nn::feed_forward_name(y.ffn));
  // micro_batch is written only with --micro-batch: one added or dropped
  // differs too (a run started with --micro-batch 4 and resumed without it
  // sums its gradients another way). None is one micro-batch of the whole
  // batch, the same bits (MicroBatch.OneMicroBatchOfTheWholeBatchIsThePlainStepBitForBit).
  const auto micro_batch = [](const RunConfigFile& run) {
    const auto it = run.settings.find("micro_batch");
    if (it != run.settings.end()) return it->second;
    const auto batch = run.settings.find("batch");
    return batch != run.settings.end() ? batch->second : std::string();
  };
  const bool micro_given = before.settings.count("micro_batch") > 0 || now.settings.count("micro_batch") > 0;
  if (micro_given && micro_batch(before) != micro_batch(now)) {
    const auto shown = [](const RunConfigFile& run, const std::string& v) {
      return run.settings.count("micro_batch") > 0 ? v : std::string("none, one backward over the batch");
    };
    differ.push_back(now.settings.count("micro_batch") > 0
                         ? fmt::format("--micro-batch {} (was {})", micro_batch(now), shown(before, micro_batch(before)))
                         : fmt::format("no --micro-batch (was {})", micro_batch(before)));
  }
  for (const auto& [key, value] : now.settings) {
    if (key == "steps" || key == "micro_batch" || is_input_record(key)) continue;
    auto it = before.settings.find(key);
    if (it == before.settings.end() || it->second == value) continue;
    const std::string change = fmt::format("{} {} (was {})", flag_of(key), value, it->second);
    if (is_optimizer_setting(key) && allow_changed_optimizer) {
      optimizer_changes.push_back(change);
    } else {
      differ.push_back(change);
      optimizer_differs = optimizer_differs || is_optimizer_setting(key);
    }
  }
  RG_CHECK(differ.empty(), "train",
           "--resume: the settings differ from the run in '{}': {}; resume with the same settings, or start a new "
           "--out{}",
           path, fmt::join(differ, ", "),
           optimizer_differs ? " (--allow-changed-optimizer continues with changed --beta1, --beta2, --weight-decay)"
                             : "");
  if (!optimizer_changes.empty()) {
    if (!notice.empty()) notice += "\n";
    notice += fmt::format("train: --allow-changed-optimizer: continuing the run in '{}' with {}",
                          std::filesystem::path(path).parent_path().string(), fmt::join(optimizer_changes, ", "));
  }
  return notice;
}

}  // namespace

std::string ablation_header(const nn::TransformerConfig& m, int64_t parameters) {
  const nn::FeedForwardKind other =
      m.ffn == nn::FeedForwardKind::SwiGLU ? nn::FeedForwardKind::SiLU : nn::FeedForwardKind::SwiGLU;
  const auto count = [&](nn::FeedForwardKind kind, int64_t d_ff) {  // "matrices x D x d_ff = parameters"
    return fmt::format("{} x {} x {} = {}", kind == nn::FeedForwardKind::SwiGLU ? 3 : 2, m.d_model,
                       nn::feed_forward_width(kind, m.d_model, d_ff), nn::feed_forward_parameters(kind, m.d_model, d_ff));
  };
  return fmt::format("model: norm {}, position {}, ffn {}: {} parameters; FFN parameters per block: {} {} ({} at its "
                     "default width: {})",
                     nn::norm_placement_name(m.norm), nn::position_encoding_name(m.position),
                     nn::feed_forward_name(m.ffn), parameters, nn::feed_forward_name(m.ffn), count(m.ffn, m.d_ff),
                     nn::feed_forward_name(other), count(other, 0));
}

namespace {

bool all_finite(const Tensor& t) {
  const Tensor c = kernels::contiguous(t);
  const auto scan = [&](const auto* p) {
    for (int64_t i = 0; i < c.numel(); ++i)
      if (!std::isfinite(p[i])) return false;
    return true;
  };
  return c.dtype() == DType::Float32 ? scan(c.data_ptr<float>()) : scan(c.data_ptr<double>());
}

// Parameters and their gradients must stay finite: the step and the tensor
// are named the moment one does not (a NaN spreads to every weight in one step).
void check_finite(const nn::TransformerLM& model, int64_t step, bool grads, double lr) {
  for (const auto& [name, p] : model.named_parameters()) {
    const Tensor& t = grads ? p.grad() : p;
    if (!t.defined() || all_finite(t)) continue;
    throw DivergedError(fmt::format("train: {} of '{}' became NaN or infinite at step {} (lr {}); lower --lr or --clip",
                                    grads ? "the gradient" : "the weight", name, step, lr));
  }
}

}  // namespace

void check_step(const nn::TransformerLM& model, int64_t step, double lr, double loss, double grad_norm) {
  if (std::isfinite(loss) && std::isfinite(grad_norm)) return;
  check_finite(model, step, /*grads=*/false, lr);
  check_finite(model, step, /*grads=*/true, lr);
  throw DivergedError(fmt::format("train: the loss became {} at step {} (lr {}); lower --lr", loss, step, lr));
}

namespace {

// Training seconds of the steps before `first_step`: time.csv's last kept row (0 when none).
double kept_seconds(const std::string& dir, int64_t first_step) {
  const RunCsv csv = read_run_csv(dir + "/time.csv", "resume");
  double seconds = 0;
  if (csv.rows.empty()) return seconds;
  const size_t step = csv.column("step", "resume"), column = csv.column("seconds", "resume");
  for (const RunCsv::Row& row : csv.rows) {
    if (row.values[step] < static_cast<double>(first_step)) seconds = row.values[column];
  }
  return seconds;
}

// metrics.csv (step,loss,lr,grad_norm,eval_loss,eval_metric: reproducible
// byte for byte) and time.csv (step,seconds: the training time so far, which
// is not) of a run with --out DIR. On resume the rows before first_step are
// kept (a run killed after its last checkpoint may have logged steps that
// are now computed again), each file written whole to a new file that
// replaces the old one: a kill at any moment leaves either file complete.
class RunLog {
 public:
  // writes = false (a data-parallel rank other than 0): reads what it keeps, writes nothing.
  RunLog(const std::string& dir, bool resume, int64_t first_step, bool writes = true) {
    if (dir.empty()) return;
    std::string metrics = "step,loss,lr,grad_norm,eval_loss,eval_metric\n", times = "step,seconds\n";
    if (resume) {
      const RunCsv csv = read_run_csv(dir + "/metrics.csv", "resume");
      if (!csv.rows.empty()) {
        const size_t step = csv.column("step", "resume"), loss = csv.column("loss", "resume");
        for (const RunCsv::Row& row : csv.rows) {
          if (row.values[step] >= static_cast<double>(first_step)) continue;
          if (row.values[step] == 1) first_loss_ = row.values[loss];
          metrics += row.text + "\n";
        }
      }
      for (const std::string& line : read_metrics_rows(dir + "/time.csv", first_step)) times += line + "\n";
      seconds_before_ = kept_seconds(dir, first_step);
    }
    if (!writes) return;
    metrics_ = open(dir + "/metrics.csv", metrics);
    time_ = open(dir + "/time.csv", times);
  }
  ~RunLog() { close(); }
  RunLog(const RunLog&) = delete;
  RunLog& operator=(const RunLog&) = delete;

  double seconds_before() const { return seconds_before_; }
  double first_loss() const { return first_loss_; }  // step 1's, when kept; else NaN

  void row(const StepRecord& r, const EvalRecord* ev, double seconds) {
    if (metrics_ == nullptr) return;
    fmt::print(metrics_, "{},{:.6f},{:.6g},{:.6g},{},{}\n", r.step, r.loss, r.lr, r.grad_norm,
               ev != nullptr ? fmt::format("{:.6f}", ev->loss) : "", ev != nullptr ? fmt::format("{:.6f}", ev->metric) : "");
    fmt::print(time_, "{},{:.6f}\n", r.step, seconds);
  }
  // Before a checkpoint: the rows it claims reach the disk first.
  void sync() {
    for (std::FILE* f : {metrics_, time_}) {
      if (f == nullptr) continue;
      std::fflush(f);
      ::fsync(fileno(f));
    }
  }
  void close() {
    for (std::FILE** f : {&metrics_, &time_}) {
      if (*f != nullptr) std::fclose(*f);
      *f = nullptr;
    }
  }

 private:
  static std::FILE* open(const std::string& path, const std::string& kept) {
    write_file_atomically(path, kept);
    std::FILE* f = std::fopen(path.c_str(), "a");
    RG_CHECK(f != nullptr, "train", "cannot write '{}'", path);
    return f;
  }
  std::FILE* metrics_ = nullptr;
  std::FILE* time_ = nullptr;
  double seconds_before_ = 0, first_loss_ = NAN;
};

}  // namespace

bool loss_diverged(double loss, double first_loss, double factor) {
  return !std::isfinite(loss) || (std::isfinite(first_loss) && loss > factor * first_loss);
}

StepRecord train_step(nn::TransformerLM& model, nn::AdamW& opt, const Batch& b, int64_t step, const TrainConfig& c) {
  // BEGIN EXERCISE ex18-train-step
  opt.set_lr(nn::cosine_lr(step, c.lr, c.min_lr, c.warmup, c.steps));
  opt.zero_grad();
  const Tensor loss = nn::cross_entropy(model.forward(b.inputs), b.targets, kIgnore);
  backward(loss);
  const double loss_value = loss.item<double>();
  const double grad_norm = c.clip > 0 ? nn::clip_grad_norm_(model.parameters(), c.clip) : 0.0;
  check_step(model, step, opt.lr(), loss_value, grad_norm);  // before the update
  opt.step();
  return {step, loss_value, opt.lr(), grad_norm};
  // END EXERCISE ex18-train-step
}

void check_finite_weights(const nn::Module& model, const std::string& what, const std::string& op) {
  for (const auto& [name, p] : model.named_parameters()) {
    RG_CHECK(all_finite(p), op,
             "{}: the checkpoint holds a non-finite value (NaN or infinity) in the weight '{}'; it is unusable "
             "(resume from an earlier checkpoint or start a new --out)",
             what, name);
  }
}

void check_train_config(const TrainConfig& c) {
  RG_CHECK(c.steps > 0 && c.batch_size > 0, "train", "steps and batch_size must be positive, got {} and {}", c.steps,
           c.batch_size);
  RG_CHECK(c.eval_every > 0 && c.eval_batches > 0, "train", "eval_every and eval_batches must be positive");
  RG_CHECK(c.warmup >= 0 && c.warmup <= c.steps, "train", "warmup ({}) must be between 0 and steps ({})", c.warmup,
           c.steps);
  RG_CHECK(!c.resume || !c.out_dir.empty(), "train", "--resume needs --out DIR (where the checkpoint is)");
  RG_CHECK(std::isfinite(c.lr) && c.lr > 0 && std::isfinite(c.min_lr) && c.min_lr >= 0, "train",
           "lr ({}) must be positive and min_lr ({}) non-negative, both finite", c.lr, c.min_lr);
  RG_CHECK(std::isfinite(c.clip) && c.clip >= 0, "train", "clip must be a finite number >= 0 (0: off), got {}", c.clip);
  RG_CHECK(c.checkpoint_every >= 0 && c.stop_after >= 0, "train",
           "checkpoint_every ({}) and stop_after ({}) must be >= 0", c.checkpoint_every, c.stop_after);
  // Its bytes (bucket_mb x 1e6) become an integer: checked first, at least one byte.
  RG_CHECK(std::isfinite(c.bucket_mb) && c.bucket_mb * 1e6 >= 1 && c.bucket_mb <= 1e6, "train",
           "bucket_mb must be in [1e-6, 1e6] (a byte to a terabyte of float32 gradient), got {}", c.bucket_mb);
  RG_CHECK(std::isfinite(c.time_budget) && c.time_budget >= 0 && std::isfinite(c.divergence_factor) &&
               c.divergence_factor >= 0,
           "train", "time_budget ({}) and divergence_factor ({}) must be finite and >= 0 (0: off)", c.time_budget,
           c.divergence_factor);
  // What config.txt records must be what its reader accepts (its rules in
  // run_file_fields): a run is refused before it starts, not on --resume.
  const TaskOptions& t = c.task_options;
  const std::vector<std::tuple<const char*, const char*, double>> recorded = {
      {"steps", "--steps", static_cast<double>(c.steps)},
      {"batch", "--batch", static_cast<double>(c.batch_size)},
      {"lr", "--lr", c.lr},
      {"min_lr", "--min-lr", c.min_lr},
      {"warmup", "--warmup", static_cast<double>(c.warmup)},
      {"weight_decay", "--weight-decay", c.weight_decay},
      {"beta1", "--beta1", c.beta1},
      {"beta2", "--beta2", c.beta2},
      {"clip", "--clip", c.clip},
      {"seed", "--seed", static_cast<double>(c.seed)},
      {"vocab", "--vocab", static_cast<double>(t.vocab)},
      {"length", "--length", static_cast<double>(t.length)},
      {"pairs", "--pairs", static_cast<double>(t.pairs)},
      {"queries", "--queries", static_cast<double>(t.queries)},
      {"concepts", "--concepts", static_cast<double>(t.concepts)},
      {"micro_batch", "--micro-batch", static_cast<double>(c.micro_batch > 0 ? c.micro_batch : c.batch_size)},
      {"d_model", "--d-model", static_cast<double>(c.model.d_model)},
      {"num_layers", "--layers", static_cast<double>(c.model.num_layers)},
      {"num_heads", "--heads", static_cast<double>(c.model.num_heads)},
      {"d_ff", "--d-ff", static_cast<double>(c.model.d_ff)},
  };
  for (const auto& [key, flag, value] : recorded) {
    const nn::FieldRule& rule = *run_field_rule("config.txt", key);
    RG_CHECK(nn::field_value_ok(value, rule), "train", "{} {} is outside the range of a run's config.txt: {}", flag,
             value, nn::describe_field_rule(rule));
  }
}

namespace {

// The memory a training run needs, against the machine's (the model's shape from the task).
void check_training_fits(const TrainConfig& c, const Task& task) {
  nn::TransformerConfig mc = c.model;
  mc.vocab_size = task.vocab_size();
  mc.context_length = task.seq_len();
  check_fits_in_memory(training_bytes(mc, c.batch_size),
                       fmt::format("training (batch {}, d_model {}, {} layers, context {}, vocab {})", c.batch_size,
                                   mc.d_model, mc.num_layers, mc.context_length, mc.vocab_size));
}

}  // namespace

void check_train_setup(const TrainConfig& c, const Task& task) {
  check_train_config(c);
  if (c.micro_batch > 0) micro_batches_per_step(c.batch_size, c.micro_batch, 1);
  const nn::TransformerConfig& m = c.model;
  RG_CHECK(m.d_model % m.num_heads == 0, "train", "--d-model {} is not a multiple of --heads {}", m.d_model,
           m.num_heads);
  RG_CHECK(m.position != nn::PositionEncoding::Rope || (m.d_model / m.num_heads) % 2 == 0, "train",
           "RoPE rotates pairs of dimensions: the head dimension --d-model / --heads = {} / {} = {} must be even",
           m.d_model, m.num_heads, m.d_model / m.num_heads);
  check_training_fits(c, task);
}

std::vector<std::string> train_inputs(const TrainConfig& c) {
  const TaskOptions& t = c.task_options;
  return {t.text_path, t.tokenizer_dir, t.data_path, t.data_path.empty() ? "" : validation_path_for(t.data_path)};
}

namespace {

// --out, made ready for a run and locked: never one of the run's inputs nor
// inside one, and never a directory holding files of a run's names that no
// run wrote (a run's directory is the one with config.txt): train replaces them.
std::unique_ptr<RunLock> open_run_directory(const TrainConfig& c) {
  refuse_output_overlapping_inputs("train", "--out", c.out_dir, train_inputs(c));
  std::error_code error;
  if (!std::filesystem::exists(c.out_dir + "/config.txt", error)) {
    for (const char* name : {"metrics.csv", "time.csv", "summary.json", "checkpoint.safetensors", "dp.csv",
                             "dp_buckets.csv"}) {
      RG_CHECK(!std::filesystem::exists(c.out_dir + "/" + name, error), "train",
               "--out '{}' holds a {} but no config.txt: not a run's directory, and train would replace that file; "
               "choose another --out",
               c.out_dir, name);
    }
  }
  std::filesystem::create_directories(c.out_dir, error);
  RG_CHECK(!error && std::filesystem::is_directory(c.out_dir), "train", "cannot create the output directory '{}': {}",
           c.out_dir, error ? error.message() : "a file of that name exists");
  return std::make_unique<RunLock>(c.out_dir);
}

}  // namespace

namespace {

// One call of train(), in named steps: the set-up (the task, the model, the
// optimizer, the micro-batch machinery), --resume, the logs, then each step
// (the update, its rows, an evaluation, the progress line, a checkpoint) and
// at the end the result and summary.json.
class TrainingRun {
 public:
  TrainingRun(const TrainConfig& config, std::FILE* progress);
  TrainResult run();

 private:
  void build_model_and_optimizer();
  bool resume();  // false: the run had finished, nothing to do
  void load_optimizer_state(const nn::StateDict& state);
  bool run_step(int64_t step);  // false: stop after it
  bool update(int64_t step, StepRecord& record, StepTimes& times);  // false: diverged inside the step
  void log_data_parallel(int64_t step, StepTimes times);
  void check_loss(const char* which, double loss, int64_t step);
  void show_progress(int64_t step, const StepRecord& record, const EvalRecord* ev);
  void finish();
  std::string data_parallel_summary();
  void write_summary(const std::string& dp_summary) const;

  TrainConfig c_;
  std::FILE* progress_;
  LocalGroup alone_;
  ProcessGroup& group_;
  bool micro_, rank0_;
  std::unique_ptr<Task> task_;
  nn::TransformerConfig model_config_;
  MemoryStats before_{};
  std::unique_ptr<nn::TransformerLM> model_;
  std::unique_ptr<nn::Optimizer> optimizer_;
  std::unique_ptr<GradientBuckets> buckets_;
  TrainResult result_;
  int64_t first_step_ = 1, last_step_ = 0, tokens_per_step_ = 0;
  std::string checkpoint_, config_text_;
  std::unique_ptr<RunLock> lock_;  // one run at a time in a directory
  std::optional<RunLog> log_;
  std::optional<DpLog> dp_log_;
  bool live_ = false;
  double train_seconds_ = 0, first_loss_ = NAN;  // step 1's loss: the reference of divergence
  std::chrono::steady_clock::time_point start_;
};

TrainingRun::TrainingRun(const TrainConfig& config, std::FILE* progress)
    : c_(config),
      progress_(progress),
      group_(config.group != nullptr ? *config.group : alone_),
      // Micro-batches, alone or across processes (dist/grad_buckets.h): the
      // step is M micro-batches; N processes share each step's M.
      micro_(config.micro_batch > 0 || config.group != nullptr || config.zero == 1),
      rank0_(group_.rank() == 0) {  // only rank 0 writes the run's files and prints progress
  check_train_config(config);
  if (micro_ && c_.micro_batch == 0) c_.micro_batch = c_.batch_size;  // one micro-batch: the whole batch
  if (micro_) micro_batches_per_step(c_.batch_size, c_.micro_batch, group_.size());
  if (!rank0_) progress_ = nullptr;
  task_ = make_task(c_.task, c_.task_options);
  model_config_ = c_.model;
  model_config_.vocab_size = task_->vocab_size();
  model_config_.context_length = task_->seq_len();
  check_training_fits(c_, *task_);
  build_model_and_optimizer();
  result_.task = task_->name();
  result_.metric_name = task_->metric_name();
  result_.attention = nn::attention_kind_name(model_config_.attention);
  result_.parameters = model_->num_parameters();
  const nn::TransformerConfig& mc = model_config_;
  const bool ablated = mc.norm != nn::NormPlacement::Pre || mc.position != nn::PositionEncoding::Rope ||
                       mc.ffn != nn::FeedForwardKind::SwiGLU;
  if (ablated && !c_.quiet && progress_ != nullptr) {
    fmt::print(progress_, "{}\n", ablation_header(mc, result_.parameters));
  }
  checkpoint_ = c_.out_dir.empty() ? "" : c_.out_dir + "/checkpoint.safetensors";
  if (!c_.out_dir.empty() && rank0_) lock_ = open_run_directory(c_);
  config_text_ = model_config_text(c_, *task_);
}

void TrainingRun::build_model_and_optimizer() {
  before_ = memory_stats();
  reset_peak_memory();
  Generator init(c_.seed);
  model_ = std::make_unique<nn::TransformerLM>(model_config_, &init);
  model_->train();
  const nn::AdamWOptions adamw{.lr = c_.lr, .betas = {c_.beta1, c_.beta2}, .eps = 1e-8, .weight_decay = c_.weight_decay};
  // ZeRO-1 keeps 1/N of AdamW's state on each rank (dist/zero_adamw.h): the same bits.
  if (c_.zero == 1) {
    optimizer_ = std::make_unique<ZeroAdamW>(model_->parameters(), adamw, group_);
  } else {
    optimizer_ = std::make_unique<nn::AdamW>(model_->parameters(), adamw);
  }
  if (micro_) {
    if (group_.size() > 1) check_same_settings(group_, dp_settings_text(c_, *task_));
    buckets_ = std::make_unique<GradientBuckets>(model_->parameters(), static_cast<int64_t>(c_.bucket_mb * 1e6),
                                                 group_);
  }
}

bool TrainingRun::resume() {
  RG_CHECK(std::filesystem::is_regular_file(checkpoint_), "train",
           "--resume: there is no checkpoint '{}' to continue from", checkpoint_);
  const std::string notice =
      check_resume_matches(c_.out_dir + "/config.txt", config_text_, c_.allow_changed_data, c_.allow_changed_optimizer);
  if (!notice.empty()) fmt::print(progress_ != nullptr ? progress_ : stderr, "{}\n", notice);
  result_.notices = notice;
  nn::StateDict opt_state;
  first_step_ = nn::load_checkpoint(checkpoint_, *model_, &opt_state) + 1;
  // A NaN in the checkpoint is the checkpoint's fault, not the learning
  // rate's: say so before the first step would blame --lr.
  check_finite_weights(*model_, checkpoint_, "train");
  load_optimizer_state(opt_state);
  // Nothing left to run (every step, or the time budget, spent): say so,
  // and leave the run's files as they are.
  if (first_step_ > c_.steps || (c_.time_budget > 0 && kept_seconds(c_.out_dir, first_step_) >= c_.time_budget)) {
    result_.already_finished_at = result_.last_step = first_step_ - 1;
    return false;
  }
  return true;
}

void TrainingRun::load_optimizer_state(const nn::StateDict& state) {
  nn::Optimizer& opt = *optimizer_;
  // The checkpoint's optimizer settings must be the command line's (config.txt
  // said so above, unless it was edited), or --allow-changed-optimizer keeps the command line's.
  try {
    opt.load_state_dict(state, c_.allow_changed_optimizer ? nn::OptimizerSettingsOnLoad::keep_mine
                                                          : nn::OptimizerSettingsOnLoad::must_match);
  } catch (const nn::OptimizerSettingsDiffer& e) {
    // The library names its C++ choices; the command line has a flag for it.
    std::vector<std::string> differ;
    for (const auto& d : e.differences)
      differ.push_back(fmt::format("{} {} (the checkpoint has {})", flag_of(d.name), d.mine, d.saved));
    fail("train",
         "--resume: '{}': the optimizer settings it was saved with differ from the command line's: {}; resume with "
         "the checkpoint's values, or pass --allow-changed-optimizer to continue with the command line's",
         checkpoint_, fmt::join(differ, ", "));
  } catch (const Error& e) {
    fail("train", "--resume: '{}': {}", checkpoint_, e.what());
  }
  // The step in the metadata against the optimizer's own count of its
  // updates (AdamW's t): a checkpoint whose step was edited, or that has no
  // metadata checksum to catch it, must not continue at another step with
  // this state.
  RG_CHECK(opt.step_count() == first_step_ - 1, "train",
           "--resume: '{}': its metadata says step {}, but its optimizer state has taken {} steps (AdamW's t): the "
           "checkpoint was edited or is corrupt; resume from another checkpoint or start a new --out",
           checkpoint_, first_step_ - 1, opt.step_count());
}

TrainResult TrainingRun::run() {
  if (c_.resume && !resume()) return result_;
  result_.last_step = first_step_ - 1;
  // config.txt first: it is what marks the directory as a run's (open_run_directory).
  if (!c_.out_dir.empty() && rank0_) write_file_atomically(c_.out_dir + "/config.txt", config_text_);
  log_.emplace(c_.out_dir, c_.resume, first_step_, rank0_);
  dp_log_.emplace(micro_ ? c_.out_dir : "", c_.resume, first_step_, rank0_);
  live_ = !c_.quiet && progress_ != nullptr && isatty(fileno(progress_));
  last_step_ = c_.stop_after > 0 ? std::min(c_.stop_after, c_.steps) : c_.steps;
  tokens_per_step_ = c_.batch_size * task_->seq_len();
  first_loss_ = log_->first_loss();
  start_ = std::chrono::steady_clock::now();
  for (int64_t step = first_step_; step <= last_step_; ++step) {
    if (!run_step(step)) break;
  }
  finish();
  return result_;
}

bool TrainingRun::update(int64_t step, StepRecord& record, StepTimes& times) {
  Generator gen(mix(c_.seed, static_cast<uint64_t>(step)));
  const Batch b = task_->batch(c_.batch_size, gen);
  // Dropout draws from the default generator: seed it from (seed, step) too,
  // so a resumed run repeats the same masks.
  manual_seed(mix(c_.seed ^ 0xD20D0D0Dull, static_cast<uint64_t>(step)));
  try {
    group_.maybe_die(step);
    if (micro_) {
      record = train_step_micro_batches(*model_, *optimizer_, b, step, c_, *buckets_, group_,
                                        mix(c_.seed ^ 0xD20D0D0Dull, static_cast<uint64_t>(step)), &times);
    } else {
      record = train_step(*model_, dynamic_cast<nn::AdamW&>(*optimizer_), b, step, c_);
    }
    check_finite(*model_, step, /*grads=*/false, optimizer_->lr());  // the update itself overflowed
  } catch (const DivergedError& e) {
    if (c_.divergence_factor <= 0) throw;
    result_.diverged_at = step;  // the step did not complete: no row, no checkpoint
    result_.diverged_because = e.what();
    return false;
  }
  return true;
}

void TrainingRun::log_data_parallel(int64_t step, StepTimes times) {
  const StepTimes spent = group_.take_times();
  times.compute -= spent.communication_in_backward;
  times.communication = spent.communication;
  times.waiting = spent.waiting;
  dp_log_->row(step, times, group_.take_bytes_summed(), group_.size(), buckets_->ready_seconds(),
               buckets_->bucket_elements());
}

// A loss above divergence_factor times step 1's (or not finite) ends the run at this step.
void TrainingRun::check_loss(const char* which, double loss, int64_t step) {
  const double factor = c_.divergence_factor;
  if (factor <= 0 || result_.diverged_at != 0 || !loss_diverged(loss, first_loss_, factor)) return;
  result_.diverged_at = step;
  result_.diverged_because = fmt::format("the {} loss {:.4g} at step {} is above {} times step 1's {:.4g}", which,
                                         loss, step, factor, first_loss_);
}

bool TrainingRun::run_step(int64_t step) {
  const auto t0 = std::chrono::steady_clock::now();
  StepRecord record{};
  StepTimes times;
  if (!update(step, record, times)) return false;
  train_seconds_ += std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  result_.steps.push_back(record);
  result_.last_step = step;
  // Step 1's loss as metrics.csv records it: a resumed run compares with the same number.
  if (step == 1) first_loss_ = csv_number(fmt::format("{:.6f}", record.loss));
  const double seconds = log_->seconds_before() + train_seconds_;
  bool out_of_time = c_.time_budget > 0 && seconds >= c_.time_budget;
  if (c_.time_budget > 0 && group_.size() > 1) out_of_time = group_.rank0_says(out_of_time);  // every rank stops alike
  if (micro_) log_data_parallel(step, times);
  check_loss("training", record.loss, step);

  const bool eval_now = step % c_.eval_every == 0 || step == c_.steps || out_of_time || result_.diverged_at > 0;
  EvalRecord ev{step, NAN, NAN};
  if (eval_now) {
    ev = evaluate(*model_, *task_, c_.eval_batches, c_.batch_size, c_.seed);
    ev.step = step;
    result_.evals.push_back(ev);
    check_loss("evaluation", ev.loss, step);
  }
  log_->row(record, eval_now ? &ev : nullptr, seconds);
  show_progress(step, record, eval_now ? &ev : nullptr);
  if (c_.on_step) c_.on_step(record, eval_now ? &ev : nullptr, seconds);
  if (result_.diverged_at > 0) return false;  // no checkpoint: there is nothing to continue
  if (!checkpoint_.empty() &&
      ((c_.checkpoint_every > 0 && step % c_.checkpoint_every == 0) || step == last_step_ || out_of_time)) {
    // The rows up to this step reach the disk before the checkpoint that
    // claims them: a kill between the two leaves rows past the checkpoint
    // (dropped on resume), never a checkpoint past its rows.
    log_->sync();
    const nn::StateDict state = optimizer_->state_dict();  // every rank: ZeRO gathers the shards here
    if (rank0_) nn::save_checkpoint(checkpoint_, *model_, state, step);
  }
  return !out_of_time;
}

void TrainingRun::show_progress(int64_t step, const StepRecord& record, const EvalRecord* ev) {
  const double done = static_cast<double>(step - first_step_ + 1);
  const double tok_s = static_cast<double>(tokens_per_step_) * done / std::max(train_seconds_, 1e-9);
  const double eta = train_seconds_ / done * static_cast<double>(last_step_ - step);
  const std::string metric = result_.evals.empty() ? "-" : fmt::format("{:.4f}", result_.evals.back().metric);
  if (live_) {
    fmt::print(progress_, "\r{} {:<8} step {:>5}/{} | loss {:.4f} | {} {} | {:.0f} tok/s | ETA {}   ",
               task_->name(), result_.attention, step, c_.steps, record.loss, task_->metric_name(), metric, tok_s,
               format_duration(eta));
    std::fflush(progress_);
  } else if (!c_.quiet && progress_ != nullptr && ev != nullptr) {
    fmt::print(progress_, "{} {:<8} step {:>5}/{} | loss {:.4f} | eval loss {:.4f} | {} {:.4f} | {:.0f} tok/s\n",
               task_->name(), result_.attention, step, c_.steps, record.loss, ev->loss, task_->metric_name(),
               ev->metric, tok_s);
  }
}

void TrainingRun::finish() {
  if (live_) std::fputs("\n", progress_);
  log_->close();
  dp_log_->close();
  result_.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
  const auto ran = static_cast<double>(result_.steps.size());
  result_.seconds_per_step = ran > 0 ? train_seconds_ / ran : 0;
  result_.tokens_per_second = train_seconds_ > 0 ? static_cast<double>(tokens_per_step_) * ran / train_seconds_ : 0;
  result_.peak_bytes = memory_stats().peak_bytes - before_.current_bytes;
  if (!result_.evals.empty()) {
    result_.final_loss = result_.evals.back().loss;
    result_.final_metric = result_.evals.back().metric;
  }
  const std::string dp_summary = micro_ ? data_parallel_summary() : "";
  if (!c_.out_dir.empty() && rank0_) write_summary(dp_summary);
}

// The data-parallel part of summary.json.
std::string TrainingRun::data_parallel_summary() {
  const StepTimes t = dp_log_->mean_times();
  const double bytes = dp_log_->mean_bytes();
  // Each rank's AdamW state (m and v): 1/N of the whole with ZeRO-1.
  const auto* sharded = dynamic_cast<const ZeroAdamW*>(optimizer_.get());
  const double mine = sharded != nullptr ? static_cast<double>(sharded->state_bytes())
                                         : 8.0 * static_cast<double>(buckets_->elements());
  std::vector<double> state_bytes(static_cast<size_t>(group_.size()));
  group_.all_gather(&mine, 1, state_bytes.data(), "the optimizer state sizes");
  return fmt::format(
      "  \"ranks\": {},\n  \"micro_batch\": {},\n  \"zero\": {},\n  \"buckets\": {},\n"
      "  \"parameter_bytes\": {},\n  \"bytes_summed_per_step\": {:.0f},\n  \"ring_bytes_per_rank_per_step\": {:.0f},\n"
      "  \"ring_bytes_of_float32_per_rank_per_step\": {:.0f},\n  \"compute_seconds_per_step\": {:.6f},\n"
      "  \"communication_seconds_per_step\": {:.6f},\n  \"waiting_seconds_per_step\": {:.6f},\n"
      "  \"optimizer_state_bytes_per_rank\": [{}],\n",
      group_.size(), c_.micro_batch, c_.zero, buckets_->buckets(), 4 * buckets_->elements(), bytes,
      ring_bytes(bytes, group_.size()), ring_bytes(4.0 * static_cast<double>(buckets_->elements()), group_.size()),
      t.compute, t.communication, t.waiting, fmt::join(state_bytes, ", "));
}

void TrainingRun::write_summary(const std::string& dp_summary) const {
  const TrainResult& r = result_;
  write_file_atomically(c_.out_dir + "/summary.json", fmt::format(
      "{{\n  \"task\": \"{}\",\n  \"attention\": \"{}\",\n  \"parameters\": {},\n  \"steps\": {},\n  \"final_eval_step\": {},\n"
      "  \"final_eval_loss\": {:.6f},\n  \"metric\": \"{}\",\n  \"final_metric\": {:.6f},\n"
      "  \"peak_bytes\": {},\n  \"tokens_per_second\": {:.1f},\n  \"seconds_per_step\": {:.6f},\n{}  \"seed\": {}\n}}\n",
      r.task, r.attention, r.parameters, r.last_step, r.evals.empty() ? 0 : r.evals.back().step, r.final_loss,
      r.metric_name, r.final_metric, r.peak_bytes, r.tokens_per_second, r.seconds_per_step, dp_summary, c_.seed));
}

}  // namespace

TrainResult train(const TrainConfig& config, std::FILE* progress) { return TrainingRun(config, progress).run(); }

}  // namespace ropegrad::tasks
