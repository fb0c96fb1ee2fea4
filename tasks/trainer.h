// The training loop: AdamW, cosine schedule with warmup, global-norm
// clipping, periodic evaluation, checkpoint and exact resume.
//
// Deterministic for a given seed: the model is initialised from the seed,
// and the batch of step t is drawn from a generator seeded with (seed, t), so
// a run stopped at step k and resumed from its checkpoint computes exactly
// the losses of an uninterrupted run.
#pragma once

#include <cstdio>
#include <string>
#include <vector>

#include "nn/optim.h"
#include "nn/transformer.h"
#include "tasks/synthetic.h"

namespace ropegrad::tasks {

struct TrainConfig {
  std::string task = "copy";
  TaskOptions task_options;
  nn::TransformerConfig model;  // vocab_size and context_length are taken from the task
  int64_t steps = 300;
  int64_t batch_size = 32;
  double lr = 3e-3;
  double min_lr = 3e-4;
  int64_t warmup = 20;
  double weight_decay = 0.01;
  double beta1 = 0.9, beta2 = 0.98;
  double clip = 1.0;
  int64_t eval_every = 50;
  int64_t eval_batches = 4;
  uint64_t seed = 0;
  std::string out_dir;           // when set: metrics.csv, summary.json, config.txt, checkpoint.safetensors
  int64_t checkpoint_every = 0;  // 0: only at the end (when out_dir is set)
  bool resume = false;           // continue from out_dir/checkpoint.safetensors
  bool allow_changed_data = false;  // --resume on data whose size or checksum changed (said, not silent)
  bool allow_changed_optimizer = false;  // --resume with other beta1, beta2, weight_decay (said, not silent)
  int64_t stop_after = 0;        // > 0: stop after this step (as if interrupted)
  bool quiet = false;            // no progress line
};

struct StepRecord {
  int64_t step;
  double loss, lr, grad_norm;
};
struct EvalRecord {
  int64_t step;
  double loss, metric;
};

struct TrainResult {
  std::string task, metric_name, attention;
  std::vector<StepRecord> steps;  // the steps this call ran
  std::vector<EvalRecord> evals;
  int64_t parameters = 0;
  double final_loss = 0, final_metric = 0;  // of the last evaluation
  int64_t peak_bytes = 0;                   // most tensor memory held at once (model, optimizer, activations)
  double tokens_per_second = 0, seconds_per_step = 0, seconds = 0;
  int64_t already_finished_at = 0;  // > 0: --resume found the run finished at this step; nothing ran
  std::string notices;              // what --resume said (continuing on changed data), also printed
};

TrainResult train(const TrainConfig& config, std::FILE* progress = stderr);

// One optimisation step of `model` on batch b at step `step` (1-based): the
// cosine schedule's learning rate, zero_grad, forward, cross-entropy (targets
// kIgnore skipped), backward, clipping to config.clip (0: off), the update.
// Returns loss, lr and the gradient norm before clipping. A loss or gradient
// that is not finite is an Error naming it, raised before the update.
StepRecord train_step(nn::TransformerLM& model, nn::AdamW& opt, const Batch& b, int64_t step, const TrainConfig& config);

// Evaluation loss and metric of a model on a task's fixed evaluation batches.
EvalRecord evaluate(nn::TransformerLM& model, const Task& task, int64_t batches, int64_t batch_size, uint64_t seed);

// An Error from `op` naming `what` (the checkpoint) and the first parameter
// holding NaN or infinity: the checkpoint holds a non-finite value.
void check_finite_weights(const nn::Module& model, const std::string& what, const std::string& op = "generate");

// config.txt: the model `ropegrad generate` rebuilds and the settings
// `--resume` must match (tasks/run_files.h reads it strictly).
std::string model_config_text(const TrainConfig& config, const Task& task);
nn::TransformerConfig read_model_config(const std::string& path);

}  // namespace ropegrad::tasks
