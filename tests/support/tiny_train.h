// The smallest training run the tests make: the copy task with vocabulary 8
// and sequences of 8, D 16, one layer, two heads; 12 steps of batch 8.
#pragma once

#include "nn/transformer.h"
#include "train/trainer.h"

namespace ropegrad::testing {

inline tasks::TrainConfig tiny_train_config(nn::AttentionKind kind = nn::AttentionKind::Standard) {
  tasks::TrainConfig c;
  c.task = "copy";
  c.task_options.vocab = 8;
  c.task_options.length = 8;
  c.model.d_model = 16;
  c.model.num_layers = 1;
  c.model.num_heads = 2;
  c.model.d_ff = 32;
  c.model.attention = kind;
  c.steps = 12;
  c.batch_size = 8;
  c.warmup = 3;
  c.eval_every = 4;
  c.eval_batches = 2;
  c.seed = 5;
  c.quiet = true;
  return c;
}

}  // namespace ropegrad::testing
