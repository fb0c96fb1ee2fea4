// The data-parallel scaling simulation (train/dp_simulate.h, `ropegrad dp-simulate`): the ring
// formula, a case worked by hand, behaviours that must hold for any profile, the profile of a real
// --micro-batch run and of a model shape, and the errors.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <filesystem>
#include <fstream>
#include <limits>
#include <sstream>
#include <stdexcept>

#include "nn/accounting.h"
#include "train/dp_simulate.h"
#include "train/trainer.h"
#include "tensor/printable.h"
#include "tests/support/temp_dir.h"
#include "tests/support/test_util.h"

using namespace ropegrad;
using namespace ropegrad::tasks;
using ::testing::HasSubstr;
using ropegrad::testing::read_text;
namespace fs = std::filesystem;

namespace ropegrad::tasks {
int run_dp_simulate(int argc, char** argv);  // cli/dp_simulate_cli.cpp
}

namespace {

std::string temp_dir(const std::string& tag) {
  static int counter = 0;
  const fs::path p = fs::temp_directory_path() /
                     ("ropegrad_test_dpsim_" + tag + "_" + std::to_string(::getpid()) + "_" + std::to_string(counter++));
  fs::remove_all(p);
  fs::create_directories(p);
  return p.string();
}

std::string run_cli(std::vector<std::string> args) {
  std::vector<char*> argv;
  for (auto& a : args) argv.push_back(a.data());
  ::testing::internal::CaptureStdout();
  int rc = 0;
  try {
    rc = run_dp_simulate(static_cast<int>(argv.size()), argv.data());
  } catch (...) {
    ::testing::internal::GetCapturedStdout();
    throw;
  }
  EXPECT_EQ(rc, 0);
  return ::testing::internal::GetCapturedStdout();
}

// 1 s of forward, a 0.5 s backward whose two buckets are ready at 0.2 s and 0.5 s, 0.1 s of optimizer.
BackwardProfile two_buckets(int64_t first_elements) {
  BackwardProfile p;
  p.before_backward_s = 1.0;
  p.backward_s = 0.5;
  p.optimizer_s = 0.1;
  p.buckets = {{first_elements, 0.2}, {3000, 0.5}};
  return p;
}

// 1 ms a message, 1 MB/s, float32.
NetworkModel slow_net() {
  NetworkModel net;
  net.latency_s = 1e-3;
  net.bandwidth_bytes_per_s = 1e6;
  net.wire_bytes = 4;
  return net;
}

nn::TransformerConfig small_shape() {
  nn::TransformerConfig c;
  c.vocab_size = 512;
  c.d_model = 64;
  c.num_layers = 3;
  c.num_heads = 4;
  c.d_ff = 192;
  c.context_length = 64;
  return c;
}

// A strict JSON reader (RFC 8259), enough to say whether the program's --json
// output is JSON and to read a string back out of it. Python is not there to
// do it; the tree's own JSON reader (io/safetensors.cpp) takes integers only.
struct Json {
  enum class Kind { Null, Bool, Number, String, Array, Object } kind = Kind::Null;
  std::string str;
  // An object's members as two lists (a pair holding a Json needs Json
  // complete, which it is not inside its own definition; a vector does not).
  std::vector<std::string> keys;
  std::vector<Json> values;
  std::vector<Json> items;
  const Json& at(const std::string& key) const {
    for (size_t i = 0; i < keys.size(); ++i) {
      if (keys[i] == key) return values[i];
    }
    throw std::runtime_error("no key " + key);
  }
};

class StrictJson {
 public:
  explicit StrictJson(std::string_view text) : t_(text) {}
  Json document() {
    Json v = value(0);
    space();
    if (i_ != t_.size()) bad("text after the value");
    return v;
  }

 private:
  [[noreturn]] void bad(const std::string& what) const {
    throw std::runtime_error("invalid JSON at byte " + std::to_string(i_) + ": " + what);
  }
  void space() {
    while (i_ < t_.size() && (t_[i_] == ' ' || t_[i_] == '\t' || t_[i_] == '\n' || t_[i_] == '\r')) ++i_;
  }
  bool eat(char c) {
    space();
    if (i_ < t_.size() && t_[i_] == c) return ++i_, true;
    return false;
  }
  void expect(char c) {
    if (!eat(c)) bad(std::string("expected ") + c);
  }
  Json value(int depth) {
    if (depth > 64) bad("too deep");
    space();
    if (i_ >= t_.size()) bad("end of text");
    Json v;
    const char c = t_[i_];
    if (c == '{') {
      v.kind = Json::Kind::Object;
      ++i_;
      if (eat('}')) return v;
      do {
        space();
        if (i_ >= t_.size() || t_[i_] != '"') bad("expected a key");
        std::string key = string();
        expect(':');
        Json member = value(depth + 1);
        v.keys.push_back(std::move(key));
        v.values.push_back(std::move(member));
      } while (eat(','));
      expect('}');
    } else if (c == '[') {
      v.kind = Json::Kind::Array;
      ++i_;
      if (eat(']')) return v;
      do v.items.push_back(value(depth + 1));
      while (eat(','));
      expect(']');
    } else if (c == '"') {
      v.kind = Json::Kind::String;
      v.str = string();
    } else if (t_.substr(i_, 4) == "true" || t_.substr(i_, 4) == "null") {
      v.kind = t_[i_] == 't' ? Json::Kind::Bool : Json::Kind::Null;
      i_ += 4;
    } else if (t_.substr(i_, 5) == "false") {
      v.kind = Json::Kind::Bool;
      i_ += 5;
    } else {
      v.kind = Json::Kind::Number;
      number();
    }
    return v;
  }
  void digits() {
    if (i_ >= t_.size() || !std::isdigit(static_cast<unsigned char>(t_[i_]))) bad("expected a digit");
    while (i_ < t_.size() && std::isdigit(static_cast<unsigned char>(t_[i_]))) ++i_;
  }
  void number() {  // -?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?
    if (t_[i_] == '-') ++i_;
    if (i_ < t_.size() && t_[i_] == '0') ++i_;
    else digits();
    if (i_ < t_.size() && t_[i_] == '.') ++i_, digits();
    if (i_ < t_.size() && (t_[i_] == 'e' || t_[i_] == 'E')) {
      ++i_;
      if (i_ < t_.size() && (t_[i_] == '+' || t_[i_] == '-')) ++i_;
      digits();
    }
  }
  std::string string() {  // at the opening quote; UTF-8 checked, escapes decoded
    ++i_;
    std::string out;
    for (;;) {
      if (i_ >= t_.size()) bad("unterminated string");
      const auto c = static_cast<unsigned char>(t_[i_++]);
      if (c == '"') return out;
      if (c < 0x20) bad("raw control character in a string");
      if (c == '\\') {
        if (i_ >= t_.size()) bad("unterminated escape");
        const char e = t_[i_++];
        const std::string simple = "\"\\/bfnrt", meant = "\"\\/\b\f\n\r\t";
        if (const size_t k = simple.find(e); k != std::string::npos) {
          out += meant[k];
        } else if (e == 'u') {
          if (t_.size() - i_ < 4) bad("short \\u escape");
          const unsigned cp = std::stoul(std::string(t_.substr(i_, 4)), nullptr, 16);
          i_ += 4;
          if (cp >= 0xD800 && cp <= 0xDFFF) bad("surrogate escapes are not used here");
          if (cp < 0x80) out += static_cast<char>(cp);
          else if (cp < 0x800) out += static_cast<char>(0xC0 | (cp >> 6)), out += static_cast<char>(0x80 | (cp & 0x3F));
          else
            out += static_cast<char>(0xE0 | (cp >> 12)), out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F)),
                out += static_cast<char>(0x80 | (cp & 0x3F));
        } else {
          bad(std::string("unknown escape \\") + e);
        }
        continue;
      }
      if (c < 0x80) {
        out += static_cast<char>(c);
        continue;
      }
      const size_t len = c >= 0xC2 && c <= 0xDF ? 2 : c >= 0xE0 && c <= 0xEF ? 3 : c >= 0xF0 && c <= 0xF4 ? 4 : 0;
      if (len == 0 || i_ - 1 + len > t_.size()) bad("a byte that is not UTF-8");
      for (size_t k = 1; k < len; ++k) {
        if ((static_cast<unsigned char>(t_[i_ - 1 + k]) & 0xC0) != 0x80) bad("a byte that is not UTF-8");
      }
      out.append(t_.substr(i_ - 1, len));
      i_ += len - 1;
    }
  }
  std::string_view t_;
  size_t i_ = 0;
};

// A tiny --micro-batch run into `dir`: dp.csv and dp_buckets.csv.
void micro_batch_run(const std::string& dir) {
  TrainConfig c;
  c.task = "copy";
  c.task_options.vocab = 8;
  c.task_options.length = 8;
  c.model.d_model = 16;
  c.model.num_layers = 1;
  c.model.num_heads = 2;
  c.model.d_ff = 32;
  c.steps = 3;
  c.batch_size = 4;
  c.micro_batch = 2;
  c.warmup = 1;
  c.eval_every = 3;
  c.eval_batches = 1;
  c.quiet = true;
  c.out_dir = dir;
  train(c, nullptr);
}

}  // namespace

TEST(DpSimulate, RingFormula) {
  NetworkModel net;  // 5 us, 100 Gb/s = 12.5e9 bytes/s
  // N = 4, 1 MB: 2 x 3 x 5 us + 2 x 3/4 x 1e6 / 12.5e9 = 30 us + 120 us.
  EXPECT_NEAR(ring_allreduce_seconds(1e6, 4, net), 150e-6, 1e-15);
  EXPECT_EQ(ring_allreduce_seconds(1e6, 1, net), 0.0);  // one rank sends nothing
  // N = 2: 2 x 5 us + 1 x S / beta.
  EXPECT_NEAR(ring_allreduce_seconds(12.5e9, 2, net), 10e-6 + 1.0, 1e-12);
  // The volume term tends to 2 S / beta as N grows; the latency term grows without bound.
  EXPECT_LT(ring_allreduce_seconds(1e6, 1024, net) - 2 * 1023 * 5e-6, 2e6 / 12.5e9);
}

TEST(DpSimulate, TwoBucketsWorkedByHand) {
  // N = 2: a bucket of E elements costs 2 x 1 ms + 1 x 4 E bytes / 1e6 bytes/s.
  //   bucket 0, 1000 elements: 2 ms + 4 ms = 6 ms,  from 0.2 s to 0.206 s
  //   bucket 1, 3000 elements: 2 ms + 12 ms = 14 ms, from 0.5 s (ready) to 0.514 s
  // exposed 0.514 - 0.5 = 14 ms of 20 ms: overlap 6 / 20 = 0.3;
  // step 1 + 0.5 + 0.014 + 0.1 = 1.614 s; efficiency 1.6 / 1.614.
  const SimulatedStep s = simulate_step(two_buckets(1000), slow_net(), 2);
  EXPECT_NEAR(s.communication_s, 0.020, 1e-12);
  EXPECT_NEAR(s.exposed_s, 0.014, 1e-12);
  EXPECT_NEAR(s.overlap, 0.3, 1e-9);
  EXPECT_NEAR(s.step_s, 1.614, 1e-12);
  EXPECT_NEAR(s.efficiency, 1.6 / 1.614, 1e-12);
  // One channel: a first bucket of 200000 elements (2 ms + 800 ms) ends at 1.002 s, so bucket 1
  // waits for it: 1.002 s to 1.016 s; exposed 0.516 s of 0.816 s.
  const SimulatedStep busy = simulate_step(two_buckets(200000), slow_net(), 2);
  EXPECT_NEAR(busy.communication_s, 0.816, 1e-12);
  EXPECT_NEAR(busy.exposed_s, 0.516, 1e-12);
  EXPECT_NEAR(busy.step_s, 1.6 + 0.516, 1e-12);
  // The buckets are taken in the order they are ready, whatever their order in the profile.
  BackwardProfile swapped = two_buckets(1000);
  std::swap(swapped.buckets[0], swapped.buckets[1]);
  EXPECT_NEAR(simulate_step(swapped, slow_net(), 2).step_s, 1.614, 1e-12);
}

TEST(DpSimulate, OneRankNoCommunicationAndAPerfectNetworkIsEfficiencyOne) {
  const BackwardProfile p = profile_from_shape(small_shape(), 4, 64, 50, 20000, 10);
  const SimulatedStep one = simulate_step(p, NetworkModel{}, 1);
  EXPECT_EQ(one.communication_s, 0.0);
  EXPECT_EQ(one.exposed_s, 0.0);
  EXPECT_EQ(one.efficiency, 1.0);
  EXPECT_DOUBLE_EQ(one.step_s, p.before_backward_s + p.backward_s + p.optimizer_s);
  NetworkModel perfect;
  perfect.latency_s = 0;
  perfect.bandwidth_bytes_per_s = std::numeric_limits<double>::infinity();
  for (int64_t n : {2, 8, 1024}) {
    const SimulatedStep s = simulate_step(p, perfect, n);
    EXPECT_EQ(s.efficiency, 1.0) << n << " ranks";
    EXPECT_EQ(s.step_s, one.step_s) << n << " ranks";
  }
}

TEST(DpSimulate, MoreBandwidthNeverSlowerMoreRanksNeverFaster) {
  const BackwardProfile p = profile_from_shape(small_shape(), 4, 64, 50, 20000, 10);
  for (int wire : {4, 8}) {
    for (int64_t n : {2, 8, 64, 1024}) {
      double previous = std::numeric_limits<double>::infinity();
      for (double gbps : {0.1, 1.0, 10.0, 100.0, 1000.0}) {
        NetworkModel net;
        net.bandwidth_bytes_per_s = gbps * 1e9 / 8;
        net.wire_bytes = wire;
        const SimulatedStep s = simulate_step(p, net, n);
        EXPECT_LE(s.step_s, previous) << gbps << " Gb/s, " << n << " ranks";
        EXPECT_GE(s.overlap, 0.0);
        EXPECT_LE(s.overlap, 1.0);
        previous = s.step_s;
      }
    }
    double previous = 0;
    for (int64_t n : {1, 2, 4, 8, 16, 128, 1024}) {
      NetworkModel net;
      net.wire_bytes = wire;
      const double step = simulate_step(p, net, n).step_s;
      EXPECT_GE(step, previous) << n << " ranks";
      previous = step;
    }
  }
  // Sending float64 costs more than float32 once bandwidth matters.
  NetworkModel slow;
  slow.bandwidth_bytes_per_s = 1e6;
  NetworkModel slow64 = slow;
  slow64.wire_bytes = 8;
  EXPECT_GT(simulate_step(p, slow64, 8).step_s, simulate_step(p, slow, 8).step_s);
}

TEST(DpSimulate, ShapeProfileFollowsTheAccounting) {
  const nn::TransformerConfig c = small_shape();
  const double gflops = 50;
  const BackwardProfile p = profile_from_shape(c, 4, 64, gflops, 20000, 10);
  const nn::Accounting a = nn::account(c, 4, 64);
  EXPECT_EQ(p.elements(), a.parameters());
  EXPECT_NEAR(p.backward_s, a.backward_flops() / (gflops * 1e9), 1e-15);
  EXPECT_NEAR(p.before_backward_s, a.forward_flops() / (gflops * 1e9), 1e-15);
  EXPECT_NEAR(p.optimizer_s, 28.0 * a.parameters() / 10e9, 1e-15);
  ASSERT_GE(p.buckets.size(), 4u);
  // lm_head (512 x 64 = 32768 elements, over 20000 bytes / 4) closes the first bucket alone, ready
  // after its own backward; the embedding's bucket is ready at the backward's end.
  EXPECT_EQ(p.buckets.front().elements, 512 * 64);  // ln_final (64) opens the next one
  EXPECT_NEAR(p.buckets.front().ready_s, a.rows.back().backward_flops / (gflops * 1e9), 1e-15);
  EXPECT_DOUBLE_EQ(p.buckets.back().ready_s, p.backward_s);
  for (size_t k = 1; k < p.buckets.size(); ++k) {
    EXPECT_GE(p.buckets[k].ready_s, p.buckets[k - 1].ready_s) << "bucket " << k;
    EXPECT_GE(p.buckets[k - 1].elements * 4, 20000) << "bucket " << k - 1 << " closed before holding 20000 bytes";
  }
}

TEST(DpSimulate, ProfileOfARealMicroBatchRun) {
  const std::string dir = temp_dir("run");
  TrainConfig c;
  c.task = "copy";
  c.task_options.vocab = 8;
  c.task_options.length = 8;
  c.model.d_model = 32;
  c.model.num_layers = 2;
  c.model.num_heads = 2;
  c.model.d_ff = 64;
  c.steps = 3;
  c.batch_size = 8;
  c.micro_batch = 4;
  c.warmup = 1;
  c.eval_every = 3;
  c.eval_batches = 1;
  c.quiet = true;
  c.out_dir = dir;
  const TrainResult r = train(c, nullptr);
  const BackwardProfile p = profile_from_run(dir);
  EXPECT_EQ(p.elements(), r.parameters);
  EXPECT_EQ(p.buckets.size(), 1u);  // under train's 1 MB bucket
  EXPECT_GT(p.backward_s, 0.0);
  EXPECT_GT(p.before_backward_s, 0.0);  // micro-batch 0's forward and backward and micro-batch 1's forward
  EXPECT_GT(p.optimizer_s, 0.0);
  EXPECT_THAT(p.source, HasSubstr("ranks 1, medians of 2 steps"));  // step 1 left out
  const std::string out = run_cli({"--run", dir, "--ranks", "1,8,64"});
  EXPECT_THAT(out, HasSubstr(fmt::format("(1 buckets, {} elements)", r.parameters)));
  EXPECT_THAT(out, HasSubstr(fmt::format("S = {} bytes a step", 4 * r.parameters)));
  // A time is printed in the unit its size calls for (797 us on a fast
  // machine, 1.20 ms on a slower one): the test takes any of them.
  const std::string time = "[0-9.]+ (us|ms|s)";
  EXPECT_THAT(out, ::testing::ContainsRegex("\\| 1 \\| " + time + " \\| 0 \\| 0 \\| - \\| 100.0% \\|"));
  EXPECT_THAT(out, ::testing::ContainsRegex("\\| 64 \\| " + time + " \\|"));
  fs::remove_all(dir);
}

TEST(DpSimulate, RunFilesReadByHand) {
  const std::string dir = temp_dir("hand");
  std::ofstream(dir + "/dp.csv") << "step,ranks,compute_s,communication_s,waiting_s,bytes_summed,ring_bytes_per_rank,"
                                    "before_backward_s,backward_s,optimizer_s\n"
                                    "1,2,9,0,0,80,80,9.0,9.0,9.0\n"
                                    "2,2,1,0,0,80,80,0.3,0.2,0.01\n"
                                    "3,2,1,0,0,80,80,0.5,0.4,0.03\n"
                                    "4,2,1,0,0,80,80,0.4,0.3,0.02\n";
  std::ofstream(dir + "/dp_buckets.csv") << "step,bucket,elements,ready_s\n1,0,6,9\n1,1,4,9\n"
                                            "2,0,6,0.1\n2,1,4,0.2\n3,0,6,0.3\n3,1,4,0.4\n4,0,6,0.2\n4,1,4,0.3\n";
  const BackwardProfile p = profile_from_run(dir);  // medians of steps 2..4
  EXPECT_DOUBLE_EQ(p.before_backward_s, 0.4);
  EXPECT_DOUBLE_EQ(p.backward_s, 0.3);
  EXPECT_DOUBLE_EQ(p.optimizer_s, 0.02);
  ASSERT_EQ(p.buckets.size(), 2u);
  EXPECT_EQ(p.buckets[0].elements, 6);
  EXPECT_DOUBLE_EQ(p.buckets[0].ready_s, 0.2);
  EXPECT_DOUBLE_EQ(p.buckets[1].ready_s, 0.3);
  EXPECT_THAT(p.source, HasSubstr("ranks 2, medians of 3 steps"));
  // Each step once (and each step's bucket once): a step twice is two runs' rows, never mixed into one profile.
  // (The fuzzer found the first case: rows all of step 1 left no step to take a median of.)
  std::ofstream(dir + "/dp.csv") << "step,ranks,before_backward_s,backward_s,optimizer_s\n1,2,1,1,1\n1,2,1,1,1\n";
  EXPECT_RG_ERROR(profile_from_run(dir), "dp-simulate", "dp.csv' line 3: step 1 again (line 2 has it)",
                  "the rows of more than one run");
  std::ofstream(dir + "/dp.csv") << "step,ranks,before_backward_s,backward_s,optimizer_s\n1,2,1,1,1\n2,2,1,1,1\n";
  std::ofstream(dir + "/dp_buckets.csv") << "step,bucket,elements,ready_s\n2,0,6,0.1\n2,0,6,0.2\n";
  EXPECT_RG_ERROR(profile_from_run(dir), "dp-simulate", "dp_buckets.csv' line 3: step 2's bucket 0 again (line 2 has it)");
  // A file of an older ropegrad, without the profile's columns.
  std::ofstream(dir + "/dp.csv") << "step,ranks,compute_s\n1,1,0.5\n";
  EXPECT_RG_ERROR(profile_from_run(dir), "dp-simulate", "dp.csv", "no column 'before_backward_s'");
  std::ofstream(dir + "/dp.csv") << "step,ranks,compute_s,before_backward_s,backward_s,optimizer_s\n1,1,0.5,x,1,1\n";
  EXPECT_RG_ERROR(profile_from_run(dir), "dp-simulate", dir + "/dp.csv:2: before_backward_s 'x' is not a number",
                  "expected a finite number of seconds in 0..1e+06");
  std::ofstream(dir + "/dp.csv") << "step,ranks,compute_s,before_backward_s,backward_s,optimizer_s\n1,1,0.5\n";
  EXPECT_RG_ERROR(profile_from_run(dir), "dp-simulate", "line 2 has 3 fields, the header 6");
  fs::remove_all(dir);
  EXPECT_RG_ERROR(profile_from_run(dir), "dp-simulate", "cannot read", dir + "/dp.csv");
}

TEST(DpSimulate, TheCommandStatesItsModelAndPrintsJson) {
  const std::string out = run_cli({"--preset", "small", "--gflops", "100000", "--ranks", "1,8"});
  EXPECT_THAT(out, HasSubstr("190460160 parameters, batch 8 x context 1024 per rank, 100000 GFLOP/s"));
  EXPECT_THAT(out, HasSubstr("2(N-1) x 5 us + 2(N-1)/N x S / (100 Gb/s)"));
  EXPECT_THAT(out, HasSubstr("S = 761840640 bytes a step (4 bytes an element: float32)"));
  const std::string f64 = run_cli({"--preset", "small", "--wire-bytes", "8", "--ranks", "8", "--json"});
  EXPECT_THAT(f64, HasSubstr("\"wire_bytes\": 8"));
  EXPECT_THAT(f64, HasSubstr("\"elements\": 190460160"));
  EXPECT_THAT(f64, HasSubstr("{\"ranks\": 8, \"step_s\": "));
}

// --run DIR --json: DIR is a string of the JSON, escaped as JSON escapes it
// (a `"` or `\` in it made the output invalid), and read back it is DIR.
TEST(DpSimulate, JsonOfARunWhosePathNeedsEscapingIsValidJson) {
  const std::string dir = temp_dir("quote") + "/a \"quoted\" \\ back\tslash \xc3\xa9";
  micro_batch_run(dir);
  const std::string out = run_cli({"--run", dir, "--ranks", "1,8", "--json"});
  Json doc;
  ASSERT_NO_THROW(doc = StrictJson(out).document()) << out;
  EXPECT_EQ(doc.at("profile").at("source").str, fmt::format("run {} (ranks 1, medians of 2 steps)", dir));
  EXPECT_EQ(doc.at("steps").items.size(), 2u);
  // The reader itself refuses what the old output was: a raw quote inside a string.
  EXPECT_THROW(StrictJson(R"({"source": "run a"b"})").document(), std::runtime_error);
  EXPECT_THROW(StrictJson("{\"source\": \"a\\q\"}").document(), std::runtime_error);
  EXPECT_THROW(StrictJson("{\"x\": 01}").document(), std::runtime_error);
  fs::remove_all(fs::path(dir).parent_path());
}

// The one JSON string writer (tensor/printable.h): bytes that are not UTF-8
// (a path may hold any) become U+FFFD, so the output is JSON whatever the path.
TEST(DpSimulate, JsonStringIsValidJsonForAnyBytes) {
  EXPECT_EQ(json_string("a\"b\\c\n\x01"), "\"a\\\"b\\\\c\\u000a\\u0001\"");
  EXPECT_EQ(json_string("\xc3\xa9"), "\"\xc3\xa9\"");
  EXPECT_EQ(json_string("\xff\xc3"), "\"\xef\xbf\xbd\xef\xbf\xbd\"");
  for (int b = 0; b < 256; ++b) {
    const std::string text = std::string("x") + static_cast<char>(b) + "\xe2\x82";  // and a cut sequence
    const std::string quoted = json_string(text);
    EXPECT_NO_THROW(StrictJson(quoted).document()) << "byte " << b << ": " << quoted;
  }
}

// dp.csv and dp_buckets.csv are read by their fields' rules (train/run_files.h):
// a huge element count was read as -9.2e18 (negative bytes and times), and an
// inf ready time was accepted. Each is an error naming the file, the line,
// the field and the range.
TEST(DpSimulate, HostileNumbersInARunsFilesAreNamed) {
  const std::string dir = temp_dir("hostile");
  micro_batch_run(dir);
  EXPECT_EQ(profile_from_run(dir).buckets.size(), 1u);
  const std::string buckets = read_text(dir + "/dp_buckets.csv"), steps = read_text(dir + "/dp.csv");
  struct Case {
    std::string file, column, value, words;
  };
  for (const Case& c : std::vector<Case>{
           {"dp_buckets.csv", "elements", "9223372036854775807", "is outside the range"},
           {"dp_buckets.csv", "elements", "99999999999999999999", "is outside the range"},
           {"dp_buckets.csv", "elements", "-5", "is outside the range"},
           {"dp_buckets.csv", "elements", "2.5", "is not a whole number"},
           {"dp_buckets.csv", "ready_s", "inf", "is not a finite number"},
           {"dp_buckets.csv", "ready_s", "nan", "is not a finite number"},
           {"dp_buckets.csv", "ready_s", "-0.5", "is outside the range"},
           {"dp_buckets.csv", "bucket", "", "is empty"},
           {"dp.csv", "backward_s", "1e300", "is outside the range"},
           {"dp.csv", "ranks", "0", "is outside the range"},
           {"dp.csv", "step", "0x10", "is not a number"},
       }) {
    SCOPED_TRACE(c.file + " " + c.column + "=" + c.value);
    const std::string& text = c.file == "dp.csv" ? steps : buckets;
    // The value in the first row's field of that column.
    std::vector<std::string> lines;
    std::stringstream in(text);
    for (std::string line; std::getline(in, line);) lines.push_back(line);
    std::vector<std::string> names, cells;
    std::stringstream h(lines[0]), r(lines[1]);
    for (std::string x; std::getline(h, x, ',');) names.push_back(x);
    for (std::string x; std::getline(r, x, ',');) cells.push_back(x);
    cells[std::find(names.begin(), names.end(), c.column) - names.begin()] = c.value;
    lines[1] = fmt::format("{}", fmt::join(cells, ","));
    std::ofstream(dir + "/" + c.file) << fmt::format("{}\n", fmt::join(lines, "\n"));
    EXPECT_RG_ERROR(profile_from_run(dir), "dp-simulate", fmt::format("{}/{}:2: {} ", dir, c.file, c.column),
                    c.words, "expected a");
    std::ofstream(dir + "/" + c.file) << text;
  }
  // Each bucket within its range, but more than a model's elements in all.
  std::ofstream(dir + "/dp_buckets.csv") << "step,bucket,elements,ready_s\n2,0,900000000000,0.1\n2,1,900000000000,0.2\n";
  EXPECT_RG_ERROR(profile_from_run(dir), "dp-simulate", "buckets hold 1800000000000 elements in all, more than");
  fs::remove_all(dir);
}

TEST(DpSimulate, BadFlagsNameTheValue) {
  EXPECT_RG_ERROR(run_cli({"--bandwidth-gbps", "0"}), "ropegrad dp-simulate", "--bandwidth-gbps must be a real number in [0.001, 1e6] Gb/s, got 0");
  EXPECT_RG_ERROR(run_cli({"--latency-us", "-1"}), "ropegrad dp-simulate", "--latency-us must be a real number in [0, 1e6] microseconds, got -1");
  EXPECT_RG_ERROR(run_cli({"--gflops", "fast"}), "ropegrad dp-simulate", "--gflops must be a real number in [0.001, 1e9] GFLOP/s, got 'fast'");
  EXPECT_RG_ERROR(run_cli({"--wire-bytes", "2"}), "ropegrad dp-simulate", "--wire-bytes must be one of 4 | 8, got 2");
  EXPECT_RG_ERROR(run_cli({"--ranks", "8,x"}), "ropegrad dp-simulate", "--ranks must be whole numbers in 1..100000000 separated by commas, got 'x' in '8,x'");
  EXPECT_RG_ERROR(run_cli({"--ranks", "0"}), "ropegrad dp-simulate", "got 0 in '0'");
  EXPECT_RG_ERROR(run_cli({"--batch", "2.5"}), "ropegrad dp-simulate", "--batch must be a whole number in 1..1000000000, got 2.5");
  EXPECT_RG_ERROR(run_cli({"--run", "x", "--preset", "small"}), "ropegrad dp-simulate", "--preset is for a shape");
  EXPECT_RG_ERROR(run_cli({"--preset", "tiny"}), "ropegrad dp-simulate", "got 'tiny'");
  EXPECT_RG_ERROR(run_cli({"--frobnicate"}), "ropegrad dp-simulate", "unknown argument '--frobnicate'");
  EXPECT_RG_ERROR(run_cli({"--gflops"}), "ropegrad dp-simulate", "--gflops needs a value");
}
