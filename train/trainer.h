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

#include "optim/optim.h"
#include "nn/transformer.h"
#include "dist/process_group.h"
#include "tasks/synthetic.h"
#include "train/train_config.h"

namespace ropegrad::tasks {

// One training run (train/train_config.h): in named steps, TrainingRun in
// train/trainer.cpp (set-up, --resume, each step, the result).
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
// `--resume` must match (train/run_files.h reads it strictly).
std::string model_config_text(const TrainConfig& config, const Task& task);
nn::TransformerConfig read_model_config(const std::string& path);

}  // namespace ropegrad::tasks
