// ex21-bucket-allreduce: the gradient-ready hook and the finish of
// tasks::GradientBuckets (dist/grad_buckets.cpp): each micro-batch's
// gradient added into float64 sums, a bucket's sum across ranks started when
// its last parameter is ready in the last micro-batch, then wait, divide by M
// and round to float32 once. Three parameters a (3), b (2), c (4) registered
// in that order; a 16-byte bucket size makes bucket 0 = {c} and bucket 1 =
// {b, a} (reverse registration order, each closing at 16 bytes of float32).
#include <cmath>

#include "course/checks/check_util.h"
#include "course/checks/rank_groups.h"
#include "dist/grad_buckets.h"

namespace ropegrad::course {
namespace {

const char* const kBucketParamNames[] = {"a", "b", "c"};

std::vector<Tensor> abc_params() {
  return {tensor({0.5, -1.0, 2.0}, {3}, DType::Float32).requires_grad_(),
          tensor({1.5, -0.25}, {2}, DType::Float32).requires_grad_(),
          tensor({-2.0, 0.75, 1.0, 3.0}, {4}, DType::Float32).requires_grad_()};
}

// One micro-batch whose gradients are grads[i] exactly: one backward of
// sum(p * g) per parameter, c first, then b, then a (the order a model's
// backward completes them, head first), each running that parameter's hooks.
void micro_batch_with_grads(tasks::GradientBuckets& buckets, const std::vector<Tensor>& ps,
                            const std::vector<std::vector<double>>& grads, bool last) {
  for (const Tensor& p : ps) p.set_grad(Tensor());
  buckets.begin_backward(last);
  for (size_t i = ps.size(); i-- > 0;) {
    backward(sum(mul(ps[i], tensor(grads[i], ps[i].shape(), DType::Float32))));
  }
}

TEST(ex21_bucket_allreduce, micro_batches_are_summed_in_float64_and_rounded_once) {
  // One rank, M = 4 micro-batches. a[0] gets 1, 2^-24, 2^-24, 0: the float64
  // sum is 1 + 2^-23, over 4 exactly 0.25 + 2^-25, a float32. Summed in
  // float32, 1 + 2^-24 rounds back to 1 (to even) twice, giving 0.25.
  const double t = std::ldexp(1.0, -24);
  const std::vector<std::vector<std::vector<double>>> g = {
      {{1, 1, 3}, {0.5, 2}, {1, 2, 3, 4}},
      {{t, -1, 1}, {0.25, 2}, {1, 2, 3, 4}},
      {{t, 0.5, 0}, {0.25, -2}, {1, 2, 3, 4}},
      {{0, 0.5, 4}, {1, 2}, {1, 2, 3, 4}}};
  const std::vector<Tensor> ps = abc_params();
  PretendRanks group(0, 1);
  tasks::GradientBuckets buckets(ps, 16, group);
  buckets.begin_step(1);
  for (size_t m = 0; m < g.size(); ++m) micro_batch_with_grads(buckets, ps, g[m], m + 1 == g.size());
  buckets.finish(4);
  for (size_t i = 0; i < ps.size(); ++i) {
    const Tensor grad = ps[i].grad();
    if (!grad.defined() || grad.dtype() != DType::Float32) {
      ADD_FAILURE() << "parameter " << kBucketParamNames[i] << " has no float32 .grad after finish";
      return;
    }
    const std::vector<float> got = grad.to_vector<float>();
    for (size_t e = 0; e < got.size(); ++e) {
      double total = 0;
      float in_float32 = 0;
      for (const auto& mb : g) total += mb[i][e], in_float32 += static_cast<float>(mb[i][e]);
      const float want = static_cast<float>(total / 4);
      if (got[e] == want) continue;
      if (got[e] == in_float32 / 4)
        ADD_FAILURE() << "rounded to float32 before the end: " << kBucketParamNames[i] << "[" << e << "] = " << got[e]
                      << ", the micro-batches' sum taken in float32; the float64 sum over M = 4, rounded once, is "
                      << want;
      else if (got[e] == static_cast<float>(total))
        ADD_FAILURE() << "the sum is not divided by M: " << kBucketParamNames[i] << "[" << e << "] = " << got[e]
                      << " is the sum of the 4 micro-batches' gradients; expected their mean " << want;
      else
        ADD_FAILURE() << kBucketParamNames[i] << "[" << e << "] = " << got[e] << ", expected " << want
                      << " (the float64 sum of the 4 micro-batches' gradients over M = 4, rounded once)";
      return;
    }
  }
}

TEST(ex21_bucket_allreduce, the_sum_over_ranks_is_divided_by_the_micro_batches_of_the_step) {
  // Rank 0 of 2 runs 3 of the step's M = 6 micro-batches, gradient 1 on every
  // element each time; the other rank's sums are 10 + the element's index in
  // its bucket. So the mean is (3 + 10 + e) / 6.
  const std::vector<Tensor> ps = abc_params();
  PretendRanks group(0, 2, [](int, int64_t e) { return 10.0 + static_cast<double>(e); });
  tasks::GradientBuckets buckets(ps, 16, group);
  buckets.begin_step(1);
  const std::vector<std::vector<double>> ones = {{1, 1, 1}, {1, 1}, {1, 1, 1, 1}};
  for (int m = 0; m < 3; ++m) micro_batch_with_grads(buckets, ps, ones, m == 2);
  buckets.finish(6);
  // Bucket 0 is c (its elements 0..3); bucket 1 holds a's elements at 0..2, then b's at 3..4.
  const std::vector<int64_t> first_in_bucket = {0, 3, 0};
  for (size_t i = 0; i < ps.size(); ++i) {
    const std::vector<float> got = ps[i].grad().to_vector<float>();
    for (size_t e = 0; e < got.size(); ++e) {
      const double total = 3 + 10 + static_cast<double>(first_in_bucket[i] + static_cast<int64_t>(e));
      const float want = static_cast<float>(total / 6);
      if (got[e] == want) continue;
      const std::string where = std::string(kBucketParamNames[i]) + "[" + std::to_string(e) + "] = ";
      if (got[e] == static_cast<float>(total / 2))
        ADD_FAILURE() << "divided by the number of ranks: " << where << got[e] << " = the sum over 2 ranks / 2; "
                      << "the mean is over the step's M = 6 micro-batches: " << want;
      else if (got[e] == static_cast<float>(total / 3))
        ADD_FAILURE() << "divided by this rank's micro-batches: " << where << got[e] << " = the sum / 3; "
                      << "the mean is over the whole step's M = 6: " << want;
      else if (got[e] == static_cast<float>(3.0 / 6) || got[e] == 1.0f)
        ADD_FAILURE() << "the other rank's sum is missing: " << where << got[e]
                      << " (this rank's alone); did finish wait for the sums? expected " << want;
      else
        ADD_FAILURE() << where << got[e] << ", expected " << want << " = (this rank's sum 3 + the other's "
                      << total - 3 << ") / M = 6";
      return;
    }
  }
}

TEST(ex21_bucket_allreduce, a_bucket_starts_when_its_last_parameter_is_ready) {
  const std::vector<Tensor> ps = abc_params();
  PretendRanks group(0, 2);
  // Hooks registered before the buckets' run first: "ready x" then what its bucket does.
  std::vector<GradReadyHookHandle> seen;
  for (size_t i = 0; i < ps.size(); ++i)
    seen.push_back(register_grad_ready_hook(
        ps[i], [&group, i](const Tensor&) { group.log.push_back(std::string("ready ") + kBucketParamNames[i]); }));
  tasks::GradientBuckets buckets(ps, 16, group);
  if (buckets.buckets() != 2) {
    ADD_FAILURE() << "expected 2 buckets ({c}, {b, a}), the given constructor made " << buckets.buckets();
    return;
  }
  buckets.begin_step(1);
  const std::vector<std::vector<double>> ones = {{1, 1, 1}, {1, 1}, {1, 1, 1, 1}};
  micro_batch_with_grads(buckets, ps, ones, false);
  group.log.push_back("second micro-batch");
  micro_batch_with_grads(buckets, ps, ones, true);
  group.log.push_back("finish");
  buckets.finish(2);
  const std::vector<std::string> want = {"ready c", "ready b", "ready a", "second micro-batch", "ready c", "start 0",
                                         "ready b", "ready a", "start 1", "finish"};
  if (group.log == want) return;
  std::string got;
  for (const std::string& s : group.log) got += (got.empty() ? "" : ", ") + s;
  // Where an event happens first, from the event `from` on.
  const auto at = [&](const std::string& s, std::ptrdiff_t from = 0) {
    return std::find(group.log.begin() + from, group.log.end(), s) - group.log.begin();
  };
  const auto second = at("second micro-batch");
  const auto starts = std::count_if(group.log.begin(), group.log.end(), [](const std::string& s) { return s.rfind("start", 0) == 0; });
  if (at("start 0") < second || at("start 1") < second)
    ADD_FAILURE() << "a sum started during the first micro-batch: only the last micro-batch's hooks start sums, "
                     "once every micro-batch is added in; the events: "
                  << got;
  else if (at("start 1") < at("ready a", second))
    ADD_FAILURE() << "bucket 1 {b, a} started before its last parameter a was ready: its sum would miss a's "
                     "gradient; the events: "
                  << got;
  else if (starts != 2)
    ADD_FAILURE() << "expected each of the 2 buckets to start once, got " << starts << " starts; the events: " << got;
  else if (at("start 0") > at("finish") || at("start 1") > at("finish"))
    ADD_FAILURE() << "a bucket started only in finish, after the backward, not from its last parameter's hook: "
                     "no overlap; the events: "
                  << got;
  else
    ADD_FAILURE() << "the events: " << got << "; expected: ready c, start 0 (c completes bucket 0), ..., ready a, "
                     "start 1, in the second micro-batch only";
}

// Rank r's share of the step's M micro-batches of a small two-layer model,
// through GradientBuckets on `group`; the parameters' .grad after finish.
std::vector<std::vector<float>> model_gradients(tasks::ProcessGroup& group, int64_t m_total) {
  const std::vector<Tensor> ps = abc_params();
  tasks::GradientBuckets buckets(ps, 8, group);  // a bucket per parameter
  buckets.begin_step(1);
  const int64_t mine = m_total / group.size(), first = group.rank() * mine;
  for (int64_t k = 0; k < mine; ++k) {
    const double m = static_cast<double>(first + k);
    for (const Tensor& p : ps) p.set_grad(Tensor());
    const Tensor x = tensor({0.3 + m, -0.7, 1.1 - 0.5 * m}, {3}, DType::Float32);
    const Tensor h = tanh(mul(sum(tanh(mul(ps[0], x))), ps[1]));               // (2)
    const Tensor loss = sum(mul(ps[2], mul(sum(h), tensor({1.0 + m, -2.0, 0.5, 3.0}, {4}, DType::Float32))));
    buckets.begin_backward(k == mine - 1);
    backward(mul(loss, loss));
  }
  buckets.finish(m_total);
  std::vector<std::vector<float>> out;
  for (const Tensor& p : ps) out.push_back(p.grad().to_vector<float>());
  return out;
}

TEST(ex21_bucket_allreduce, n_ranks_give_the_gradients_of_one_rank_bit_for_bit) {
  for (int n : rank_counts()) {
    const int64_t m_total = 2 * n;
    const std::string found = first_finding(on_ranks(n, [&](tasks::ProcessGroup& group) -> std::string {
      tasks::LocalGroup one;
      const auto want = model_gradients(one, m_total);
      const auto got = model_gradients(group, m_total);
      for (size_t i = 0; i < want.size(); ++i)
        for (size_t e = 0; e < want[i].size(); ++e)
          if (got[i][e] != want[i][e])
            return fmt::format("{}[{}] = {}, one rank's run of the same {} micro-batches gives {}", kBucketParamNames[i],
                               e, got[i][e], m_total, want[i][e]);
      return "";
    }));
    if (!found.empty()) {
      ADD_FAILURE() << "the gradient depends on the number of ranks: " << found;
      return;
    }
  }
}

}  // namespace
}  // namespace ropegrad::course
