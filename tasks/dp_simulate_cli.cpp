// `ropegrad dp-simulate`: data-parallel scaling from a backward profile (tasks/dp_simulate.h), as a
// table or as JSON.
#include <cmath>
#include <cstdio>
#include <map>
#include <stdexcept>
#include <string>
#include <vector>

#include "tasks/dp_simulate.h"
#include "tasks/command_flags.h"
#include "tensor/error.h"
#include "tensor/printable.h"

namespace ropegrad::tasks {

namespace {

constexpr const char* kOp = "ropegrad dp-simulate";

const std::vector<CommandFlag> kFlags = {
    {"run", "DIR", "the profile of a run made with `ropegrad train --micro-batch b --out DIR`"},
    {"preset", "NAME", "or of a GPT-2 shape: small | medium | large | xl"},
    {"vocab", "256", "or of a model shape (as `ropegrad account` takes it): vocabulary size"},
    {"d-model", "64", "model width"},
    {"layers", "2", "transformer blocks"},
    {"heads", "4", "attention heads"},
    {"d-ff", "0", "SwiGLU width (0: 8/3 D rounded up to 64)"},
    {"attention", "standard", "standard | w2 | triple"},
    {"sigma", "scalar", "W2: scalar | vector sigma"},
    {"tie", "", "tie the output head to the embedding"},
    {"batch", "8", "a shape's sequences per rank"},
    {"context", "128", "a shape's tokens per sequence (a preset: 1024)"},
    {"gflops", "100", "a shape's sustained matmul rate, GFLOP/s"},
    {"memory-gbs", "20", "a shape's memory bandwidth for AdamW (28 bytes a parameter), GB/s"},
    {"bucket-mb", "1", "a shape's bucket size, MB of float32 gradient (as train's --bucket-mb)"},
    {"bandwidth-gbps", "100", "the network's bandwidth per rank, Gb/s"},
    {"latency-us", "5", "the network's latency per message, microseconds"},
    {"wire-bytes", "4", "bytes sent per gradient element: 4 (float32) or 8 (float64, ropegrad's exact sums)"},
    {"ranks", "1,8,16,32,64,128,256,512,1024", "the numbers of ranks N, comma separated"},
    {"json", "", "print JSON instead of the table"},
};

void print_help() {
  std::printf(
      "usage: ropegrad dp-simulate (--run DIR | --preset NAME | model flags) [options]\n\n"
      "Simulates data-parallel training on N ranks at the same per-rank batch: one rank's backward\n"
      "profile (measured by a run, or estimated from a model shape's FLOPs) against a ring all-reduce\n"
      "of each gradient bucket, one channel, buckets in the order they become ready.\n\noptions:\n");
  print_command_flags(kFlags);
}

std::string value_of(const std::map<std::string, std::string>& given, const std::string& name) {
  const auto it = given.find(name);
  if (it != given.end()) return it->second;
  for (const CommandFlag& f : kFlags) {
    if (name == f.name) return f.value;
  }
  fail(kOp, "no flag --{}", name);
}

// The flag's number, > 0 (or >= 0 with `zero_ok`), finite.
double positive(const std::map<std::string, std::string>& given, const std::string& name, bool zero_ok = false) {
  const std::string text = value_of(given, name);
  size_t used = 0;
  double v = 0;
  try {
    v = std::stod(text, &used);
  } catch (const std::exception&) {
    used = 0;
  }
  RG_CHECK(used == text.size() && used > 0 && std::isfinite(v), kOp, "--{} expects a number, got '{}'", name, text);
  RG_CHECK(zero_ok ? v >= 0 : v > 0, kOp, "--{} must be {} 0, got {}", name, zero_ok ? ">=" : ">", text);
  return v;
}

std::vector<int64_t> ranks_of(const std::string& text) {
  std::vector<int64_t> out;
  size_t at = 0;
  while (at <= text.size()) {
    const size_t comma = std::min(text.find(',', at), text.size());
    const std::string item = text.substr(at, comma - at);
    size_t used = 0;
    long long n = 0;
    try {
      n = std::stoll(item, &used);
    } catch (const std::exception&) {
      used = 0;
    }
    RG_CHECK(used == item.size() && used > 0 && n >= 1 && n <= 100000000, kOp,
             "--ranks expects whole numbers from 1 to 100000000 separated by commas, got '{}' in '{}'", item, text);
    out.push_back(n);
    at = comma + 1;
  }
  return out;
}

// 0.0123 -> "12.30 ms"
std::string seconds_text(double s) {
  if (s == 0) return "0";
  if (s < 1e-3) return fmt::format("{:.1f} us", s * 1e6);
  if (s < 1) return fmt::format("{:.2f} ms", s * 1e3);
  return fmt::format("{:.3f} s", s);
}

}  // namespace

int run_dp_simulate(int argc, char** argv) {
  for (int i = 0; i < argc; ++i) {
    if (std::string(argv[i]) == "--help" || std::string(argv[i]) == "-h") {
      print_help();
      return 0;
    }
  }
  const std::map<std::string, std::string> given = parse_command_flags(argc, argv, kFlags, kOp);
  NetworkModel net;
  net.bandwidth_bytes_per_s = positive(given, "bandwidth-gbps") * 1e9 / 8;
  net.latency_s = positive(given, "latency-us", /*zero_ok=*/true) * 1e-6;
  const std::string wire = value_of(given, "wire-bytes");
  RG_CHECK(wire == "4" || wire == "8", kOp, "--wire-bytes must be 4 (float32) or 8 (float64), got '{}'", wire);
  net.wire_bytes = wire == "4" ? 4 : 8;
  const std::vector<int64_t> ranks = ranks_of(value_of(given, "ranks"));

  BackwardProfile profile;
  if (given.count("run") > 0) {
    for (const char* shape : {"preset", "vocab", "d-model", "layers", "heads", "d-ff", "attention", "sigma", "tie",
                              "batch", "context", "gflops", "memory-gbs", "bucket-mb"}) {
      RG_CHECK(given.count(shape) == 0, kOp, "--run takes the shape and the times from the run; --{} is for a shape",
               shape);
    }
    profile = profile_from_run(given.at("run"));
  } else {
    nn::TransformerConfig c = model_from_flags(given, kOp, nullptr);
    const double batch = positive(given, "batch"), context_flag = positive(given, "context");
    RG_CHECK(batch == static_cast<int64_t>(batch), kOp, "--batch expects a whole number, got {}", batch);
    const int64_t context = given.count("context") > 0 || given.count("preset") == 0
                                ? static_cast<int64_t>(context_flag)
                                : c.context_length;
    c.context_length = context;
    const double mb = positive(given, "bucket-mb");
    profile = profile_from_shape(c, static_cast<int64_t>(batch), context, positive(given, "gflops"),
                                 static_cast<int64_t>(mb * 1e6), positive(given, "memory-gbs"));
  }
  std::vector<SimulatedStep> steps;
  for (int64_t n : ranks) steps.push_back(simulate_step(profile, net, n));

  const double bytes = static_cast<double>(profile.elements()) * net.wire_bytes;
  if (given.count("json") > 0) {
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
    return 0;
  }
  fmt::print("profile: {}\n", profile.source);
  fmt::print("  before the last backward {}, the last backward {} ({} buckets, {} elements), optimizer {}\n",
             seconds_text(profile.before_backward_s), seconds_text(profile.backward_s), profile.buckets.size(),
             profile.elements(), seconds_text(profile.optimizer_s));
  fmt::print("network: ring all-reduce of S bytes over N ranks = 2(N-1) x {} us + 2(N-1)/N x S / ({} Gb/s);\n",
             net.latency_s * 1e6, net.bandwidth_bytes_per_s * 8 / 1e9);
  fmt::print("  S = {} bytes a step ({} bytes an element{}); one channel, buckets in the order they are ready\n\n",
             bytes, net.wire_bytes, net.wire_bytes == 4 ? ": float32" : ": float64, as ropegrad's exact sums");
  fmt::print("| ranks N | step time | communication | exposed | overlap | efficiency |\n");
  fmt::print("|---:|---:|---:|---:|---:|---:|\n");
  for (const SimulatedStep& s : steps) {
    fmt::print("| {} | {} | {} | {} | {} | {:.1f}% |\n", s.ranks, seconds_text(s.step_s),
               seconds_text(s.communication_s), seconds_text(s.exposed_s),
               s.communication_s > 0 ? fmt::format("{:.1f}%", 100 * s.overlap) : "-", 100 * s.efficiency);
  }
  return 0;
}

}  // namespace ropegrad::tasks
