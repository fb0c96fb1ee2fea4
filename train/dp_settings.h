// Data parallelism's start-up check and its per-step record (rank 0's dp.csv).
#pragma once

#include <cstdio>
#include <string>
#include <vector>

#include "dist/process_group.h"
#include "train/trainer.h"

namespace ropegrad::tasks {

// The settings every rank must share, one key=value a line: config.txt's
// (model, seed, batch, schedule, data and its size), the data-parallel
// ones (micro_batch, bucket_mb, zero) and --out (absolute: rank 0 alone
// writes it, so a rank given another would be ignored).
std::string dp_settings_text(const TrainConfig& config, const Task& task);

// Every rank's text against rank 0's: on a difference, every rank raises
//   data parallel: rank 1 has --seed 2, rank 0 has --seed 0
// naming the first rank and the first setting that differ.
void check_same_settings(ProcessGroup& group, const std::string& text);

// dp.csv (a row a step: the time split, the bytes, and the profile of a
// scaling simulation: before_backward_s, backward_s, optimizer_s) and dp_buckets.csv (a
// row a bucket a step: when its sum started, from the last backward's start,
// the data of a later scaling simulation), written by rank 0 with --out.
class DpLog {
 public:
  DpLog(const std::string& dir, bool resume, int64_t first_step, bool writes);
  ~DpLog();
  DpLog(const DpLog&) = delete;
  DpLog& operator=(const DpLog&) = delete;

  void row(int64_t step, const StepTimes& t, int64_t bytes, int ranks, const std::vector<double>& ready_seconds,
           const std::vector<int64_t>& bucket_elements);
  void close();
  // Means over this call's steps, for summary.json.
  StepTimes mean_times() const;
  double mean_bytes() const { return steps_ > 0 ? bytes_ / static_cast<double>(steps_) : 0; }

 private:
  std::FILE* steps_file_ = nullptr;
  std::FILE* buckets_file_ = nullptr;
  StepTimes sum_;
  double bytes_ = 0;
  int64_t steps_ = 0;
};

// 2 (N - 1) / N x bytes: what each rank sends in a ring all-reduce of `bytes`.
double ring_bytes(double bytes, int ranks);

}  // namespace ropegrad::tasks
