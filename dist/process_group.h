// What a training step needs from the processes that share it: their number,
// this one's rank, and sums and gathers across them. One process is
// LocalGroup (every call is a copy or nothing); several are MpiGroup
// (dist/mpi/data_parallel.h, built with -DROPEGRAD_MPI=ON). The trainer sees only
// this interface, so it compiles without mpi.h.
#pragma once

#include <algorithm>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace ropegrad::tasks {

// Where a step's time went, seconds (dist/mpi/data_parallel.h explains each).
struct StepTimes {
  double compute = 0;        // forward and backward, this rank's own work
  double communication = 0;  // inside MPI calls that start or do a transfer
  double waiting = 0;        // blocked in the final waits for the sums
  double communication_in_backward = 0;  // the part of `communication` inside the hooks (not compute)
  // The profile of a scaling simulation (train/dp_simulate.h):
  double before_backward = 0;  // from the step's start to its last backward's (forwards, earlier micro-batches)
  double backward = 0;         // the last micro-batch's backward
  double optimizer = 0;        // clipping and the optimizer's step (ZeRO-1: with its gather)
};

class ProcessGroup {
 public:
  virtual ~ProcessGroup() = default;
  virtual int rank() const = 0;
  virtual int size() const = 0;

  // Starts summing data[0..n) over every rank, in place: bucket `bucket` of
  // step `step` (named in a timeout's message). Returns at once.
  virtual void start_sum(double* data, int64_t n, int bucket, int64_t step) = 0;
  // Waits until every started sum is complete.
  virtual void wait_sums(int64_t step) = 0;
  // all[r * n + i] = rank r's mine[i], on every rank (blocking).
  virtual void all_gather(const double* mine, int64_t n, double* all, const std::string& what) = 0;
  // Each rank's text, on every rank (blocking): the start-up settings check.
  virtual std::vector<std::string> all_gather_text(const std::string& mine) = 0;
  // out = the concatenation of every rank's slice, rank r's slice being
  // counts[r] floats; mine is this rank's (blocking).
  virtual void all_gather_floats(const float* mine, const std::vector<int64_t>& counts, float* out,
                                 const std::string& what) = 0;
  // rank 0's value on every rank: a decision all must take alike (the time budget).
  virtual bool rank0_says(bool mine) = 0;

  // Bytes handed to the sums since the last call, and the time split.
  virtual int64_t take_bytes_summed() = 0;
  virtual StepTimes take_times() = 0;
  // Test only (tests/mpi/dp_test.sh): rank 1 dies or hangs at a step an
  // environment variable names (dist/mpi/data_parallel.cpp).
  virtual void maybe_die(int64_t /*step*/) {}
};

// One process: the sums are the data itself.
class LocalGroup : public ProcessGroup {
 public:
  int rank() const override { return 0; }
  int size() const override { return 1; }
  void start_sum(double*, int64_t n, int, int64_t) override { bytes_ += n * 8; }
  void wait_sums(int64_t) override {}
  void all_gather(const double* mine, int64_t n, double* all, const std::string&) override {
    std::copy(mine, mine + n, all);
  }
  std::vector<std::string> all_gather_text(const std::string& mine) override { return {mine}; }
  void all_gather_floats(const float* mine, const std::vector<int64_t>& counts, float* out,
                         const std::string&) override {
    std::copy(mine, mine + counts.at(0), out);
  }
  bool rank0_says(bool mine) override { return mine; }
  int64_t take_bytes_summed() override { return std::exchange(bytes_, 0); }
  StepTimes take_times() override { return {}; }

 private:
  int64_t bytes_ = 0;
};

}  // namespace ropegrad::tasks
