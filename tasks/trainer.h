// The training loop: AdamW, cosine schedule with warmup, global-norm
// clipping, periodic evaluation, checkpoint and exact resume.
//
// Deterministic for a given seed: the model is initialised from the seed,
// and the batch of step t is drawn from a generator seeded with (seed, t), so
// a run stopped at step k and resumed from its checkpoint computes exactly
// the losses of an uninterrupted run.
#pragma once

#include <cstdio>
#include <functional>
#include <string>
#include <vector>

#include "nn/optim.h"
#include "nn/transformer.h"
#include "tasks/process_group.h"
#include "tasks/synthetic.h"

namespace ropegrad::tasks {

struct StepRecord {
  int64_t step;
  double loss, lr, grad_norm;
};
struct EvalRecord {
  int64_t step;
  double loss, metric;
};

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
  std::string out_dir;           // when set: metrics.csv, time.csv, summary.json, config.txt, checkpoint.safetensors
  int64_t checkpoint_every = 0;  // 0: only at the end (when out_dir is set)
  bool resume = false;           // continue from out_dir/checkpoint.safetensors
  bool allow_changed_data = false;  // --resume on data whose size or checksum changed (said, not silent)
  bool allow_changed_optimizer = false;  // --resume with other beta1, beta2, weight_decay (said, not silent)
  int64_t stop_after = 0;        // > 0: stop after this step (as if interrupted)
  bool quiet = false;            // no progress line
  // > 0: the run ends after the step at which its training time (the steps'
  // own seconds, across resumes: DIR/time.csv) reaches this many seconds;
  // that step is evaluated and checkpointed like the last one.
  double time_budget = 0;
  // > 0: a run that diverges (see loss_diverged) stops there and says so in
  // TrainResult::diverged_at instead of failing with an Error.
  double divergence_factor = 0;
  // Micro-batches and data parallelism (tasks/grad_buckets.h, tasks/data_parallel.h).
  // > 0: the step is batch_size / micro_batch micro-batches of micro_batch rows,
  // each its own forward and backward, their gradients summed in float64
  // and rounded once; the same bits with any number of processes. 0: one
  // backward over the whole batch (the plain step, train_step).
  int64_t micro_batch = 0;
  double bucket_mb = 1.0;         // float32 gradient megabytes per bucket summed across processes
  int zero = 0;                   // 1: AdamW's state sharded across processes (tasks/zero_adamw.h)
  ProcessGroup* group = nullptr;  // the processes sharing each step; null: this one alone
  // Called after each step: the step, its evaluation (null when there was
  // none) and the training seconds so far. `ropegrad sweep` shows progress with it.
  std::function<void(const StepRecord&, const EvalRecord*, double)> on_step;
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
  int64_t last_step = 0;            // the last step this call completed
  int64_t diverged_at = 0;          // > 0: the run diverged at this step and stopped (divergence_factor > 0)
  std::string diverged_because;     // why, in words
  std::string notices;              // what --resume said (continuing on changed data), also printed
};

TrainResult train(const TrainConfig& config, std::FILE* progress = stderr);

// The files and directories a run reads (--text, --tokenizer, --data and its
// validation file; empty strings for those it does not use): what its --out
// may not be, contain or lie inside.
std::vector<std::string> train_inputs(const TrainConfig& config);

// The settings `train` refuses before it builds anything (steps, batch, warmup
// beyond steps, lr, clip, ...; a number that config.txt's rules would refuse
// on --resume): an Error naming the setting and its value.
void check_train_config(const TrainConfig& config);

// Everything `train` refuses before its first step, without training:
// check_train_config, micro-batches that do not divide the batch, a model
// shape the model refuses (d_model not a multiple of the heads, an odd head
// dimension with RoPE) and a model too large for this machine, with `task`
// built from the config (make_task: the task's own checks, a --text too short
// for its context, ...). `ropegrad sweep` runs it on every point before the
// first one trains.
void check_train_setup(const TrainConfig& config, const Task& task);

// Divergence, with TrainConfig::divergence_factor F > 0: a run has diverged
// at step t when step t's loss or gradient is not finite (the step raises a
// DivergedError), or when its training loss, or its evaluation loss at an
// evaluation step, is not finite or exceeds F times the training loss of
// step 1 (the untrained model's, near ln V: F = 2 is twice as bad as that).
bool loss_diverged(double loss, double first_loss, double factor);

// What check_step and the weight check raise: a loss, gradient or weight
// that is not finite. An Error like any other unless divergence_factor > 0.
class DivergedError : public Error {
 public:
  using Error::Error;
};

// One optimisation step of `model` on batch b at step `step` (1-based): the
// cosine schedule's learning rate, zero_grad, forward, cross-entropy (targets
// kIgnore skipped), backward, clipping to config.clip (0: off), the update.
// Returns loss, lr and the gradient norm before clipping. A loss or gradient
// that is not finite is an Error naming it, raised before the update.
StepRecord train_step(nn::TransformerLM& model, nn::AdamW& opt, const Batch& b, int64_t step, const TrainConfig& config);

// A step of micro-batches (TrainConfig::micro_batch): rank r of N runs
// micro-batches [r M/N, (r+1) M/N) of the M in `b`, rows [m b', (m+1) b')
// each; their gradients are summed by `buckets` across the ranks, then the
// step clips and updates as train_step does. The loss is the mean of the M
// micro-batch losses (each its micro-batch's mean), summed in order m = 0..M-1.
// dropout_seed + m seeds micro-batch m's dropout. `times` gets the compute part.
class GradientBuckets;
StepRecord train_step_micro_batches(nn::TransformerLM& model, nn::Optimizer& opt, const Batch& b, int64_t step,
                                    const TrainConfig& config, GradientBuckets& buckets, ProcessGroup& group,
                                    uint64_t dropout_seed, StepTimes* times = nullptr);

// The micro-batches of a batch of `batch` rows split over `ranks`: M = batch /
// micro_batch per step, M / ranks per rank; an Error naming B, b, M and N
// when either does not divide.
int64_t micro_batches_per_step(int64_t batch, int64_t micro_batch, int ranks);

// A loss or gradient norm that is not finite: name the first tensor that went
// wrong (a weight, else a gradient, else the loss itself), before the update.
void check_step(const nn::TransformerLM& model, int64_t step, double lr, double loss, double grad_norm);

// Evaluation loss and metric of a model on a task's fixed evaluation batches.
EvalRecord evaluate(nn::TransformerLM& model, const Task& task, int64_t batches, int64_t batch_size, uint64_t seed);

// An Error from `op` naming `what` (the checkpoint) and the first parameter
// holding NaN or infinity: the checkpoint holds a non-finite value.
void check_finite_weights(const nn::Module& model, const std::string& what, const std::string& op = "generate");

// The line `train` prints before the first step of a model with an ablation
// switch off its default (norm, position, ffn): the switches, the parameters,
// and the feed-forward's parameters per block beside the other kind's at its
// default width (SiLU at 4 D against SwiGLU at 8/3 D, the matched pair).
std::string ablation_header(const nn::TransformerConfig& model, int64_t parameters);

// config.txt: the model `ropegrad generate` rebuilds and the settings
// `--resume` must match (tasks/run_files.h reads it strictly).
std::string model_config_text(const TrainConfig& config, const Task& task);
nn::TransformerConfig read_model_config(const std::string& path);

}  // namespace ropegrad::tasks
