// What a training run is given (TrainConfig) and what it gives back
// (TrainResult, its steps and evaluations): the settings `ropegrad train`'s
// flags fill (cli/train_cli.cpp), a sweep's points vary (train/sweep.h) and
// config.txt records (train/run_files.h). The loop itself: train/trainer.h.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "nn/transformer.h"
#include "dist/process_group.h"
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
  // Micro-batches and data parallelism (dist/grad_buckets.h, dist/mpi/data_parallel.h).
  // > 0: the step is batch_size / micro_batch micro-batches of micro_batch rows,
  // each its own forward and backward, their gradients summed in float64
  // and rounded once; the same bits with any number of processes. 0: one
  // backward over the whole batch (the plain step, train_step).
  int64_t micro_batch = 0;
  double bucket_mb = 1.0;         // float32 gradient megabytes per bucket summed across processes
  int zero = 0;                   // 1: AdamW's state sharded across processes (dist/zero_adamw.h)
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

}  // namespace ropegrad::tasks
