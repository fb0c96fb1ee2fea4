#include "tasks/dp_simulate.h"

#include <algorithm>
#include <cmath>
#include <optional>
#include <fstream>
#include <map>
#include <sstream>

#include "nn/accounting.h"
#include "tasks/flags.h"
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

// The rows of a CSV file after its header, each split at commas; the header's names checked.
std::vector<std::vector<std::string>> csv_rows(const std::string& path, const std::vector<std::string>& needed,
                                               std::map<std::string, size_t>& column) {
  std::ifstream in(path);
  RG_CHECK(in.good(), kOp, "cannot read '{}' (a run made with `ropegrad train --micro-batch b --out DIR` writes it)",
           path);
  const auto split = [](const std::string& line) {
    std::vector<std::string> cells;
    std::istringstream s(line);
    for (std::string cell; std::getline(s, cell, ',');) cells.push_back(cell);
    return cells;
  };
  std::string line;
  std::getline(in, line);
  const std::vector<std::string> header = split(line);
  for (size_t i = 0; i < header.size(); ++i) column[header[i]] = i;
  for (const std::string& name : needed) {
    RG_CHECK(column.count(name) > 0, kOp, "'{}' has no column '{}' (written by an older ropegrad?)", path, name);
  }
  std::vector<std::vector<std::string>> rows;
  for (int number = 2; std::getline(in, line); ++number) {
    if (line.empty()) continue;
    rows.push_back(split(line));
    RG_CHECK(rows.back().size() == header.size(), kOp, "'{}' line {} has {} fields, the header {}", path, number,
             rows.back().size(), header.size());
  }
  RG_CHECK(!rows.empty(), kOp, "'{}' has no rows", path);
  return rows;
}

// A field of the run's files: a finite number >= 0 (tasks/flags.h's parser).
double number(const std::string& text, const std::string& path, const std::string& name) {
  const std::optional<double> v = flags::parse_real(text);
  RG_CHECK(v && std::isfinite(*v) && *v >= 0, kOp, "'{}': {} must be a number >= 0, got {}", path, name,
           quote_bytes(text));
  return *v;
}

// A count of the run's files: a whole number in 0..2^53 (exact in a double, as the sums use it).
int64_t count(const std::string& text, const std::string& path, const std::string& name) {
  const std::optional<int64_t> n = flags::parse_whole(text);
  RG_CHECK(n && *n >= 0 && *n <= (int64_t{1} << 53), kOp, "'{}': {} must be a whole number in 0..{}, got {}", path,
           name, int64_t{1} << 53, quote_bytes(text));
  return *n;
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  const size_t n = v.size();
  return n % 2 == 1 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

}  // namespace

BackwardProfile profile_from_run(const std::string& dir) {
  const std::string steps_path = dir + "/dp.csv", buckets_path = dir + "/dp_buckets.csv";
  std::map<std::string, size_t> sc, bc;
  const auto steps = csv_rows(steps_path, {"step", "ranks", "before_backward_s", "backward_s", "optimizer_s"}, sc);
  const auto buckets = csv_rows(buckets_path, {"step", "bucket", "elements", "ready_s"}, bc);
  // The steps used: all but the first when there are more (its backward warms the caches and the allocator).
  const double first = number(steps.front()[sc["step"]], steps_path, "step");
  const bool skip_first = steps.size() > 1;
  std::vector<double> before, backward, optimizer;
  for (const auto& r : steps) {
    if (skip_first && number(r[sc["step"]], steps_path, "step") == first) continue;
    before.push_back(number(r[sc["before_backward_s"]], steps_path, "before_backward_s"));
    backward.push_back(number(r[sc["backward_s"]], steps_path, "backward_s"));
    optimizer.push_back(number(r[sc["optimizer_s"]], steps_path, "optimizer_s"));
  }
  std::map<int64_t, std::vector<double>> ready;  // bucket -> its ready times
  std::map<int64_t, int64_t> elements;
  for (const auto& r : buckets) {
    if (skip_first && number(r[bc["step"]], buckets_path, "step") == first) continue;
    const int64_t k = count(r[bc["bucket"]], buckets_path, "bucket");
    const int64_t e = count(r[bc["elements"]], buckets_path, "elements");
    RG_CHECK(elements.count(k) == 0 || elements[k] == e, kOp, "'{}': bucket {} has {} elements in one step, {} in another",
             buckets_path, k, elements[k], e);
    elements[k] = e;
    ready[k].push_back(number(r[bc["ready_s"]], buckets_path, "ready_s"));
  }
  RG_CHECK(!ready.empty(), kOp, "'{}' has no bucket of the steps in '{}'", buckets_path, steps_path);
  BackwardProfile p;
  p.before_backward_s = median(before);
  p.backward_s = median(backward);
  p.optimizer_s = median(optimizer);
  for (const auto& [k, times] : ready) p.buckets.push_back({elements[k], median(times)});
  std::stable_sort(p.buckets.begin(), p.buckets.end(),
                   [](const ProfileBucket& a, const ProfileBucket& b) { return a.ready_s < b.ready_s; });
  p.source = fmt::format("run {} (ranks {}, medians of {} step{})", dir, steps.front()[sc["ranks"]], before.size(),
                         before.size() == 1 ? "" : "s");
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
