// Data-parallel training over MPI: `mpirun -np N ropegrad train ...`.
//
// MpiGroup is the ProcessGroup (dist/process_group.h) of the ranks of
// MPI_COMM_WORLD. The design, in the files that carry it out:
//   train/micro_batch_step.cpp  the step: rank r runs micro-batches
//                               [r M/N, (r+1) M/N) of the global batch
//   dist/grad_buckets.h        float64 sums per parameter, started bucket by
//                               bucket from the gradient-ready hooks
//   dist/zero_adamw.h          ZeRO-1: AdamW's state sharded by element
//   train/dp_settings.h         the start-up check that every rank has the same settings
// Only rank 0 writes the run's files; the others print only errors.
//
// Every wait polls its request (MPI_Test) until a deadline, the timeout:
// a rank that died or hung makes the others stop with
//   data parallel: rank R waited S s for WHAT (bucket k of step t): a rank has died or hung; stopping
// and MPI_Abort, instead of hanging. The polling also drives the sums
// forward while the backward runs (OpenMPI progresses a non-blocking
// collective only inside MPI calls): each hook polls the sums started so far.
//
// Time per step: communication is the time inside the MPI calls that start
// or poll a transfer; waiting is the time blocked in the final waits, after
// the backward; compute is the rest of the micro-batches' forward and backward.
#pragma once

#include <mpi.h>

#include <string>
#include <vector>

#include "dist/process_group.h"

namespace ropegrad::tasks {

class MpiGroup : public ProcessGroup {
 public:
  // MPI_Init (once) and the timeout of every wait, seconds.
  explicit MpiGroup(double timeout_seconds);
  ~MpiGroup() override;  // MPI_Finalize
  MpiGroup(const MpiGroup&) = delete;
  MpiGroup& operator=(const MpiGroup&) = delete;

  // True when this process was started by mpirun (OpenMPI's or PMIx's variables are set).
  static bool launched_by_mpirun();
  // Stops every rank (after an error on this one).
  [[noreturn]] static void abort_all(int code);

  int rank() const override { return rank_; }
  int size() const override { return size_; }
  void start_sum(double* data, int64_t n, int bucket, int64_t step) override;
  void wait_sums(int64_t step) override;
  void all_gather(const double* mine, int64_t n, double* all, const std::string& what) override;
  std::vector<std::string> all_gather_text(const std::string& mine) override;
  void all_gather_floats(const float* mine, const std::vector<int64_t>& counts, float* out,
                         const std::string& what) override;
  bool rank0_says(bool mine) override;
  int64_t take_bytes_summed() override;
  StepTimes take_times() override;
  void maybe_die(int64_t step) override;

 private:
  struct Pending {
    MPI_Request request;
    int bucket;
    int64_t step;
  };
  void poll();  // MPI_Test on every pending sum: progress during the backward
  void wait_for(MPI_Request& request, const std::string& what, double* seconds);  // with the deadline

  int rank_ = 0, size_ = 1;
  double timeout_;
  std::vector<Pending> pending_;
  int64_t bytes_ = 0;
  StepTimes times_;
  int64_t die_at_ = 0;   // ROPEGRAD_DP_TEST_DIE_AT_STEP (rank 1 only): exits there
  int64_t hang_at_ = 0;  // ROPEGRAD_DP_TEST_HANG_AT_STEP (rank 1 only): sleeps there forever
};

}  // namespace ropegrad::tasks
