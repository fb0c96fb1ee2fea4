// `ropegrad dp-simulate`: data-parallel scaling from a backward profile (train/dp_simulate.h), as a
// table or as JSON.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <optional>
#include <string>
#include <vector>

#include "train/dp_simulate.h"
#include "cli/commands.h"
#include "cli/model_flags.h"
#include "tensor/error.h"
#include "tensor/printable.h"

namespace ropegrad::tasks {

namespace {

// The longest time the table prints (about 32 years): a longer one comes
// from rates or a shape that no measurement gives.
constexpr double kMaxSeconds = 1e9;

const flags::Command& command() {
  static const flags::Command c = [] {
    using namespace flags;
    Command c{"ropegrad dp-simulate", "usage: ropegrad dp-simulate (--run DIR | --preset NAME | model flags) [options]\n",
              "Simulates data-parallel training on N ranks at the same per-rank batch: one rank's backward\n"
              "profile (measured by a run, or estimated from a model shape's FLOPs) against a ring all-reduce\n"
              "of each gradient bucket, one channel, buckets in the order they become ready."};
    c.flags = {path("run", "DIR", "the profile of a run made with `ropegrad train --micro-batch b --out DIR`")};
    for (const Flag& f : shape_flags()) c.flags.push_back(f);  // or of a shape, as `ropegrad account` takes it
    c.flags.insert(c.flags.end(), {
        whole("batch", 1, kMaxBatch, "8", "a shape's sequences per rank"),
        whole("context", 1, kMaxContext, "128", "a shape's tokens per sequence (a preset: 1024)"),
        real("gflops", closed(1e-3, 1e9), "100", "a shape's sustained matmul rate", "GFLOP/s"),
        real("memory-gbs", closed(1e-3, 1e9), "20", "a shape's memory bandwidth for AdamW (28 bytes a parameter)",
             "GB/s"),
        real("bucket-mb", open_closed(0, 1e6), "1", "a shape's bucket size, of float32 gradient (as train's --bucket-mb)",
             "MB"),
        real("bandwidth-gbps", closed(1e-3, 1e6), "100", "the network's bandwidth per rank", "Gb/s"),
        real("latency-us", closed(0, 1e6), "5", "the network's latency per message", "microseconds"),
        choice("wire-bytes", {"4", "8"}, "4", "bytes sent per gradient element, float32 or float64 (ropegrad's exact sums)"),
        whole_list("ranks", 1, 100000000, ',', "1,8,16,32,64,128,256,512,1024", "the numbers of ranks N"),
        on_off("json", "print JSON instead of the table"),
    });
    return c;
  }();
  return c;
}

// 0.0123 -> "12.30 ms"
std::string seconds_text(double s) {
  if (s == 0) return "0";
  if (s < 1e-3) return fmt::format("{:.1f} us", s * 1e6);
  if (s < 1) return fmt::format("{:.2f} ms", s * 1e3);
  return fmt::format("{:.3f} s", s);
}

struct Simulation {
  BackwardProfile profile;
  NetworkModel net;
  std::vector<SimulatedStep> steps;
};

// A shape's bucket size: --bucket-mb megabytes, at least one byte.
int64_t bucket_bytes(const flags::Values& v) {
  const double bytes = v.real("bucket-mb") * 1e6;  // <= 1e12: the flag's range
  RG_CHECK(bytes >= 1, v.command(), "--bucket-mb {} is {} bytes: a bucket holds at least one byte (1e-6 MB)",
           v.typed("bucket-mb"), bytes);
  return static_cast<int64_t>(bytes);
}

// --run takes the shape and its times from the run: no shape flag goes with it.
void check_run_alone(const flags::Values& v) {
  const std::vector<std::string> not_shape = {"run", "bandwidth-gbps", "latency-us", "wire-bytes", "ranks", "json"};
  for (const flags::Flag& f : command().flags) {
    const bool shape = std::find(not_shape.begin(), not_shape.end(), f.name) == not_shape.end();
    RG_CHECK(!shape || !v.given(f.name), v.command(),
             "--run takes the shape and the times from the run; --{} is for a shape", f.name);
  }
}

// The profile of the shape the flags give.
BackwardProfile shape_profile(const flags::Values& v) {
  nn::TransformerConfig c = model_from_flags(v, nullptr);
  const int64_t context = v.given("context") || !v.given("preset") ? v.whole("context") : c.context_length;
  c.context_length = context;
  return profile_from_shape(c, v.whole("batch"), context, v.real("gflops"), bucket_bytes(v), v.real("memory-gbs"));
}

// Every time the table would print, at most kMaxSeconds.
void check_times(const flags::Values& v, const Simulation& s) {
  const BackwardProfile& p = s.profile;
  const double one_rank = p.before_backward_s + p.backward_s + p.optimizer_s;
  RG_CHECK(one_rank <= kMaxSeconds, v.command(), "one rank's step would take {:.3g} s, more than {} s: {}",
           one_rank, flags::number_text(kMaxSeconds),
           v.given("run") ? "--run's times are not a run's" : "raise --gflops or --memory-gbs, or shrink the shape");
  for (const SimulatedStep& step : s.steps) {
    RG_CHECK(step.communication_s <= kMaxSeconds, v.command(),
             "the all-reduces of a step on {} ranks would take {:.3g} s, more than {} s: raise --bandwidth-gbps, "
             "lower --latency-us or --ranks",
             step.ranks, step.communication_s, flags::number_text(kMaxSeconds));
  }
}

// The simulation the flags ask for; `read_run` false: a --run is not read (the dry run).
Simulation simulate(const flags::Values& v, bool read_run) {
  Simulation s;
  s.net.bandwidth_bytes_per_s = v.real("bandwidth-gbps") * 1e9 / 8;
  s.net.latency_s = v.real("latency-us") * 1e-6;
  s.net.wire_bytes = v.text("wire-bytes") == "4" ? 4 : 8;
  if (v.given("run")) {
    check_run_alone(v);
    if (!read_run) return s;
  }
  s.profile = v.given("run") ? profile_from_run(v.text("run")) : shape_profile(v);
  for (int64_t n : v.wholes("ranks")) s.steps.push_back(simulate_step(s.profile, s.net, n));
  check_times(v, s);
  return s;
}

void print_json(const Simulation& sim) {
  const BackwardProfile& profile = sim.profile;
  const NetworkModel& net = sim.net;
  const std::vector<SimulatedStep>& steps = sim.steps;
  fmt::print("{{\n  \"profile\": {{\"source\": {}, \"before_backward_s\": {:.9g}, \"backward_s\": {:.9g}, "
             "\"optimizer_s\": {:.9g}, \"buckets\": {}, \"elements\": {}}},\n",
             json_string(profile.source), profile.before_backward_s, profile.backward_s, profile.optimizer_s,
             profile.buckets.size(), profile.elements());
  fmt::print("  \"network\": {{\"bandwidth_bytes_per_s\": {:.9g}, \"latency_s\": {:.9g}, \"wire_bytes\": {}}},\n",
             net.bandwidth_bytes_per_s, net.latency_s, net.wire_bytes);
  fmt::print("  \"steps\": [\n");
  for (size_t i = 0; i < steps.size(); ++i) {
    const SimulatedStep& s = steps[i];
    fmt::print("    {{\"ranks\": {}, \"step_s\": {:.9g}, \"communication_s\": {:.9g}, \"exposed_s\": {:.9g}, "
               "\"overlap\": {:.9g}, \"efficiency\": {:.9g}}}{}\n",
               s.ranks, s.step_s, s.communication_s, s.exposed_s, s.overlap, s.efficiency,
               i + 1 < steps.size() ? "," : "");
  }
  fmt::print("  ]\n}}\n");
}

void print_table(const Simulation& sim) {
  const BackwardProfile& profile = sim.profile;
  const NetworkModel& net = sim.net;
  const double bytes = static_cast<double>(profile.elements()) * net.wire_bytes;
  fmt::print("profile: {}\n", profile.source);
  // Lines of at most 100 columns: the book shows them whole.
  fmt::print("  before the last backward {}, the last backward {}, optimizer {}\n  ({} buckets, {} elements)\n",
             seconds_text(profile.before_backward_s), seconds_text(profile.backward_s),
             seconds_text(profile.optimizer_s), profile.buckets.size(), profile.elements());
  fmt::print("network: ring all-reduce of S bytes over N ranks = 2(N-1) x {} us + 2(N-1)/N x S / ({} Gb/s)\n",
             net.latency_s * 1e6, net.bandwidth_bytes_per_s * 8 / 1e9);
  fmt::print("  S = {} bytes a step ({} bytes an element{})\n  one channel, buckets in the order they are ready\n\n",
             bytes, net.wire_bytes, net.wire_bytes == 4 ? ": float32" : ": float64, as ropegrad's exact sums");
  fmt::print("| ranks N | step time | communication | exposed | overlap | efficiency |\n");
  fmt::print("|---:|---:|---:|---:|---:|---:|\n");
  for (const SimulatedStep& s : sim.steps) {
    fmt::print("| {} | {} | {} | {} | {} | {:.1f}% |\n", s.ranks, seconds_text(s.step_s),
               seconds_text(s.communication_s), seconds_text(s.exposed_s),
               s.communication_s > 0 ? fmt::format("{:.1f}%", 100 * s.overlap) : "-", 100 * s.efficiency);
  }
}

}  // namespace

const flags::Command& dp_simulate_command() { return command(); }

void check_dp_simulate(const std::vector<std::string>& words) {
  if (const std::optional<flags::Values> v = flags::read(command(), words)) simulate(*v, /*read_run=*/false);
}

int run_dp_simulate(int argc, char** argv) {
  const std::optional<flags::Values> v = flags::read(command(), argc, argv);
  if (!v) return 0;  // --help
  const Simulation s = simulate(*v, /*read_run=*/true);
  if (v->on("json")) {
    print_json(s);
  } else {
    print_table(s);
  }
  return 0;
}

}  // namespace ropegrad::tasks
