// `ropegrad`: the command-line program.
//   ropegrad train      train one model on one task
//   ropegrad compare    train all three attention variants with the same budget
//   ropegrad sweep      train a grid of settings with the same budget (tasks/sweep_cli.cpp)
//   ropegrad generate   sample from a trained checkpoint
//   ropegrad gradcheck  the gradient-check report of every op and module
//   ropegrad account    parameters, FLOPs and memory of a model shape (tasks/account_cli.cpp)
//   ropegrad dp-simulate  data-parallel scaling from a backward profile (tasks/dp_simulate_cli.cpp)
#include <algorithm>
#include <charconv>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

#include "autograd/op_catalog.h"
#include "nn/checkpoint.h"
#include "nn/module_catalog.h"
#include "tasks/token_text_task.h"
#include "tasks/plot.h"
#include "tasks/run_files.h"
#include "tasks/sweep.h"
#include "tasks/trainer.h"
#if ROPEGRAD_WITH_MPI
#include "tasks/data_parallel.h"
#endif

using namespace ropegrad;

namespace {

// ---- options -----------------------------------------------------------------------------------

struct Option {
  std::string name, default_value, help;
  bool is_flag = false;
};

class Args {
 public:
  Args(std::string command, std::string summary, std::vector<Option> options)
      : command_(std::move(command)), summary_(std::move(summary)), options_(std::move(options)) {}

  // false when --help was asked (the help is printed); throws on a bad argument.
  bool parse(int argc, char** argv) {
    for (int i = 0; i < argc; ++i) {
      const std::string arg = argv[i];
      if (arg == "--help" || arg == "-h") {
        print_help();
        return false;
      }
      const Option* opt = arg.rfind("--", 0) == 0 ? find(arg.substr(2)) : nullptr;
      RG_CHECK(opt != nullptr, where(), "unknown argument '{}' (see --help)", arg);
      if (opt->is_flag) {
        values_.insert_or_assign(opt->name, std::string(1, '1'));  // a flag is present
      } else {
        RG_CHECK(i + 1 < argc, where(), "--{} needs a value", opt->name);
        values_[opt->name] = argv[++i];
      }
    }
    return true;
  }

  std::string str(const std::string& name) const {
    auto it = values_.find(name);
    return it != values_.end() ? it->second : find(name)->default_value;
  }
  int64_t integer(const std::string& name) const { return to_number<int64_t>(name); }
  double real(const std::string& name) const { return to_number<double>(name); }
  bool flag(const std::string& name) const { return values_.count(name) > 0; }
  bool given(const std::string& name) const { return values_.count(name) > 0; }

 private:
  std::string where() const { return fmt::format("ropegrad {}", command_); }
  const Option* find(const std::string& name) const {
    for (const Option& o : options_) {
      if (o.name == name) return &o;
    }
    return nullptr;
  }
  template <typename T>
  T to_number(const std::string& name) const {
    const std::string text = str(name);
    try {
      size_t used = 0;
      const T value = std::is_integral_v<T> ? static_cast<T>(std::stoll(text, &used)) : static_cast<T>(std::stod(text, &used));
      if (used == text.size()) return value;
    } catch (const std::exception&) {
    }
    fail(where(), "--{} expects a number, got '{}'", name, text);
  }
  void print_help() const {
    fmt::print("usage: ropegrad {} [options]\n\n{}\n\noptions:\n", command_, summary_);
    for (const Option& o : options_) {
      const std::string left = o.is_flag ? fmt::format("--{}", o.name)
                                         : fmt::format("--{} {}", o.name, o.default_value.empty() ? "X" : o.default_value);
      fmt::print("  {:<26} {}\n", left, o.help);
    }
  }

  std::string command_, summary_;
  std::vector<Option> options_;
  std::map<std::string, std::string> values_;
};

// Options shared by train and compare.
std::vector<Option> training_options(bool with_attention) {
  std::vector<Option> o = {
      {"task", "copy", "copy | recall | entailment | text"},
      {"text", "", "text task: the file to model (bytes)"},
      {"tokenizer", "", "text task: a BPE tokenizer directory (ropegrad tokenize train)"},
      {"data", "", "text task with --tokenizer: training ids .npy; validation: same name with 'valid'"},
      {"vocab", "0", "copy: token kinds (16); recall: keys = values (32)"},
      {"length", "0", "copy: tokens per sequence (32); text: context (128)"},
      {"pairs", "0", "recall: key-value pairs (8)"},
      {"queries", "0", "recall: queried keys (4)"},
      {"concepts", "0", "entailment: concepts in the hierarchy (8)"},
      {"d-model", "64", "model width D"},
      {"layers", "2", "transformer blocks L"},
      {"heads", "4", "attention heads H"},
      {"d-ff", "0", "FFN width (0: swiglu 8/3 D rounded up to 64, silu 4 D)"},
      {"norm", "pre", "pre | post | none: RMSNorm before each sublayer, after each residual add, or nowhere"},
      {"position", "rope", "rope | none (NoPE: no rotation in any attention variant)"},
      {"ffn", "swiglu", "swiglu | silu (W2 SiLU(W1 x), two matrices)"},
      {"sigma", "scalar", "W2: scalar | vector sigma"},
      {"tie", "", "tie the output head to the embedding", true},
      {"steps", "300", "training steps"},
      {"batch", "32", "sequences per step"},
      {"lr", "0.003", "peak learning rate (AdamW)"},
      {"min-lr", "0.0003", "final learning rate of the cosine schedule"},
      {"warmup", "20", "linear warmup steps; unless given, 20 or --steps when fewer"},
      {"weight-decay", "0.01", "AdamW decoupled weight decay"},
      {"beta1", "0.9", "AdamW first-moment decay"},
      {"beta2", "0.98", "AdamW second-moment decay (0.98: quicker to adapt on short runs than torch's 0.999)"},
      {"clip", "1.0", "global gradient-norm clip (0: off)"},
      {"eval-every", "50", "steps between evaluations"},
      {"eval-batches", "4", "batches per evaluation"},
      {"seed", "0", "seed of the initialisation and the data"},
      {"out", "", "directory for metrics.csv, summary.json, checkpoints"},
      {"quiet", "", "no progress line", true},
  };
  if (with_attention) {
    o.insert(o.begin() + 9, {"attention", "standard", "standard | w2 | triple"});
    o.push_back({"checkpoint-every", "0", "steps between checkpoints (0: only at the end)"});
    o.push_back({"resume", "", "continue from OUT/checkpoint.safetensors", true});
    o.push_back({"allow-changed-data", "", "with --resume: continue although --data changed (said, not silent)", true});
    o.push_back({"allow-changed-optimizer", "",
                 "with --resume: continue with other --beta1, --beta2, --weight-decay (said, not silent)", true});
    o.push_back({"stop-after", "0", "stop after this step, as if interrupted (0: run all)"});
    // Data parallelism: mpirun -np N ropegrad train ... (tasks/data_parallel.h).
    o.push_back({"micro-batch", "0",
                 "rows per micro-batch: the step sums --batch/b micro-batches' gradients in float64 (0: one backward)"});
    o.push_back({"bucket-mb", "1", "under mpirun: megabytes of float32 gradient per all-reduce bucket"});
    o.push_back({"zero", "0", "under mpirun: 1 shards AdamW's state across the ranks (ZeRO-1)"});
    o.push_back({"dp-timeout", "60", "under mpirun: seconds a rank waits for the others before it stops the job"});
  }
  return o;
}

// One of `choices`, or an Error naming the option, the choices and the value.
std::string choice_of(const Args& a, const std::string& name, const std::vector<std::string>& choices) {
  const std::string v = a.str(name);
  RG_CHECK(std::find(choices.begin(), choices.end(), v) != choices.end(), fmt::format("ropegrad: --{}", name),
           "must be {}, got '{}'", fmt::join(choices, " | "), v);
  return v;
}

// A numeric option outside its range is an error naming it and its value
// (such values were ignored silently, or ended in std::bad_alloc).
int64_t int_at_least(const Args& a, const std::string& name, int64_t lo) {
  const int64_t v = a.integer(name);
  RG_CHECK(v >= lo, fmt::format("ropegrad: --{}", name), "must be >= {}, got {}", lo, v);
  return v;
}

double real_in(const Args& a, const std::string& name, double lo, double hi, bool lo_open = false) {
  const double v = a.real(name);
  RG_CHECK(std::isfinite(v) && (lo_open ? v > lo : v >= lo) && v <= hi, fmt::format("ropegrad: --{}", name),
           "must be a finite number in {}{}, {}], got {}", lo_open ? "(" : "[", lo, hi, a.str(name));
  return v;
}

tasks::TrainConfig train_config(const Args& a, bool with_attention) {
  for (const char* name : {"vocab", "length", "pairs", "queries", "concepts", "d-ff", "warmup", "seed"})
    int_at_least(a, name, 0);  // 0: the task's or the model's default
  for (const char* name : {"d-model", "layers", "heads", "steps", "batch", "eval-every", "eval-batches"})
    int_at_least(a, name, 1);
  real_in(a, "lr", 0, 1e3, /*lo_open=*/true);
  real_in(a, "min-lr", 0, 1e3);
  real_in(a, "weight-decay", 0, 1e3);
  real_in(a, "beta1", 0, 0.999999);
  real_in(a, "beta2", 0, 0.999999);
  real_in(a, "clip", 0, 1e30);
  if (with_attention) {
    int_at_least(a, "checkpoint-every", 0);
    int_at_least(a, "stop-after", 0);
  }
  tasks::TrainConfig c;
  c.task = a.str("task");
  c.task_options.text_path = a.str("text");
  RG_CHECK(c.task_options.text_path.empty() || c.task == "text", "ropegrad", "--text is for --task text, not --task {}",
           c.task);
  c.task_options.tokenizer_dir = a.str("tokenizer");
  c.task_options.data_path = a.str("data");
  c.task_options.vocab = a.integer("vocab");
  c.task_options.length = a.integer("length");
  c.task_options.pairs = a.integer("pairs");
  c.task_options.queries = a.integer("queries");
  c.task_options.concepts = a.integer("concepts");
  c.model.d_model = a.integer("d-model");
  c.model.num_layers = a.integer("layers");
  c.model.num_heads = a.integer("heads");
  c.model.d_ff = a.integer("d-ff");
  c.model.sigma = a.str("sigma") == "vector" ? nn::SigmaMode::Vector : nn::SigmaMode::Scalar;
  RG_CHECK(a.str("sigma") == "vector" || a.str("sigma") == "scalar", "ropegrad", "--sigma must be scalar or vector");
  c.model.tie_embeddings = a.flag("tie");
  c.model.norm = nn::parse_norm_placement(choice_of(a, "norm", {"pre", "post", "none"}));
  c.model.position = nn::parse_position_encoding(choice_of(a, "position", {"rope", "none"}));
  c.model.ffn = nn::parse_feed_forward(choice_of(a, "ffn", {"swiglu", "silu"}));
  if (with_attention) {
    c.model.attention = nn::parse_attention_kind(a.str("attention"));
    c.checkpoint_every = a.integer("checkpoint-every");
    c.resume = a.flag("resume");
    c.allow_changed_data = a.flag("allow-changed-data");
    RG_CHECK(!c.allow_changed_data || c.resume, "ropegrad train", "--allow-changed-data goes with --resume");
    c.allow_changed_optimizer = a.flag("allow-changed-optimizer");
    RG_CHECK(!c.allow_changed_optimizer || c.resume, "ropegrad train", "--allow-changed-optimizer goes with --resume");
    c.stop_after = a.integer("stop-after");
    c.micro_batch = int_at_least(a, "micro-batch", 0);
#if ROPEGRAD_WITH_MPI
    c.bucket_mb = real_in(a, "bucket-mb", 0, 1e6, /*lo_open=*/true);
    c.zero = static_cast<int>(std::stoi(choice_of(a, "zero", {"0", "1"})));
    real_in(a, "dp-timeout", 0, 1e6, /*lo_open=*/true);
#else
    for (const char* name : {"bucket-mb", "zero", "dp-timeout"}) {
      RG_CHECK(!a.flag(name), "ropegrad train",
               "--{} is for data-parallel training over MPI, and this build has none (configure with "
               "-DROPEGRAD_MPI=ON, as scripts/dev.sh test-mpi does); --micro-batch works without it",
               name);
    }
#endif
  }
  c.steps = a.integer("steps");
  c.batch_size = a.integer("batch");
  c.lr = a.real("lr");
  c.min_lr = a.real("min-lr");
  // A default that does not fit a short run adapts (capped at --steps, so a
  // run that was valid before keeps its schedule, and its --resume); a value
  // given must fit.
  c.warmup = a.given("warmup") ? a.integer("warmup") : std::min<int64_t>(20, c.steps);
  c.weight_decay = a.real("weight-decay");
  c.beta1 = a.real("beta1");
  c.beta2 = a.real("beta2");
  c.clip = a.real("clip");
  c.eval_every = a.integer("eval-every");
  c.eval_batches = a.integer("eval-batches");
  c.seed = static_cast<uint64_t>(a.integer("seed"));
  c.out_dir = a.str("out");
  c.quiet = a.flag("quiet");
  return c;
}

std::string megabytes(int64_t bytes) { return fmt::format("{:.1f} MB", static_cast<double>(bytes) / 1e6); }

// ---- train -------------------------------------------------------------------------------------

int run_train(int argc, char** argv) {
  Args args("train", "Trains one transformer LM on one task and reports loss and the task's metric.",
            training_options(true));
  if (!args.parse(argc, argv)) return 0;
  tasks::TrainConfig config = train_config(args, true);
#if ROPEGRAD_WITH_MPI
  // Under mpirun every rank runs this; rank 0 alone writes and prints.
  std::unique_ptr<tasks::MpiGroup> group;
  if (tasks::MpiGroup::launched_by_mpirun()) group = std::make_unique<tasks::MpiGroup>(args.real("dp-timeout"));
  config.group = group.get();
  tasks::TrainResult r;
  try {
    r = tasks::train(config);
  } catch (const std::exception& e) {
    if (group == nullptr) throw;
    // One rank's error stops them all (the others would wait for it), each saying who it is.
    fmt::print(stderr, "{}error: {}\n", group->rank() > 0 ? fmt::format("rank {}: ", group->rank()) : "", e.what());
    std::fflush(stderr);
    if (group->size() > 1) tasks::MpiGroup::abort_all(1);
    return 1;
  }
  if (group != nullptr && group->rank() > 0) return 0;
#else
  const tasks::TrainResult r = tasks::train(config);
#endif
  if (r.already_finished_at > 0) {
    fmt::print("{}: the run already finished at step {} (--steps {}); nothing to do, its files are unchanged\n",
               config.out_dir, r.already_finished_at, config.steps);
    return 0;
  }
  fmt::print("{} / {}: {} parameters, eval loss {:.4f}, {} {:.4f}, {:.0f} tokens/s, peak memory {}\n", r.task,
             r.attention, r.parameters, r.final_loss, r.metric_name, r.final_metric, r.tokens_per_second,
             megabytes(r.peak_bytes));
  return 0;
}

// ---- sweep: train's own options for every grid point ------------------------------------------

tasks::TrainOptionReader train_option_reader() {
  tasks::TrainOptionReader reader;
  reader.parse = [](std::vector<std::string> words) {
    std::vector<char*> argv;
    for (std::string& w : words) argv.push_back(w.data());
    Args args("train", "", training_options(true));
    RG_CHECK(args.parse(static_cast<int>(argv.size()), argv.data()), "ropegrad sweep", "--help is no train setting");
    return train_config(args, true);
  };
  reader.is_flag = [](const std::string& name) -> std::optional<bool> {
    for (const Option& o : training_options(true)) {
      if (o.name == name) return o.is_flag;
    }
    return std::nullopt;
  };
  return reader;
}

// ---- compare -----------------------------------------------------------------------------------

int run_compare(int argc, char** argv) {
  Args args("compare",
            "Trains standard, W2 and triple-product attention on one task with the same budget and prints a\n"
            "Markdown table; with --out, also the loss curves (loss_curves.svg) and each run's files.",
            training_options(false));
  if (!args.parse(argc, argv)) return 0;
  const tasks::TrainConfig base = train_config(args, false);
  std::vector<tasks::TrainResult> results;
  for (const nn::AttentionKind kind : {nn::AttentionKind::Standard, nn::AttentionKind::W2, nn::AttentionKind::Triple}) {
    tasks::TrainConfig c = base;
    c.model.attention = kind;
    if (!base.out_dir.empty()) c.out_dir = base.out_dir + "/" + nn::attention_kind_name(kind);
    results.push_back(tasks::train(c));
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
  if (!base.out_dir.empty()) {
    std::vector<tasks::Series> series;
    for (const auto& r : results) {
      tasks::Series s{r.attention, {}};
      for (const auto& st : r.steps) s.points.emplace_back(static_cast<double>(st.step), st.loss);
      series.push_back(std::move(s));
    }
    const std::string plot = base.out_dir + "/loss_curves.svg";
    tasks::write_svg_plot(plot, series, fmt::format("{} task: training loss", base.task), "step", "loss");
    std::ofstream(base.out_dir + "/results.md") << table;
    fmt::print("\nwrote {} and {}/results.md\n", plot, base.out_dir);
  }
  return 0;
}

// ---- generate ----------------------------------------------------------------------------------

int run_generate(int argc, char** argv) {
  Args args("generate", "Samples tokens from a checkpoint written by `ropegrad train --out DIR`.",
            {{"checkpoint", "", "the run's directory (config.txt and checkpoint.safetensors)"},
             {"prompt", "0", "prompt token ids, space separated"},
             {"text", "", "prompt as text (byte-level models)"},
             {"max-new-tokens", "32", "tokens to generate"},
             {"temperature", "1.0", "sampling temperature (0: greedy)"},
             {"top-p", "1.0", "nucleus sampling mass"},
             {"stop-token", "-1", "stop after this token (-1: none)"},
             {"seed", "0", "sampling seed"}});
  if (!args.parse(argc, argv)) return 0;
  const std::string dir = args.str("checkpoint");
  RG_CHECK(!dir.empty(), "ropegrad generate", "--checkpoint DIR is required");
  const tasks::RunConfigFile run = tasks::read_run_config(dir + "/config.txt");
  nn::TransformerLM model(run.model);
  nn::load_checkpoint(dir + "/checkpoint.safetensors", model, nullptr);
  tasks::check_finite_weights(model, dir + "/checkpoint.safetensors");
  const int64_t vocab = model.config().vocab_size;
  std::vector<int64_t> prompt;
  const std::string text = args.str("text");
  // A run trained with a BPE tokenizer encodes the prompt and decodes the output with it.
  const std::string tokenizer_dir = tasks::tokenizer_of_run(dir);
  std::unique_ptr<tok::Tokenizer> tokenizer;
  if (!tokenizer_dir.empty()) {
    tokenizer = std::make_unique<tok::Tokenizer>(tok::load_tokenizer(tokenizer_dir));
    // The one it was trained with, or the output would silently change.
    tasks::check_tokenizer_of_run(dir, run.settings, tokenizer_dir, tokenizer->vocab_size(), vocab);
  }
  if (tokenizer != nullptr && !text.empty()) {
    for (int32_t id : tokenizer->encode_linear(text)) prompt.push_back(id);
  } else if (!text.empty()) {
    for (unsigned char ch : text) prompt.push_back(ch);
  } else {
    // Whole tokens only: "1 2 x 3" or "1.9" is an error, not a shorter prompt.
    std::istringstream in(args.str("prompt"));
    int position = 0;
    for (std::string token; in >> token; ++position) {
      int64_t id = -1;
      const auto [end, ec] = std::from_chars(token.data(), token.data() + token.size(), id);
      RG_CHECK(ec == std::errc() && end == token.data() + token.size(), "ropegrad generate",
               "--prompt: token {} ('{}') is not an integer id", position + 1, token);
      prompt.push_back(id);
    }
  }
  for (size_t i = 0; i < prompt.size(); ++i) {
    RG_CHECK(prompt[i] >= 0 && prompt[i] < vocab, "ropegrad generate",
             "prompt token {} is id {}, outside the model's vocabulary 0..{}", i + 1, prompt[i], vocab - 1);
  }
  Generator gen(static_cast<uint64_t>(args.integer("seed")));
  nn::GenerateOptions o;
  constexpr int64_t kMaxNewTokens = 1000000;
  o.max_new_tokens = args.integer("max-new-tokens");
  RG_CHECK(o.max_new_tokens >= 0 && o.max_new_tokens <= kMaxNewTokens, "ropegrad generate",
           "--max-new-tokens must be in 0..{}, got {}", kMaxNewTokens, o.max_new_tokens);
  if (o.max_new_tokens >= 1000) {  // long work shows progress (on stderr, so stdout stays the tokens)
    const auto start = std::chrono::steady_clock::now();
    o.on_token = [total = o.max_new_tokens, start](int64_t n) {
      if (n % 500 != 0 && n != total) return;
      const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
      fmt::print(stderr, "\rgenerate: {}/{} tokens, {:.0f} tokens/s", n, total, n / std::max(s, 1e-9));
      if (n == total) fmt::print(stderr, "\n");
    };
  }
  o.temperature = real_in(args, "temperature", 0, 1e6);
  o.top_p = real_in(args, "top-p", 0, 1, /*lo_open=*/true);
  if (args.integer("stop-token") >= 0) o.stop_token = args.integer("stop-token");
  o.generator = &gen;
  const std::vector<int64_t> out = model.generate(prompt, o);
  if (tokenizer != nullptr) {
    fmt::print("{}{}\n", text, tokenizer->decode(std::vector<int32_t>(out.begin(), out.end())));
  } else if (!text.empty()) {
    std::string s(out.begin(), out.end());
    fmt::print("{}{}\n", text, s);
  } else {
    fmt::print("{}\n", fmt::join(out, " "));
  }
  return 0;
}

// ---- gradcheck ---------------------------------------------------------------------------------

int run_gradcheck(int argc, char** argv) {
  Args args("gradcheck",
            "Checks the full Jacobian of every op (autograd/op_catalog.cpp) and module (nn/module_catalog.cpp)\n"
            "in float64 with torch.autograd.gradcheck's defaults (eps=1e-6, atol=1e-5, rtol=1e-3).\n"
            "Exit status: 0 when every case passes, 1 otherwise.",
            {{"op", "", "check only the cases of one op or module (e.g. matmul, rope)"}});
  if (!args.parse(argc, argv)) return 0;
  const std::string only = args.str("op");
  const auto start = std::chrono::steady_clock::now();
  int passed = 0, failed = 0;
  std::string failures;
  fmt::print("| {:<22} | {:<50} | {:>9} | {:<4} |\n", "op / module", "shapes", "max error", "");
  fmt::print("|{:-<24}|{:-<52}|{:-<11}|{:-<6}|\n", "", "", "", "");
  const auto report = [&](const std::string& op, const std::string& shapes, const GradcheckFn& fn,
                          const std::vector<Tensor>& inputs) {
    GradcheckResult r;
    try {
      r = gradcheck(fn, inputs);
    } catch (const Error& e) {
      r.report = e.what();
    }
    fmt::print("| {:<22} | {:<50} | {:>9.2e} | {:<4} |\n", op, shapes, r.max_abs_error, r.passed ? "ok" : "FAIL");
    if (r.passed) {
      ++passed;
    } else {
      ++failed;
      failures += fmt::format("\n{} {}:\n{}\n", op, shapes, r.report);
    }
  };
  for (const OpCase& c : op_catalog()) {
    if (only.empty() || c.op == only) report(c.op, c.shapes, c.fn, make_inputs(c));
  }
  for (const nn::ModuleCase& c : nn::module_catalog()) {
    if (!only.empty() && c.name != only) continue;
    const nn::ModuleCheck check = c.make();
    report(c.name, c.shapes, check.fn, check.inputs);
  }
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  if (!failures.empty()) fmt::print("{}", failures);
  fmt::print("\n{} passed, {} failed ({:.2f} s)\n", passed, failed, seconds);
  if (passed + failed == 0) {
    fmt::print(stderr, "ropegrad gradcheck: no op or module named '{}'\n", only);
    return 2;
  }
  return failed == 0 ? 0 : 1;
}

void print_usage() {
  std::puts(
      "usage: ropegrad <command> [options]\n"
      "\n"
      "commands:\n"
      "  train       train one transformer LM on one task (copy, recall, entailment, text)\n"
      "  compare     train standard, W2 and triple-product attention with the same budget\n"
      "  sweep       train a grid of settings (lr, batch, any train option) with the same budget\n"
      "  generate    sample from a trained checkpoint\n"
      "  gradcheck   float64 gradient check of every op and module\n"
      "  tokenize    train a BPE tokenizer, encode text to ids, decode ids to text\n"
      "  account     parameters, matmul FLOPs and training memory of a model shape\n"
      "  dp-simulate data-parallel scaling to N ranks from a run's or a shape's backward profile\n"
      "\n"
      "Run 'ropegrad <command> --help' for a command's options.");
}

}  // namespace

namespace ropegrad::tasks {
int run_tokenize(int argc, char** argv);  // tasks/tokenize_cli.cpp
int run_account(int argc, char** argv);   // tasks/account_cli.cpp
int run_dp_simulate(int argc, char** argv);  // tasks/dp_simulate_cli.cpp
}

int main(int argc, char** argv) {
  if (argc < 2 || !std::strcmp(argv[1], "--help") || !std::strcmp(argv[1], "-h")) {
    print_usage();
    return argc < 2 ? 2 : 0;
  }
  const std::string command = argv[1];
  try {
    if (command == "train") return run_train(argc - 2, argv + 2);
    if (command == "compare") return run_compare(argc - 2, argv + 2);
    if (command == "sweep") return ropegrad::tasks::run_sweep_command(argc - 2, argv + 2, train_option_reader());
    if (command == "generate") return run_generate(argc - 2, argv + 2);
    if (command == "gradcheck") return run_gradcheck(argc - 2, argv + 2);
    if (command == "tokenize") return ropegrad::tasks::run_tokenize(argc - 2, argv + 2);
    if (command == "account") return ropegrad::tasks::run_account(argc - 2, argv + 2);
    if (command == "dp-simulate") return ropegrad::tasks::run_dp_simulate(argc - 2, argv + 2);
  } catch (const Error& e) {  // the message starts with the op that refused ("train: ...")
    fmt::print(stderr, "error: {}\n", e.what());
    return 1;
  } catch (const std::exception& e) {  // a system error (file system, memory): still a message, not a crash
    fmt::print(stderr, "error: ropegrad {}: {}\n", command, e.what());
    return 1;
  }
  std::fprintf(stderr, "ropegrad: unknown command '%s'\n\n", command.c_str());
  print_usage();
  return 2;
}
