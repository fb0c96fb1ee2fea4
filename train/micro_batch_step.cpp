// The step of micro-batches, alone or data-parallel (train/trainer.h).
#include <chrono>

#include "optim/schedule.h"
#include "dist/grad_buckets.h"
#include "train/trainer.h"

namespace ropegrad::tasks {

int64_t micro_batches_per_step(int64_t batch, int64_t micro_batch, int ranks) {
  RG_CHECK(micro_batch > 0 && batch % micro_batch == 0, "train",
           "--micro-batch {} does not divide --batch {} (the batch is M micro-batches of the same size)", micro_batch,
           batch);
  const int64_t m = batch / micro_batch;
  RG_CHECK(m % ranks == 0, "data parallel",
           "{} ranks cannot share M = {} micro-batches (--batch {} / --micro-batch {}): the number of ranks must "
           "divide M",
           ranks, m, batch, micro_batch);
  return m;
}

namespace {

// Rows [first, first + n) of a batch.
Batch rows(const Batch& b, int64_t first, int64_t n) {
  const auto part = [&](const Tensor& t) { return t.defined() ? kernels::contiguous(kernels::narrow(t, 0, first, n)) : t; };
  return {part(b.inputs), part(b.targets), part(b.scored)};
}

}  // namespace

StepRecord train_step_micro_batches(nn::TransformerLM& model, nn::Optimizer& opt, const Batch& b, int64_t step,
                                    const TrainConfig& c, GradientBuckets& buckets, ProcessGroup& group,
                                    uint64_t dropout_seed, StepTimes* times) {
  const int64_t m_total = micro_batches_per_step(b.inputs.size(0), c.micro_batch, group.size());
  const int64_t mine = m_total / group.size(), first = group.rank() * mine;
  opt.set_lr(nn::cosine_lr(step, c.lr, c.min_lr, c.warmup, c.steps));
  buckets.begin_step(step);
  std::vector<double> losses(static_cast<size_t>(mine));
  const auto t0 = std::chrono::steady_clock::now();
  for (int64_t k = 0; k < mine; ++k) {
    const int64_t m = first + k;
    opt.zero_grad();  // .grad holds this micro-batch's gradient alone; the hooks add it to the sums
    const Batch part = rows(b, m * c.micro_batch, c.micro_batch);
    manual_seed(dropout_seed + static_cast<uint64_t>(m));
    const Tensor loss = nn::cross_entropy(model.forward(part.inputs), part.targets, kIgnore);
    buckets.begin_backward(k == mine - 1);  // the buckets' ready times count from here
    const auto b0 = std::chrono::steady_clock::now();
    backward(loss);
    if (times != nullptr && k == mine - 1) {
      times->before_backward = std::chrono::duration<double>(b0 - t0).count();
      times->backward = std::chrono::duration<double>(std::chrono::steady_clock::now() - b0).count();
    }
    losses[static_cast<size_t>(k)] = loss.item<double>();
  }
  const double loop = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  buckets.finish(m_total);
  // Every micro-batch's loss on every rank, added in the order m = 0..M-1: the same number for any N.
  std::vector<double> all(static_cast<size_t>(m_total));
  group.all_gather(losses.data(), mine, all.data(), "the losses");
  double loss_sum = 0;
  for (double l : all) loss_sum += l;
  const double loss_value = loss_sum / static_cast<double>(m_total);
  if (times != nullptr) times->compute = loop;  // the caller subtracts the MPI time spent inside the hooks
  const auto o0 = std::chrono::steady_clock::now();
  const double grad_norm = c.clip > 0 ? nn::clip_grad_norm_(model.parameters(), c.clip) : 0.0;
  check_step(model, step, opt.lr(), loss_value, grad_norm);
  opt.step();
  if (times != nullptr) times->optimizer = std::chrono::duration<double>(std::chrono::steady_clock::now() - o0).count();
  return {step, loss_value, opt.lr(), grad_norm};
}

}  // namespace ropegrad::tasks
