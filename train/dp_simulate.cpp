#include "train/dp_simulate.h"

#include <algorithm>
#include <map>

#include "nn/accounting.h"
#include "train/run_files.h"
#include "tensor/error.h"
#include "tensor/printable.h"

namespace ropegrad::tasks {

int64_t BackwardProfile::elements() const {
  int64_t n = 0;
  for (const ProfileBucket& b : buckets) n += b.elements;
  return n;
}

double ring_allreduce_seconds(double bytes, int64_t ranks, const NetworkModel& net) {
  RG_CHECK(ranks >= 1, "dp-simulate", "the number of ranks must be at least 1, got {}", ranks);
  if (ranks == 1) return 0;
  const double n = static_cast<double>(ranks);
  return 2 * (n - 1) * net.latency_s + 2 * (n - 1) / n * bytes / net.bandwidth_bytes_per_s;
}

SimulatedStep simulate_step(const BackwardProfile& p, const NetworkModel& net, int64_t ranks) {
  std::vector<ProfileBucket> order = p.buckets;
  std::stable_sort(order.begin(), order.end(),
                   [](const ProfileBucket& a, const ProfileBucket& b) { return a.ready_s < b.ready_s; });
  double backward_end = p.backward_s;
  for (const ProfileBucket& b : order) backward_end = std::max(backward_end, b.ready_s);
  SimulatedStep s;
  s.ranks = ranks;
  double channel_free = 0;  // from the backward's start
  for (const ProfileBucket& b : order) {
    const double t = ring_allreduce_seconds(static_cast<double>(b.elements) * net.wire_bytes, ranks, net);
    channel_free = std::max(b.ready_s, channel_free) + t;
    s.communication_s += t;
  }
  s.exposed_s = std::max(0.0, channel_free - backward_end);
  const double one_rank = p.before_backward_s + backward_end + p.optimizer_s;
  s.step_s = one_rank + s.exposed_s;
  s.overlap = s.communication_s > 0 ? (s.communication_s - s.exposed_s) / s.communication_s : 1.0;
  s.efficiency = s.step_s > 0 ? one_rank / s.step_s : 1.0;
  return s;
}

namespace {

constexpr const char* kOp = "dp-simulate";

// A run's CSV file, every field checked by its rule (train/run_files.h), and the columns it must have.
RunCsv read_csv(const std::string& path, const std::vector<std::string>& needed) {
  const RunCsv csv = read_run_csv(path, kOp);
  RG_CHECK(csv.exists, kOp, "cannot read '{}' (a run made with `ropegrad train --micro-batch b --out DIR` writes it)",
           path);
  for (const std::string& name : needed) csv.column(name, kOp);
  RG_CHECK(!csv.rows.empty(), kOp, "'{}' has no rows", path);
  return csv;
}

double median(std::vector<double> v) {
  RG_CHECK(!v.empty(), kOp, "a median of no values");  // profile_from_run leaves at least one step
  std::sort(v.begin(), v.end());
  const size_t n = v.size();
  return n % 2 == 1 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

}  // namespace

BackwardProfile profile_from_run(const std::string& dir) {
  const std::string steps_path = dir + "/dp.csv", buckets_path = dir + "/dp_buckets.csv";
  const RunCsv steps = read_csv(steps_path, {"step", "ranks", "before_backward_s", "backward_s", "optimizer_s"});
  const RunCsv buckets = read_csv(buckets_path, {"step", "bucket", "elements", "ready_s"});
  const auto at = [](const RunCsv& csv, const RunCsv::Row& row, const char* name) {
    return row.values[csv.column(name, kOp)];
  };
  // One run writes each step once (a resume rewrites the rows after its checkpoint): a step twice
  // is two runs' rows in one file, and a profile of them would mix them.
  std::map<double, int64_t> line_of_step;
  for (const RunCsv::Row& r : steps.rows) {
    const auto [it, fresh] = line_of_step.emplace(at(steps, r, "step"), r.line);
    RG_CHECK(fresh, kOp, "'{}' line {}: step {:.0f} again (line {} has it): the rows of more than one run", steps_path,
             r.line, it->first, it->second);
  }
  std::map<std::pair<double, double>, int64_t> line_of_bucket;
  for (const RunCsv::Row& r : buckets.rows) {
    const auto [it, fresh] = line_of_bucket.emplace(std::pair{at(buckets, r, "step"), at(buckets, r, "bucket")}, r.line);
    RG_CHECK(fresh, kOp, "'{}' line {}: step {:.0f}'s bucket {:.0f} again (line {} has it): the rows of more than one run",
             buckets_path, r.line, it->first.first, it->first.second, it->second);
  }
  // The steps used: all but the first when there are more (its backward warms the caches and the allocator).
  const double first = at(steps, steps.rows.front(), "step");
  const bool skip_first = steps.rows.size() > 1;
  std::vector<double> before, backward, optimizer;
  for (const RunCsv::Row& r : steps.rows) {
    if (skip_first && at(steps, r, "step") == first) continue;
    before.push_back(at(steps, r, "before_backward_s"));
    backward.push_back(at(steps, r, "backward_s"));
    optimizer.push_back(at(steps, r, "optimizer_s"));
  }
  std::map<int64_t, std::vector<double>> ready;  // bucket -> its ready times
  std::map<int64_t, int64_t> elements;
  for (const RunCsv::Row& r : buckets.rows) {
    if (skip_first && at(buckets, r, "step") == first) continue;
    // Whole numbers within their rules' ranges (run_file_fields): exact as int64.
    const auto k = static_cast<int64_t>(at(buckets, r, "bucket"));
    const auto e = static_cast<int64_t>(at(buckets, r, "elements"));
    RG_CHECK(elements.count(k) == 0 || elements[k] == e, kOp,
             "'{}' line {}: bucket {} has {} elements here, {} in an earlier step", buckets_path, r.line, k, e,
             elements[k]);
    elements[k] = e;
    ready[k].push_back(at(buckets, r, "ready_s"));
  }
  RG_CHECK(!ready.empty(), kOp, "'{}' has no bucket of the steps in '{}'", buckets_path, steps_path);
  BackwardProfile p;
  p.before_backward_s = median(before);
  p.backward_s = median(backward);
  p.optimizer_s = median(optimizer);
  double total = 0;  // a model's parameters, whatever the split: within the rule of one bucket's elements
  for (const auto& [k, e] : elements) total += static_cast<double>(e);
  const nn::FieldRule& rule = *run_field_rule("dp_buckets.csv", "elements");
  RG_CHECK(total <= rule.max, kOp, "'{}': the buckets hold {:.0f} elements in all, more than {}", buckets_path, total,
           nn::describe_field_rule(rule));
  for (const auto& [k, times] : ready) p.buckets.push_back({elements[k], median(times)});
  std::stable_sort(p.buckets.begin(), p.buckets.end(),
                   [](const ProfileBucket& a, const ProfileBucket& b) { return a.ready_s < b.ready_s; });
  p.source = fmt::format("run {} (ranks {:.0f}, medians of {} step{})", dir, at(steps, steps.rows.front(), "ranks"),
                         before.size(), before.size() == 1 ? "" : "s");
  return p;
}

BackwardProfile profile_from_shape(const nn::TransformerConfig& config, int64_t batch, int64_t context, double gflops,
                                   int64_t bucket_bytes, double memory_gbytes_per_s) {
  RG_CHECK(gflops > 0, kOp, "--gflops must be positive, got {}", gflops);
  RG_CHECK(memory_gbytes_per_s > 0, kOp, "--memory-gbs must be positive, got {}", memory_gbytes_per_s);
  RG_CHECK(bucket_bytes > 0, kOp, "the bucket size must be positive, got {} bytes", bucket_bytes);
  const nn::Accounting a = nn::account(config, batch, context);
  const double rate = gflops * 1e9;
  // (parameters, seconds of backward before they are ready), in the order the backward completes them.
  std::vector<std::pair<int64_t, double>> ready;
  double t = 0;
  const auto row = [&](const std::string& name) -> const nn::AccountingRow& {
    for (const nn::AccountingRow& r : a.rows) {
      if (r.name == name) return r;
    }
    fail(kOp, "the accounting has no component '{}'", name);
  };
  const auto done = [&](const nn::AccountingRow& r) {
    t += r.backward_flops / static_cast<double>(r.copies) / rate;
    if (r.parameters > 0) ready.emplace_back(r.parameters / r.copies, t);
  };
  done(row("lm_head"));
  done(row("ln_final"));
  std::vector<const nn::AccountingRow*> block;  // one layer's components, in model order, the norms left out
  for (const nn::AccountingRow& r : a.rows) {
    const bool of_model = r.name == "token_embeddings" || r.name == "ln_final" || r.name == "lm_head";
    if (!of_model && r.name != "ln1, ln2") block.push_back(&r);
  }
  for (int64_t layer = config.num_layers; layer-- > 0;) {
    for (size_t i = block.size(); i-- > 0;) done(*block[i]);
    done(row("ln1, ln2"));
  }
  done(row("token_embeddings"));
  BackwardProfile p;
  p.backward_s = t;
  p.before_backward_s = a.forward_flops() / rate;
  p.optimizer_s = 28.0 * static_cast<double>(a.parameters()) / (memory_gbytes_per_s * 1e9);
  for (const auto& [n, when] : ready) {
    if (p.buckets.empty() || p.buckets.back().elements * 4 >= bucket_bytes) p.buckets.push_back({0, 0});
    p.buckets.back().elements += n;
    p.buckets.back().ready_s = when;
  }
  p.source = fmt::format("shape: {} parameters, batch {} x context {} per rank, {} GFLOP/s sustained", a.parameters(),
                         batch, context, gflops);
  return p;
}

}  // namespace ropegrad::tasks
