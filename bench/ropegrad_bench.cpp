// ropegrad-bench: how fast ropegrad's ops are next to the raw code they wrap.
//
// Each ropegrad benchmark has a reference measured in the same run, on buffers
// of the same size that are allocated (and touched) before timing starts:
//   matmul       ropegrad::matmul(a, b)               vs cblas_sgemm (64 calls when batched)
//   matmul b^T   ropegrad::matmul(a, transpose(bt))   vs cblas_sgemm(..., CblasTrans, ...)
//   add / mul    a + b, a * b (a fresh output per op)  vs a plain loop into a preallocated output
//   add_         ropegrad::add_(x, y)                 vs the plain in-place loop x[i] += y[i]
//   autograd     1000 tiny ops, forward + backward     reported as µs per op (no reference)
// plus two diagnostic rows for add that split allocation from arithmetic.
//
// How the summary is computed: a reporter wraps Google Benchmark's console
// reporter and keeps the real time per iteration of every repetition. Unless
// the command line says otherwise the run uses 7 repetitions with random
// interleaving, so both sides of a pair are sampled at several moments of a
// noisy shared machine; the summary takes each side's median repetition and
// prints ratio = reference_time / ropegrad_time (1.0: as fast as the reference,
// higher is better). Nothing here asserts a time: it only reports.
#include <benchmark/benchmark.h>
#include <cblas.h>
#include <sys/resource.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <memory>
#include <new>
#include <string>
#include <string_view>
#include <vector>

#include "autograd/ops.h"
#include "tensor/parallel.h"
#include "tensor/elementwise.h"

namespace rg = ropegrad;

namespace {

// ---- raw buffers for the references ---------------------------------------------------

struct FreeDeleter {
  void operator()(float* p) const { std::free(p); }
};
using RawBuffer = std::unique_ptr<float[], FreeDeleter>;

// 64-byte aligned like ropegrad's Storage, and written once so that no page
// fault lands inside the timed loop.
RawBuffer raw_buffer(int64_t n) {
  const size_t bytes = (static_cast<size_t>(n) * sizeof(float) + 63) / 64 * 64;
  auto* p = static_cast<float*>(std::aligned_alloc(64, std::max<size_t>(bytes, 64)));
  if (p == nullptr) throw std::bad_alloc();
  std::fill_n(p, n, 0.0f);
  return RawBuffer(p);
}

// A raw copy of a contiguous float32 tensor: both sides compute on equal data.
RawBuffer raw_copy(const rg::Tensor& t) {
  RawBuffer buf = raw_buffer(t.numel());
  std::memcpy(buf.get(), t.data_ptr<float>(), static_cast<size_t>(t.numel()) * sizeof(float));
  return buf;
}

int64_t minor_page_faults() {
  rusage usage{};
  getrusage(RUSAGE_SELF, &usage);
  return usage.ru_minflt;
}

// What a benchmark's calls cost besides arithmetic, reported as counters:
//   alloc_MB      most bytes ropegrad held at once beyond what was live before
//                 the loop. One output per call shows the output's size; more
//                 means a hidden copy (e.g. of a transposed operand).
//   faults/iter   minor page faults per iteration: a fresh, untouched output
//                 block costs one per 4 KiB page.
class CostProbe {
 public:
  CostProbe() : faults_(minor_page_faults()) {
    rg::reset_peak_memory();
    base_ = rg::memory_stats().current_bytes;
  }
  void report(benchmark::State& state) const {
    state.counters["alloc_MB"] =
        static_cast<double>(rg::memory_stats().peak_bytes - base_) / 1e6;
    state.counters["faults/iter"] =
        static_cast<double>(minor_page_faults() - faults_) / static_cast<double>(state.iterations());
  }

 private:
  int64_t base_ = 0;
  int64_t faults_ = 0;
};

// ---- 1. matmul ------------------------------------------------------------------------

struct MatmulShape {
  int64_t batch;  // 0: plain 2-D operands
  int64_t m, k, n;
};

rg::Shape with_batch(const MatmulShape& s, int64_t rows, int64_t cols) {
  return s.batch > 0 ? rg::Shape{s.batch, rows, cols} : rg::Shape{rows, cols};
}

void set_matmul_counters(benchmark::State& state, const MatmulShape& s) {
  const double flops = 2.0 * static_cast<double>(std::max<int64_t>(1, s.batch) * s.m * s.k * s.n);
  state.counters["FLOP/s"] = benchmark::Counter(flops, benchmark::Counter::kIsIterationInvariantRate);
}

// a: (batch?, m, k). b: (batch?, k, n), or with trans_b the transposed view of
// a (batch?, n, k) tensor, which matmul must hand to BLAS as a Trans flag.
void bm_matmul_ropegrad(benchmark::State& state, MatmulShape s, bool trans_b) {
  rg::Generator gen(1);
  const rg::Tensor a = rg::rand(with_batch(s, s.m, s.k), rg::DType::Float32, &gen);
  const rg::Tensor b = trans_b
      ? rg::transpose(rg::rand(with_batch(s, s.n, s.k), rg::DType::Float32, &gen), -1, -2)
      : rg::rand(with_batch(s, s.k, s.n), rg::DType::Float32, &gen);
  CostProbe probe;
  for (auto _ : state) {
    rg::Tensor c = rg::matmul(a, b);
    benchmark::DoNotOptimize(c.raw_data());
    benchmark::ClobberMemory();
  }
  set_matmul_counters(state, s);
  probe.report(state);
}

void bm_matmul_cblas(benchmark::State& state, MatmulShape s, bool trans_b) {
  rg::Generator gen(1);
  const RawBuffer a = raw_copy(rg::rand(with_batch(s, s.m, s.k), rg::DType::Float32, &gen));
  const RawBuffer b = raw_copy(trans_b ? rg::rand(with_batch(s, s.n, s.k), rg::DType::Float32, &gen)
                                       : rg::rand(with_batch(s, s.k, s.n), rg::DType::Float32, &gen));
  const RawBuffer c = raw_buffer(std::max<int64_t>(1, s.batch) * s.m * s.n);
  const auto m = static_cast<int>(s.m), n = static_cast<int>(s.n), k = static_cast<int>(s.k);
  // The reference uses OpenBLAS's own threads, as many as ropegrad's pool
  // (ropegrad runs BLAS single-threaded inside its pool and resets this).
  openblas_set_num_threads(rg::num_threads());
  CostProbe probe;
  for (auto _ : state) {
    for (int64_t i = 0; i < std::max<int64_t>(1, s.batch); ++i) {
      cblas_sgemm(CblasRowMajor, CblasNoTrans, trans_b ? CblasTrans : CblasNoTrans, m, n, k, 1.0f,
                  a.get() + i * s.m * s.k, k, b.get() + i * s.k * s.n, trans_b ? k : n, 0.0f,
                  c.get() + i * s.m * s.n, n);
    }
    benchmark::DoNotOptimize(c.get());
    benchmark::ClobberMemory();
  }
  set_matmul_counters(state, s);
  probe.report(state);
}

// ---- 2. elementwise on 16M float32 ----------------------------------------------------

constexpr int64_t kElems = int64_t{1} << 24;  // 16M floats = 64 MB per operand

// The plain loops the elementwise ops are compared with; noinline and
// __restrict so they compile to the vectorised loop a C programmer would write.
__attribute__((noinline)) void raw_add(const float* __restrict a, const float* __restrict b,
                                       float* __restrict out, int64_t n) {
  for (int64_t i = 0; i < n; ++i) out[i] = a[i] + b[i];
}
__attribute__((noinline)) void raw_mul(const float* __restrict a, const float* __restrict b,
                                       float* __restrict out, int64_t n) {
  for (int64_t i = 0; i < n; ++i) out[i] = a[i] * b[i];
}
__attribute__((noinline)) void raw_add_inplace(float* __restrict x, const float* __restrict y,
                                               int64_t n) {
  for (int64_t i = 0; i < n; ++i) x[i] += y[i];
}

// Inputs shared by every elementwise benchmark, made once (16M random numbers
// take a while). The reference loops read the same bytes through raw pointers.
struct ElementwiseData {
  rg::Tensor a, b;    // [16M] float32
  rg::Tensor x;       // add_ destination (ropegrad side)
  RawBuffer raw_x;    // add_ destination (reference side)
  RawBuffer raw_out;  // preallocated output of the reference loops
};

ElementwiseData& elementwise_data() {
  static ElementwiseData d = [] {
    rg::Generator gen(2);
    ElementwiseData e;
    e.a = rg::rand({kElems}, rg::DType::Float32, &gen);
    e.b = rg::rand({kElems}, rg::DType::Float32, &gen);
    e.x = rg::clone(e.a);
    e.raw_x = raw_copy(e.a);
    e.raw_out = raw_buffer(kElems);
    return e;
  }();
  return d;
}

void set_elementwise_counters(benchmark::State& state, int64_t streams) {
  // Bytes the op must move: inputs read + output written.
  state.SetBytesProcessed(state.iterations() * streams * kElems *
                          static_cast<int64_t>(sizeof(float)));
}

enum class BinOp { Add, Mul };

void bm_binary_ropegrad(benchmark::State& state, BinOp op) {
  const ElementwiseData& d = elementwise_data();
  CostProbe probe;
  for (auto _ : state) {
    rg::Tensor c = op == BinOp::Add ? d.a + d.b : d.a * d.b;  // allocates its output, like any op
    benchmark::DoNotOptimize(c.raw_data());
    benchmark::ClobberMemory();
  }
  set_elementwise_counters(state, 3);
  probe.report(state);
}

void bm_binary_loop(benchmark::State& state, BinOp op) {
  const ElementwiseData& d = elementwise_data();
  const float* a = d.a.data_ptr<float>();
  const float* b = d.b.data_ptr<float>();
  float* out = d.raw_out.get();
  CostProbe probe;
  for (auto _ : state) {
    if (op == BinOp::Add) {
      raw_add(a, b, out, kElems);
    } else {
      raw_mul(a, b, out, kElems);
    }
    benchmark::DoNotOptimize(out);
    benchmark::ClobberMemory();
  }
  set_elementwise_counters(state, 3);
  probe.report(state);
}

void bm_add_inplace_ropegrad(benchmark::State& state) {
  ElementwiseData& d = elementwise_data();
  CostProbe probe;
  for (auto _ : state) {
    rg::add_(d.x, d.b);
    benchmark::DoNotOptimize(d.x.raw_data());
    benchmark::ClobberMemory();
  }
  set_elementwise_counters(state, 3);
  probe.report(state);
}

void bm_add_inplace_loop(benchmark::State& state) {
  ElementwiseData& d = elementwise_data();
  CostProbe probe;
  for (auto _ : state) {
    raw_add_inplace(d.raw_x.get(), d.b.data_ptr<float>(), kElems);
    benchmark::DoNotOptimize(d.raw_x.get());
    benchmark::ClobberMemory();
  }
  set_elementwise_counters(state, 3);
  probe.report(state);
}

// Diagnostic: the plain loop, but into a fresh 64 MB block per call (what an
// op that allocates its output pays: page faults and the kernel zeroing pages).
void bm_add_loop_fresh_output(benchmark::State& state) {
  const ElementwiseData& d = elementwise_data();
  CostProbe probe;
  for (auto _ : state) {
    auto* out = static_cast<float*>(std::aligned_alloc(64, kElems * sizeof(float)));
    raw_add(d.a.data_ptr<float>(), d.b.data_ptr<float>(), out, kElems);
    benchmark::DoNotOptimize(out);
    benchmark::ClobberMemory();
    std::free(out);
  }
  set_elementwise_counters(state, 3);
  probe.report(state);
}

// Diagnostic: ropegrad's own elementwise kernel (kernels::map_into, the loop
// under a + b) writing into a preallocated output: the arithmetic alone.
void bm_add_kernel_preallocated(benchmark::State& state) {
  const ElementwiseData& d = elementwise_data();
  const rg::Tensor out = rg::zeros({kElems}, rg::DType::Float32);  // pages touched by the zeroing
  CostProbe probe;
  for (auto _ : state) {
    rg::kernels::map_into<float, float, float>(out, [](float x, float y) { return x + y; },
                                               {d.a, d.b});
    benchmark::DoNotOptimize(out.raw_data());
    benchmark::ClobberMemory();
  }
  set_elementwise_counters(state, 3);
  probe.report(state);
}

// ---- 3. autograd overhead ---------------------------------------------------------------

constexpr int kChainOps = 1000;

// A chain of 1000 ops on a [16] float32 tensor that requires grad: cycles of
// y * 0.999, y + 0.001, tanh(y); then backward. The data is tiny, so the time
// is what the framework spends per op: dispatch, allocation, graph nodes.
void bm_autograd_chain(benchmark::State& state) {
  using Clock = std::chrono::steady_clock;
  rg::Generator gen(3);
  rg::Tensor x = rg::rand({16}, rg::DType::Float32, &gen);
  x.requires_grad_();
  const rg::Tensor seed = rg::ones({16});
  double forward_s = 0, backward_s = 0;
  for (auto _ : state) {
    const auto t0 = Clock::now();
    rg::Tensor y = x;
    for (int i = 0; i < kChainOps; ++i) {
      switch (i % 3) {
        case 0: y = y * 0.999; break;
        case 1: y = y + 0.001; break;
        default: y = rg::tanh(y); break;
      }
    }
    const auto t1 = Clock::now();
    rg::backward(y, seed);
    y = rg::Tensor();  // drop the graph: freeing it is part of the cost
    const auto t2 = Clock::now();
    forward_s += std::chrono::duration<double>(t1 - t0).count();
    backward_s += std::chrono::duration<double>(t2 - t1).count();
    x.set_grad(rg::Tensor());  // as zero_grad(set_to_none=True)
  }
  const double per_op = 1e6 / (static_cast<double>(state.iterations()) * kChainOps);
  state.counters["us_per_op"] = (forward_s + backward_s) * per_op;
  state.counters["fwd_us_per_op"] = forward_s * per_op;
  state.counters["bwd_us_per_op"] = backward_s * per_op;
}

// ---- registration and the pairs the summary compares ------------------------------------

struct Pair {
  std::string label;
  std::string ropegrad;   // benchmark name
  std::string reference;  // benchmark name
  double target;          // minimum ratio asked for; 0 for a diagnostic row
};

std::vector<Pair>& pairs() {
  static std::vector<Pair> p;
  return p;
}

template <typename F>
void add(const std::string& name, F&& f, benchmark::TimeUnit unit) {
  benchmark::RegisterBenchmark(name.c_str(), std::forward<F>(f))->UseRealTime()->Unit(unit);
}

void register_benchmarks() {
  const struct {
    const char* label;
    MatmulShape shape;
  } matmuls[] = {
      {"512x512 @ 512x512", {0, 512, 512, 512}},
      {"2048x256 @ 256x768", {0, 2048, 256, 768}},
      {"64 x (128x32 @ 32x128)", {64, 128, 32, 128}},
  };
  for (const bool trans_b : {false, true}) {
    for (const auto& mm : matmuls) {
      const std::string base = std::string("matmul/") + mm.label + (trans_b ? " (b^T view)" : "");
      const MatmulShape s = mm.shape;
      add(base + "/ropegrad", [s, trans_b](benchmark::State& st) { bm_matmul_ropegrad(st, s, trans_b); },
          benchmark::kMicrosecond);
      add(base + "/cblas_sgemm", [s, trans_b](benchmark::State& st) { bm_matmul_cblas(st, s, trans_b); },
          benchmark::kMicrosecond);
      pairs().push_back({std::string("matmul ") + mm.label + (trans_b ? ", b^T view" : ""),
                         base + "/ropegrad", base + "/cblas_sgemm", 0.95});
    }
  }

  add("add 16M f32/ropegrad a + b", [](benchmark::State& st) { bm_binary_ropegrad(st, BinOp::Add); },
      benchmark::kMillisecond);
  add("add 16M f32/loop into preallocated", [](benchmark::State& st) { bm_binary_loop(st, BinOp::Add); },
      benchmark::kMillisecond);
  pairs().push_back({"add 16M f32 (a + b)", "add 16M f32/ropegrad a + b",
                     "add 16M f32/loop into preallocated", 0.8});
  add("mul 16M f32/ropegrad a * b", [](benchmark::State& st) { bm_binary_ropegrad(st, BinOp::Mul); },
      benchmark::kMillisecond);
  add("mul 16M f32/loop into preallocated", [](benchmark::State& st) { bm_binary_loop(st, BinOp::Mul); },
      benchmark::kMillisecond);
  pairs().push_back({"mul 16M f32 (a * b)", "mul 16M f32/ropegrad a * b",
                     "mul 16M f32/loop into preallocated", 0.8});
  add("add_ 16M f32/ropegrad add_(x, y)", bm_add_inplace_ropegrad, benchmark::kMillisecond);
  add("add_ 16M f32/in-place loop", bm_add_inplace_loop, benchmark::kMillisecond);
  pairs().push_back({"add_ 16M f32 (in place)", "add_ 16M f32/ropegrad add_(x, y)",
                     "add_ 16M f32/in-place loop", 0.8});
  add("add 16M f32/diag: loop into fresh 64 MB output", bm_add_loop_fresh_output,
      benchmark::kMillisecond);
  add("add 16M f32/diag: ropegrad kernel into preallocated", bm_add_kernel_preallocated,
      benchmark::kMillisecond);
  pairs().push_back({"diag: loop, fresh output vs preallocated",
                     "add 16M f32/diag: loop into fresh 64 MB output",
                     "add 16M f32/loop into preallocated", 0});
  pairs().push_back({"diag: ropegrad kernel, preallocated output",
                     "add 16M f32/diag: ropegrad kernel into preallocated",
                     "add 16M f32/loop into preallocated", 0});

  add("autograd/chain of 1000 ops on [16] f32, fwd+bwd", bm_autograd_chain,
      benchmark::kMillisecond);
}

// ---- the collecting reporter -------------------------------------------------------------

struct Samples {
  std::vector<double> seconds;  // real time per iteration, one per repetition
  std::map<std::string, std::vector<double>> counters;
};

// Spread of the repetitions: stddev / mean, in percent (0 for a single run).
double cv_percent(const std::vector<double>& v) {
  if (v.size() < 2) return 0;
  double mean = 0, var = 0;
  for (double x : v) mean += x;
  mean /= static_cast<double>(v.size());
  for (double x : v) var += (x - mean) * (x - mean);
  var /= static_cast<double>(v.size() - 1);
  return 100.0 * std::sqrt(var) / mean;
}

double median(std::vector<double> v) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  const size_t h = v.size() / 2;
  return v.size() % 2 ? v[h] : 0.5 * (v[h - 1] + v[h]);
}

// Prints like the console reporter (with repetitions: only the median and cv
// lines, to keep the log short) and keeps every repetition for the summary.
class CollectingReporter : public benchmark::ConsoleReporter {
 public:
  explicit CollectingReporter(OutputOptions options) : ConsoleReporter(options) {}

  void ReportRuns(const std::vector<Run>& runs) override {
    std::vector<Run> shown;
    for (const Run& r : runs) {
      const std::string name = r.run_name.function_name;
      if (r.error_occurred) {
        shown.push_back(r);
      } else if (r.run_type == Run::RT_Iteration) {
        samples_[name].seconds.push_back(r.real_accumulated_time /
                                         static_cast<double>(std::max<int64_t>(1, r.iterations)));
        for (const auto& [key, counter] : r.counters) {
          samples_[name].counters[key].push_back(counter.value);
        }
        if (r.repetitions <= 1) shown.push_back(r);
      } else if (r.aggregate_name == "median" || r.aggregate_name == "cv") {
        shown.push_back(r);
      }
    }
    if (!shown.empty()) ConsoleReporter::ReportRuns(shown);
  }

  const Samples* find(const std::string& name) const {
    const auto it = samples_.find(name);
    return it == samples_.end() || it->second.seconds.empty() ? nullptr : &it->second;
  }

 private:
  std::map<std::string, Samples> samples_;
};

std::string format_time(double seconds) {
  char buf[32];
  if (seconds >= 1e-1) {
    std::snprintf(buf, sizeof buf, "%.3f s", seconds);
  } else if (seconds >= 1e-4) {
    std::snprintf(buf, sizeof buf, "%.3f ms", seconds * 1e3);
  } else {
    std::snprintf(buf, sizeof buf, "%.2f us", seconds * 1e6);
  }
  return buf;
}

void print_summary(const CollectingReporter& rep) {
  const char* env_threads = std::getenv("OPENBLAS_NUM_THREADS");
  std::printf("\n== ropegrad-bench summary: median repetition, real time ==\n");
  std::printf("OpenBLAS %s, %d thread(s) (OPENBLAS_NUM_THREADS=%s), same library for both sides\n",
              openblas_get_config(), openblas_get_num_threads(), env_threads ? env_threads : "unset");
  std::printf("ratio = reference time / ropegrad time (1.0 = as fast as the reference; higher is "
              "better); cv = spread of the repetitions (noise)\n\n");
  std::printf("%-44s %12s %12s %9s %7s %7s  %s\n", "pair", "ropegrad", "reference", "cv rg/ref",
              "ratio", "target", "verdict");
  for (const Pair& p : pairs()) {
    const Samples* rs = rep.find(p.ropegrad);
    const Samples* fs = rep.find(p.reference);
    if (rs == nullptr && fs == nullptr) continue;  // filtered out
    if (rs == nullptr || fs == nullptr) {
      std::printf("%-44s %12s\n", p.label.c_str(), "(only one side ran)");
      continue;
    }
    const double rt = median(rs->seconds), ft = median(fs->seconds);
    const double ratio = ft / rt;
    std::string verdict = "diagnostic";
    char target[16] = "-";
    if (p.target > 0) {
      std::snprintf(target, sizeof target, ">=%.2f", p.target);
      if (ratio >= p.target) {
        verdict = "ok";
      } else {
        // ropegrad would need ref/target time: how much of its time must go.
        char buf[96];
        std::snprintf(buf, sizeof buf, "MISS by %.2f (needs %.0f%% less time)", p.target - ratio,
                      100.0 * (1.0 - (ft / p.target) / rt));
        verdict = buf;
      }
    }
    // Why a pair differs, when it does: ropegrad's allocation and page faults per call.
    std::string costs;
    const auto med = [](const Samples* smp, const char* key) {
      const auto it = smp->counters.find(key);
      return it == smp->counters.end() ? 0.0 : median(it->second);
    };
    if (rs->counters.count("alloc_MB") != 0) {
      char buf[96];
      std::snprintf(buf, sizeof buf, "  [alloc %.2f MB, faults %.0f vs %.0f]", med(rs, "alloc_MB"),
                    med(rs, "faults/iter"), med(fs, "faults/iter"));
      costs = buf;
    }
    char spread[24];
    std::snprintf(spread, sizeof spread, "%.0f/%.0f%%", cv_percent(rs->seconds),
                  cv_percent(fs->seconds));
    std::printf("%-44s %12s %12s %9s %7.3f %7s  %s%s\n", p.label.c_str(), format_time(rt).c_str(),
                format_time(ft).c_str(), spread, ratio, target, verdict.c_str(), costs.c_str());
  }
  const std::string chain = "autograd/chain of 1000 ops on [16] f32, fwd+bwd";
  if (const Samples* s = rep.find(chain)) {
    const auto counter = [&](const char* key) {
      const auto it = s->counters.find(key);
      return it == s->counters.end() ? 0.0 : median(it->second);
    };
    std::printf("\nautograd overhead, chain of %d ops on [16] f32 (mul/add scalar, tanh): "
                "%.2f us/op (forward %.2f, backward incl. freeing the graph %.2f); "
                "%s per fwd+bwd\n",
                kChainOps, counter("us_per_op"), counter("fwd_us_per_op"),
                counter("bwd_us_per_op"), format_time(median(s->seconds)).c_str());
  }
  std::fflush(stdout);
}

}  // namespace

int main(int argc, char** argv) {
  // Defaults for a noisy 2-core machine, each overridable on the command line:
  // 7 short repetitions, interleaved at random, summarised by their median.
  std::vector<std::string> args(argv, argv + argc);
  const auto given = [&](std::string_view flag) {
    return std::any_of(args.begin() + 1, args.end(),
                       [&](const std::string& a) { return a.rfind(flag, 0) == 0; });
  };
  if (!given("--benchmark_repetitions")) args.emplace_back("--benchmark_repetitions=7");
  if (!given("--benchmark_enable_random_interleaving")) {
    args.emplace_back("--benchmark_enable_random_interleaving=true");
  }
  if (!given("--benchmark_min_time")) args.emplace_back("--benchmark_min_time=0.2");
  std::vector<char*> cargs;
  for (auto& a : args) cargs.push_back(a.data());
  int cargc = static_cast<int>(cargs.size());
  cargs.push_back(nullptr);

  benchmark::Initialize(&cargc, cargs.data());
  if (benchmark::ReportUnrecognizedArguments(cargc, cargs.data())) return 1;
  register_benchmarks();

  CollectingReporter reporter(isatty(STDOUT_FILENO) ? benchmark::ConsoleReporter::OO_Color
                                                    : benchmark::ConsoleReporter::OO_None);
  benchmark::RunSpecifiedBenchmarks(&reporter);
  print_summary(reporter);
  benchmark::Shutdown();
  return 0;
}
