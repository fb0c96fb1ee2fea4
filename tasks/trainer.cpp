#include "tasks/trainer.h"
#include "tasks/token_text_task.h"

#include <unistd.h>

#include <chrono>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <map>

#include "nn/checkpoint.h"
#include "nn/optim.h"
#include "nn/schedule.h"

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
  double loss = 0, metric = 0;
  for (int64_t i = 0; i < batches; ++i) {
    Generator gen(mix(seed, kEvalStream + static_cast<uint64_t>(i)));
    const Batch b = text != nullptr     ? text->eval_batch(batch_size, gen)
                    : tokens != nullptr ? tokens->eval_batch(batch_size, gen)
                                        : task.batch(batch_size, gen);
    const Tensor logits = model.forward(b.inputs);
    loss += nn::cross_entropy(logits, b.targets, kIgnore).item<double>();
    metric += task.metric(logits, b);
  }
  model.train(was_training);
  return {0, loss / static_cast<double>(batches), metric / static_cast<double>(batches)};
}

void write_model_config(const std::string& path, const TrainConfig& c, const Task& task) {
  std::ofstream out(path);
  RG_CHECK(out.good(), "train", "cannot write '{}'", path);
  const nn::TransformerConfig& m = c.model;
  out << fmt::format(
      "task={}\nvocab_size={}\ncontext_length={}\nd_model={}\nnum_layers={}\nnum_heads={}\nd_ff={}\n"
      "rope_theta={}\nattention={}\nsigma={}\ntie_embeddings={}\n",
      task.name(), task.vocab_size(), task.seq_len(), m.d_model, m.num_layers, m.num_heads, m.d_ff, m.rope_theta,
      nn::attention_kind_name(m.attention), m.sigma == nn::SigmaMode::Scalar ? "scalar" : "vector",
      m.tie_embeddings ? 1 : 0);
  // Absolute, so `generate` finds the tokenizer from any directory.
  if (!c.task_options.tokenizer_dir.empty())
    out << "tokenizer=" << std::filesystem::absolute(c.task_options.tokenizer_dir).string() << "\n";
}

nn::TransformerConfig read_model_config(const std::string& path) {
  std::ifstream in(path);
  RG_CHECK(in.good(), "generate", "cannot open '{}' (written by `ropegrad train --out DIR`)", path);
  std::map<std::string, std::string> kv;
  for (std::string line; std::getline(in, line);) {
    const auto eq = line.find('=');
    if (eq != std::string::npos) kv[line.substr(0, eq)] = line.substr(eq + 1);
  }
  const auto get = [&](const std::string& key) {
    RG_CHECK(kv.count(key) > 0, "generate", "'{}' has no '{}' entry", path, key);
    return kv.at(key);
  };
  nn::TransformerConfig m;
  m.vocab_size = std::stoll(get("vocab_size"));
  m.context_length = std::stoll(get("context_length"));
  m.d_model = std::stoll(get("d_model"));
  m.num_layers = std::stoll(get("num_layers"));
  m.num_heads = std::stoll(get("num_heads"));
  m.d_ff = std::stoll(get("d_ff"));
  m.rope_theta = std::stod(get("rope_theta"));
  m.attention = nn::parse_attention_kind(get("attention"));
  m.sigma = get("sigma") == "vector" ? nn::SigmaMode::Vector : nn::SigmaMode::Scalar;
  m.tie_embeddings = get("tie_embeddings") == "1";
  return m;
}

TrainResult train(const TrainConfig& c, std::FILE* progress) {
  RG_CHECK(c.steps > 0 && c.batch_size > 0, "train", "steps and batch_size must be positive, got {} and {}", c.steps,
           c.batch_size);
  RG_CHECK(c.eval_every > 0 && c.eval_batches > 0, "train", "eval_every and eval_batches must be positive");
  RG_CHECK(c.warmup >= 0 && c.warmup <= c.steps, "train", "warmup ({}) must be between 0 and steps ({})", c.warmup,
           c.steps);
  RG_CHECK(!c.resume || !c.out_dir.empty(), "train", "--resume needs --out DIR (where the checkpoint is)");
  const std::unique_ptr<Task> task = make_task(c.task, c.task_options);
  nn::TransformerConfig mc = c.model;
  mc.vocab_size = task->vocab_size();
  mc.context_length = task->seq_len();

  const MemoryStats before = memory_stats();
  reset_peak_memory();
  Generator init(c.seed);
  nn::TransformerLM model(mc, &init);
  model.train();
  nn::AdamW opt(model.parameters(), c.lr, {c.beta1, c.beta2}, 1e-8, c.weight_decay);

  TrainResult result;
  result.task = task->name();
  result.metric_name = task->metric_name();
  result.attention = nn::attention_kind_name(mc.attention);
  result.parameters = model.num_parameters();

  int64_t first_step = 1;
  const std::string checkpoint = c.out_dir.empty() ? "" : c.out_dir + "/checkpoint.safetensors";
  if (!c.out_dir.empty()) {
    std::error_code error;
    std::filesystem::create_directories(c.out_dir, error);
    RG_CHECK(!error && std::filesystem::is_directory(c.out_dir), "train", "cannot create the output directory '{}': {}",
             c.out_dir, error ? error.message() : "a file of that name exists");
  }
  if (c.resume) {
    nn::StateDict opt_state;
    first_step = nn::load_checkpoint(checkpoint, model, &opt_state) + 1;
    opt.load_state_dict(opt_state);
  }
  std::FILE* csv = nullptr;
  if (!c.out_dir.empty()) {
    write_model_config(c.out_dir + "/config.txt", c, *task);
    const std::string csv_path = c.out_dir + "/metrics.csv";
    // On resume keep the rows up to the checkpoint: a run killed after its
    // last checkpoint may have logged steps that are now computed again.
    std::vector<std::string> kept;
    if (c.resume) {
      std::ifstream old(csv_path);
      for (std::string line; std::getline(old, line);) {
        if (line.rfind("step,", 0) == 0 || line.empty()) continue;
        if (std::stoll(line.substr(0, line.find(','))) < first_step) kept.push_back(line);
      }
    }
    csv = std::fopen(csv_path.c_str(), "w");
    RG_CHECK(csv != nullptr, "train", "cannot write '{}'", csv_path);
    std::fputs("step,loss,lr,grad_norm,eval_loss,eval_metric\n", csv);
    for (const std::string& line : kept) fmt::print(csv, "{}\n", line);
  }

  const bool live = !c.quiet && progress != nullptr && isatty(fileno(progress));
  const int64_t last_step = c.stop_after > 0 ? std::min(c.stop_after, c.steps) : c.steps;
  const int64_t tokens_per_step = c.batch_size * task->seq_len();
  double train_seconds = 0;
  const auto start = std::chrono::steady_clock::now();
  for (int64_t step = first_step; step <= last_step; ++step) {
    const auto t0 = std::chrono::steady_clock::now();
    Generator gen(mix(c.seed, static_cast<uint64_t>(step)));
    const Batch b = task->batch(c.batch_size, gen);
    // Dropout draws from the default generator: seed it from (seed, step) too,
    // so a resumed run repeats the same masks.
    manual_seed(mix(c.seed ^ 0xD20D0D0Dull, static_cast<uint64_t>(step)));
    opt.set_lr(nn::cosine_lr(step, c.lr, c.min_lr, c.warmup, c.steps));
    opt.zero_grad();
    const Tensor loss = nn::cross_entropy(model.forward(b.inputs), b.targets, kIgnore);
    backward(loss);
    const double grad_norm = c.clip > 0 ? nn::clip_grad_norm_(model.parameters(), c.clip) : 0.0;
    opt.step();
    const double loss_value = loss.item<double>();
    RG_CHECK(std::isfinite(loss_value), "train", "the loss became {} at step {} (lr {}); lower --lr", loss_value, step,
             opt.lr());
    train_seconds += std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    result.steps.push_back({step, loss_value, opt.lr(), grad_norm});

    const bool eval_now = step % c.eval_every == 0 || step == c.steps;
    EvalRecord ev{step, NAN, NAN};
    if (eval_now) {
      ev = evaluate(model, *task, c.eval_batches, c.batch_size, c.seed);
      ev.step = step;
      result.evals.push_back(ev);
    }
    if (csv != nullptr) {
      fmt::print(csv, "{},{:.6f},{:.6g},{:.6g},{},{}\n", step, loss_value, opt.lr(), grad_norm,
                 eval_now ? fmt::format("{:.6f}", ev.loss) : "", eval_now ? fmt::format("{:.6f}", ev.metric) : "");
    }
    const double done = static_cast<double>(step - first_step + 1);
    const double tok_s = static_cast<double>(tokens_per_step) * done / std::max(train_seconds, 1e-9);
    const double eta = train_seconds / done * static_cast<double>(last_step - step);
    const std::string metric = result.evals.empty() ? "-" : fmt::format("{:.4f}", result.evals.back().metric);
    if (live) {
      fmt::print(progress, "\r{} {:<8} step {:>5}/{} | loss {:.4f} | {} {} | {:.0f} tok/s | ETA {}   ",
                 task->name(), result.attention, step, c.steps, loss_value, task->metric_name(), metric, tok_s,
                 format_duration(eta));
      std::fflush(progress);
    } else if (!c.quiet && progress != nullptr && eval_now) {
      fmt::print(progress, "{} {:<8} step {:>5}/{} | loss {:.4f} | eval loss {:.4f} | {} {:.4f} | {:.0f} tok/s\n",
                 task->name(), result.attention, step, c.steps, loss_value, ev.loss, task->metric_name(), ev.metric,
                 tok_s);
    }
    if (!checkpoint.empty() && ((c.checkpoint_every > 0 && step % c.checkpoint_every == 0) || step == last_step)) {
      nn::save_checkpoint(checkpoint, model, opt.state_dict(), step);
      if (csv != nullptr) std::fflush(csv);  // the log is at least as far as the checkpoint
    }
  }
  if (live) std::fputs("\n", progress);
  if (csv != nullptr) std::fclose(csv);

  result.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  const auto ran = static_cast<double>(result.steps.size());
  result.seconds_per_step = ran > 0 ? train_seconds / ran : 0;
  result.tokens_per_second = train_seconds > 0 ? static_cast<double>(tokens_per_step) * ran / train_seconds : 0;
  result.peak_bytes = memory_stats().peak_bytes - before.current_bytes;
  if (!result.evals.empty()) {
    result.final_loss = result.evals.back().loss;
    result.final_metric = result.evals.back().metric;
  }
  if (!c.out_dir.empty()) {
    std::ofstream summary(c.out_dir + "/summary.json");
    summary << fmt::format(
        "{{\n  \"task\": \"{}\",\n  \"attention\": \"{}\",\n  \"parameters\": {},\n  \"steps\": {},\n  \"final_eval_step\": {},\n"
        "  \"final_eval_loss\": {:.6f},\n  \"metric\": \"{}\",\n  \"final_metric\": {:.6f},\n"
        "  \"peak_bytes\": {},\n  \"tokens_per_second\": {:.1f},\n  \"seconds_per_step\": {:.6f},\n  \"seed\": {}\n}}\n",
        result.task, result.attention, result.parameters, last_step, result.evals.empty() ? 0 : result.evals.back().step,
        result.final_loss, result.metric_name,
        result.final_metric, result.peak_bytes, result.tokens_per_second, result.seconds_per_step, c.seed);
  }
  return result;
}

}  // namespace ropegrad::tasks
