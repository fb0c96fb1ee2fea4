// Data-parallel scaling, simulated (docs/21-data-parallel.md): one rank's
// measured or estimated backward profile against a ring all-reduce network
// model, for N ranks at the same per-rank batch (weak scaling). Pure
// functions, no MPI: `ropegrad dp-simulate` (cli/dp_simulate_cli.cpp).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "nn/transformer.h"

namespace ropegrad::tasks {

// A bucket of gradients: its float32 elements and the seconds from the
// backward's start to the moment its last gradient is ready.
struct ProfileBucket {
  int64_t elements = 0;
  double ready_s = 0;
};

// One rank's step: everything before the last backward (the forwards, the
// earlier micro-batches), the last backward with its buckets, the optimizer.
struct BackwardProfile {
  std::string source;  // "run DIR (...)" or "shape ..."
  double before_backward_s = 0;
  double backward_s = 0;
  double optimizer_s = 0;
  std::vector<ProfileBucket> buckets;  // in the order they become ready
  int64_t elements() const;
};

// The wire: alpha seconds per message, beta bytes per second, bytes per
// gradient element sent (4: float32; ropegrad's exact sums send float64, 8).
struct NetworkModel {
  double latency_s = 5e-6;
  double bandwidth_bytes_per_s = 100e9 / 8;
  int wire_bytes = 4;
};

// A ring all-reduce of `bytes` over `ranks`: a reduce-scatter and an
// all-gather of N - 1 messages each, every rank sending 2 (N - 1) / N x bytes:
//   2 (N - 1) alpha + 2 (N - 1) / N x bytes / beta   (0 for one rank).
double ring_allreduce_seconds(double bytes, int64_t ranks, const NetworkModel& net);

struct SimulatedStep {
  int64_t ranks = 1;
  double step_s = 0;           // before + backward + exposed communication + optimizer
  double communication_s = 0;  // every bucket's all-reduce, end to end
  double exposed_s = 0;        // the part after the backward's end
  double overlap = 1;          // the hidden fraction of communication_s (1 when there is none)
  double efficiency = 1;       // one rank's step time / this step time
};

// One channel: bucket k's all-reduce starts at max(its ready time, the end
// of the previous one's). A bucket ready after the measured backward's end
// (started after it) moves the backward's end there.
SimulatedStep simulate_step(const BackwardProfile& profile, const NetworkModel& net, int64_t ranks);

// The profile of a run made with `ropegrad train --micro-batch b --out DIR`:
// the medians over its steps (step 1, the warm-up, left out when there are
// more) of dp.csv's before_backward_s, backward_s and optimizer_s and of each
// bucket's ready_s in dp_buckets.csv. Errors name the file and the line.
BackwardProfile profile_from_run(const std::string& dir);

// The profile of a model shape from nn/accounting.h's matmul FLOPs at a
// sustained `gflops`: the backward runs lm_head, then the blocks from the
// last to the first (in each, the components in reverse model order, the
// norms at the block's end), and the embedding's scatter-add last (counted
// as no time). The parameters become buckets as GradientBuckets makes them
// (dist/grad_buckets.h): in that order, a bucket closing once it holds
// `bucket_bytes` of float32. The optimizer: AdamW reads and writes about
// 28 bytes a parameter (weight, gradient, m, v) at `memory_gbytes_per_s`.
BackwardProfile profile_from_shape(const nn::TransformerConfig& config, int64_t batch, int64_t context, double gflops,
                                   int64_t bucket_bytes, double memory_gbytes_per_s);

}  // namespace ropegrad::tasks
