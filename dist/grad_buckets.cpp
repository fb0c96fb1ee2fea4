#include "dist/grad_buckets.h"

#include <chrono>

#include "tensor/exercise.h"
#include "tensor/kernels.h"

namespace ropegrad::tasks {

namespace {
double now_seconds() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

// A contiguous float64 copy of a gradient (float32 to float64 is exact).
Tensor as_float64(const Tensor& grad) { return kernels::contiguous(kernels::to(grad, DType::Float64)); }
}  // namespace

GradientBuckets::GradientBuckets(std::vector<Tensor> params, int64_t bucket_bytes, ProcessGroup& group)
    : params_(std::move(params)), group_(group), offset_(params_.size()), bucket_of_(params_.size()) {
  RG_CHECK(bucket_bytes > 0, "data parallel", "the bucket size must be positive, got {} bytes", bucket_bytes);
  int64_t total = 0;
  for (size_t i = 0; i < params_.size(); ++i) {
    offset_[i] = total;
    total += params_[i].numel();
  }
  sums_.assign(static_cast<size_t>(total), 0.0);
  // Reverse registration order: a bucket closes once it holds bucket_bytes
  // of float32 gradient. Its parameters are consecutive, so its elements are
  // one range of sums_ and one MPI call sums it.
  for (size_t k = params_.size(); k-- > 0;) {
    if (buckets_.empty() || (buckets_.back().end - buckets_.back().begin) * 4 >= bucket_bytes) {
      buckets_.push_back({offset_[k] + params_[k].numel(), 0, 0, 0, false});
      buckets_.back().end = buckets_.back().begin;
    }
    Bucket& b = buckets_.back();
    b.begin = offset_[k];
    ++b.params;
    bucket_of_[k] = buckets_.size() - 1;
  }
  ready_seconds_.assign(buckets_.size(), 0.0);
  for (size_t i = 0; i < params_.size(); ++i) {
    hooks_.push_back(register_grad_ready_hook(params_[i], [this, i](const Tensor&) { on_ready(i); }));
  }
}

std::vector<int64_t> GradientBuckets::bucket_elements() const {
  std::vector<int64_t> out;
  for (const Bucket& b : buckets_) out.push_back(b.end - b.begin);
  return out;
}

void GradientBuckets::begin_step(int64_t step) {
  step_ = step;
  std::fill(sums_.begin(), sums_.end(), 0.0);
  for (Bucket& b : buckets_) b.ready = 0, b.started = false;
}

void GradientBuckets::begin_backward(bool last) {
  last_ = last;
  backward_start_ = now_seconds();
}

// The hook: this micro-batch's gradient of parameter i is complete. Its
// float32 values go into the float64 sums (exact: the header says why);
// during the last micro-batch, the parameter that completes its bucket starts
// the bucket's sum across ranks.
void GradientBuckets::on_ready(size_t i) {
  // BEGIN EXERCISE ex21-bucket-allreduce
  const Tensor g = as_float64(params_[i].grad());
  const double* d = g.data_ptr<double>();
  double* sum = sums_at(i);
  for (int64_t e = 0; e < g.numel(); ++e) sum[e] += d[e];
  if (!last_) return;
  Bucket& b = buckets_[bucket_of_[i]];
  b.ready += 1;
  if (b.ready == b.params) start(bucket_of_[i]);
  // END EXERCISE ex21-bucket-allreduce
}

// Bucket k's elements of sums_ handed to the group, to be summed over every
// rank in place while the backward goes on.
void GradientBuckets::start(size_t k) {
  Bucket& b = buckets_[k];
  b.started = true;
  ready_seconds_[k] = now_seconds() - backward_start_;
  // BEGIN EXERCISE ex21-bucket-allreduce
  group_.start_sum(sums_.data() + b.begin, b.end - b.begin, static_cast<int>(k), step_);
  // END EXERCISE ex21-bucket-allreduce
}

void GradientBuckets::finish(int64_t micro_batches) {
  // BEGIN EXERCISE ex21-bucket-allreduce
  for (size_t k = 0; k < buckets_.size(); ++k) {
    if (!buckets_[k].started) start(k);  // a parameter in it got no gradient (its sum counts as zero)
  }
  group_.wait_sums(step_);
  for (size_t i = 0; i < params_.size(); ++i) {
    Tensor mean = empty(params_[i].shape(), DType::Float64);
    double* d = mean.data_ptr<double>();
    const double* sum = sums_at(i);
    for (int64_t e = 0; e < mean.numel(); ++e) d[e] = sum[e] / static_cast<double>(micro_batches);
    params_[i].set_grad(kernels::to(mean, params_[i].dtype()));  // rounded once
  }
  // END EXERCISE ex21-bucket-allreduce
}

}  // namespace ropegrad::tasks
