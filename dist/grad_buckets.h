// A step's gradient summed over micro-batches and processes in float64.
//
// Why float64: a data-parallel run over N processes must give the weights a
// one-process run gives, bit for bit. Each micro-batch's float32 gradient is
// added into a float64 sum per element (on this rank), the sums are summed
// across ranks (MPI_SUM over MPI_DOUBLE), divided by the number of
// micro-batches M and rounded to float32 once. A sum of M float32 values is
// exact in float64 while their exponents span fewer than 29 - log2(M) bits
// (53-bit significand against 24), and an exact sum does not depend on the
// order of its terms: neither on which rank held which micro-batch nor on
// the order MPI_Allreduce adds in (MPI promises none, so a fixed-order tree
// would have to be built by hand). Only when the span is wider can a 2^-53
// rounding reach the float32 result; the equality tests would show it.
//
// Overlap: the parameters are grouped into buckets of about `bucket_bytes`
// of float32 gradient, in reverse registration order (the order the
// backward completes them: the output head first, the embedding last). A
// gradient-ready hook (autograd/engine.h) on every parameter adds its .grad
// into the sums after each micro-batch's backward; during the rank's last
// micro-batch it also counts the bucket's parameters, and the bucket's sum
// across ranks starts (ProcessGroup::start_sum) the moment its last one is
// ready, while the backward goes on below.
#pragma once

#include <cstdint>
#include <vector>

#include "autograd/engine.h"
#include "dist/process_group.h"

namespace ropegrad::tasks {

class GradientBuckets {
 public:
  GradientBuckets(std::vector<Tensor> params, int64_t bucket_bytes, ProcessGroup& group);
  GradientBuckets(const GradientBuckets&) = delete;
  GradientBuckets& operator=(const GradientBuckets&) = delete;

  // Before a step's first micro-batch: the sums back to zero.
  void begin_step(int64_t step);
  // Before each micro-batch's backward; `last`: this rank's last one, whose
  // hooks start the buckets' sums across ranks.
  void begin_backward(bool last);
  // After the last backward: starts the buckets no hook started (a parameter
  // that got no gradient counts as zero), waits for every sum, and sets each
  // parameter's .grad to float32(sum / micro_batches).
  void finish(int64_t micro_batches);

  int64_t buckets() const { return static_cast<int64_t>(buckets_.size()); }
  int64_t elements() const { return static_cast<int64_t>(sums_.size()); }
  std::vector<int64_t> bucket_elements() const;
  // Per bucket: seconds from the last backward's start to the start of its sum.
  const std::vector<double>& ready_seconds() const { return ready_seconds_; }

 private:
  struct Bucket {
    int64_t begin, end;  // its elements in sums_
    int params, ready;   // parameters in it; those ready in the last backward
    bool started;
  };
  void on_ready(size_t param);  // the gradient-ready hook
  void start(size_t bucket);     // its sum across ranks begins
  double* sums_at(size_t param) { return sums_.data() + offset_[param]; }  // its elements' float64 sums

  std::vector<Tensor> params_;
  ProcessGroup& group_;
  std::vector<int64_t> offset_;      // parameter i's first element in sums_ (registration order)
  std::vector<size_t> bucket_of_;    // parameter -> bucket
  std::vector<Bucket> buckets_;      // bucket 0 holds the last parameters (ready first)
  std::vector<double> sums_;         // every parameter's elements, float64
  std::vector<double> ready_seconds_;
  std::vector<GradReadyHookHandle> hooks_;
  bool last_ = false;
  int64_t step_ = 0;
  double backward_start_ = 0;
};

}  // namespace ropegrad::tasks
