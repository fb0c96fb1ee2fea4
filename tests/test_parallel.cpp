// The thread pool (tensor/parallel.h), the float32 fast_exp, max_of, sum_of
// and dot_in_double (tensor/fast_math.h) and the large-block cache (tensor/storage.cpp): the
// machinery under the kernels, checked directly.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <bit>
#include <cstdint>
#include <cmath>
#include <functional>
#include <limits>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "autograd/ops.h"
#include "nn/attention_scores.h"
#include "nn/functional.h"
#include "optim/optim.h"
#include "nn/attention_path.h"
#include "nn/attention_variants.h"
#include "nn/transformer.h"
#include "tensor/fast_math.h"
#include "tensor/kernels.h"
#include "tensor/parallel.h"
#include "support/test_util.h"
#include "tensor/simd.h"
#include "tests/support/test_util.h"

using namespace ropegrad;
using namespace ropegrad::testing;

namespace {

// Restores the pool size a test changed.
struct ThreadCount {
  int saved = num_threads();
  ~ThreadCount() { set_num_threads(saved); }
};

}  // namespace

// ---- parallel_for -----------------------------------------------------------------------

TEST(ParallelFor, CoversTheRangeExactlyOnceInDisjointChunks) {
  ThreadCount keep;
  set_num_threads(2);
  std::vector<std::atomic<int>> hits(100000);
  std::mutex m;
  std::vector<std::pair<int64_t, int64_t>> chunks;
  parallel_for(0, 100000, 1000, [&](int64_t lo, int64_t hi) {
    for (int64_t i = lo; i < hi; ++i) hits[i]++;
    std::lock_guard<std::mutex> lock(m);
    chunks.emplace_back(lo, hi);
  });
  for (size_t i = 0; i < hits.size(); ++i) ASSERT_EQ(hits[i].load(), 1) << "index " << i;
  EXPECT_EQ(chunks.size(), 2u);  // two threads, enough work for both
}

TEST(ParallelFor, SmallRangesAndNestedCallsRunInline) {
  ThreadCount keep;
  set_num_threads(2);
  int calls = 0;
  parallel_for(0, 10, 1000, [&](int64_t lo, int64_t hi) {  // below 2 * grain: one call
    ++calls;
    EXPECT_EQ(lo, 0);
    EXPECT_EQ(hi, 10);
  });
  EXPECT_EQ(calls, 1);
  std::atomic<int> inner_calls{0};
  parallel_for(0, 4, 1, [&](int64_t lo, int64_t hi) {
    for (int64_t i = lo; i < hi; ++i) {
      parallel_for(0, 100000, 10, [&](int64_t, int64_t) { inner_calls++; });  // inline: one call each
    }
  });
  EXPECT_EQ(inner_calls.load(), 4);
  parallel_for(5, 5, 1, [&](int64_t, int64_t) { ADD_FAILURE() << "an empty range calls nothing"; });
}

TEST(ParallelFor, AnExceptionInAnyPartReachesTheCallerAndThePoolStaysUsable) {
  ThreadCount keep;
  set_num_threads(2);
  for (int throwing_part : {0, 1}) {  // the caller's own part, then a worker's
    std::atomic<int> finished{0};
    try {
      parallel_for(0, 2000, 1000, [&](int64_t lo, int64_t) {
        if (lo / 1000 == throwing_part) throw Error("part " + std::to_string(throwing_part) + " failed");
        finished++;
      });
      ADD_FAILURE() << "part " << throwing_part << ": the exception was lost";
    } catch (const Error& e) {
      EXPECT_THAT(e.what(), ::testing::HasSubstr("part " + std::to_string(throwing_part) + " failed"));
    }
    EXPECT_EQ(finished.load(), 1) << "the other part still runs to its end";
  }
  // Afterwards the caller is not left marked as inside a parallel region:
  // work is still split over both threads.
  std::mutex m;
  int chunks = 0;
  parallel_for(0, 2000, 1000, [&](int64_t, int64_t) {
    std::lock_guard<std::mutex> lock(m);
    ++chunks;
  });
  EXPECT_EQ(chunks, 2);
}

// With more threads than cores the pool does not spin (tensor/parallel.cpp,
// spin_until): its threads sleep between jobs. Many short jobs in a row must
// still each run every part exactly once, and the caller must see each end.
TEST(ParallelFor, MoreThreadsThanCoresSleepInsteadOfSpinningAndStillFinishEveryJob) {
  ThreadCount keep;
  const int threads = static_cast<int>(std::max(1u, std::thread::hardware_concurrency())) + 1;
  for (const int n : {2, threads}) {  // the spinning pool (when the cores allow) and the sleeping one
    set_num_threads(n);
    ASSERT_EQ(num_threads(), n);
    std::vector<int64_t> sums;
    for (int job = 0; job < 300; ++job) {
      std::atomic<int64_t> sum{0};
      parallel_for(0, 64 * n, 1, [&](int64_t lo, int64_t hi) {
        for (int64_t i = lo; i < hi; ++i) sum += i + job;
      });
      sums.push_back(sum.load());
    }
    for (int job = 0; job < 300; ++job) {
      const int64_t count = 64 * n;
      ASSERT_EQ(sums[job], count * (count - 1) / 2 + count * job) << n << " threads, job " << job;
    }
  }
}

namespace {
// Runs `run` (returning float32 tensors) on one thread and on two, and expects
// every value of every result to be the same float.
void expect_same_bits_on_one_and_two_threads(const std::function<std::vector<Tensor>()>& run) {
  ThreadCount keep;
  set_num_threads(1);
  const std::vector<Tensor> one = run();
  set_num_threads(2);
  const std::vector<Tensor> two = run();
  ASSERT_EQ(one.size(), two.size());
  for (size_t i = 0; i < one.size(); ++i) {
    EXPECT_EQ(one[i].to_vector<float>(), two[i].to_vector<float>()) << "result " << i;
  }
}
}  // namespace

TEST(ParallelFor, KernelsGiveTheSameBitsOnOneAndTwoThreads) {
  Generator gen(9);
  const Tensor x = randn({300, 517}, DType::Float32, &gen);  // large enough to be split
  const Tensor q = randn({2, 4, 128, 16}, DType::Float32, &gen);
  const Tensor k = randn({2, 4, 128, 16}, DType::Float32, &gen);
  const Tensor y = randn({8, 300, 64}, DType::Float32, &gen) * 100.0;  // sums whose order shows in the bits
  const auto run = [&] {
    return std::vector<Tensor>{exp(x) * x + 1.0, softmax(x, -1), log_softmax(x, 0), sigmoid(x),
                               nn::dot_attention_probs(q, k, 0.25, nn::ScoreMask{Tensor(), true, 0}),
                               // reductions: split over the outermost kept dim, never over a summed one
                               sum(x, {-1}), sum(x, {0}), sum(y, {1}), sum(y, {2}), sum(y, {0, 2}),
                               kernels::reduce(kernels::Reduce::Max, y, {1}, false)};
  };
  expect_same_bits_on_one_and_two_threads(run);
}

// AdamW splits a large parameter's update over the pool: three steps give the
// same parameters and moments on one and two threads.
TEST(ParallelFor, AdamWGivesTheSameBitsOnOneAndTwoThreads) {
  Generator gen(11);
  const Tensor start = randn({300, 517}, DType::Float32, &gen);  // 155k values: several parts
  const Tensor grad = randn({300, 517}, DType::Float32, &gen);
  const auto run = [&] {
    Tensor p = clone(start).requires_grad_(true);
    nn::AdamW opt({p}, {.lr = 1e-2});
    for (int step = 0; step < 3; ++step) {
      p.set_grad(grad * static_cast<double>(step + 1));
      opt.step();
    }
    return std::vector<Tensor>{p.detach()};
  };
  expect_same_bits_on_one_and_two_threads(run);
  EXPECT_NE(run()[0].to_vector<float>(), start.to_vector<float>());  // the steps moved it
}

// RMSNorm splits its rows, and its gain's gradient by columns, over the pool:
// each column of dg is still summed over the rows in order.
TEST(ParallelFor, RmsNormAndItsGradientsGiveTheSameBitsOnOneAndTwoThreads) {
  Generator gen(10);
  const Tensor x = randn({600, 128}, DType::Float32, &gen) * 3.0;
  const Tensor gain = randn({128}, DType::Float32, &gen);
  const Tensor weights = randn({600, 128}, DType::Float32, &gen);
  const auto run = [&] {
    const Tensor xl = x.detach().requires_grad_(true), gl = gain.detach().requires_grad_(true);
    const Tensor y = nn::rms_norm(xl, gl, 1e-5);
    backward(sum(y * weights));
    return std::vector<Tensor>{y, xl.grad(), gl.grad()};
  };
  expect_same_bits_on_one_and_two_threads(run);
}

// ---- the two compilations of the kernels (tensor/simd.h) -------------------------------------

namespace {
// Restores the kernel compilation a test chose.
struct SimdLevel {
  simd::Level saved = simd::level();
  ~SimdLevel() { simd::set_level(saved); }
};

// The float32 values of each tensor, for expect_same_bits.
std::vector<std::vector<float>> as_floats(const std::vector<Tensor>& ts) {
  std::vector<std::vector<float>> out;
  for (const Tensor& t : ts) out.push_back(t.to_vector<float>());
  return out;
}

void expect_same_bits(const std::vector<std::vector<float>>& a, const std::vector<std::vector<float>>& b,
                      const std::vector<std::string>& names) {
  ASSERT_EQ(a.size(), b.size());
  for (size_t i = 0; i < a.size(); ++i) {
    ASSERT_EQ(a[i].size(), b[i].size()) << names[i];
    size_t differing = 0, first = a[i].size();
    for (size_t j = 0; j < a[i].size(); ++j) {
      if (std::bit_cast<uint32_t>(a[i][j]) != std::bit_cast<uint32_t>(b[i][j])) {
        if (differing++ == 0) first = j;
      }
    }
    EXPECT_EQ(differing, 0u) << names[i] << ": " << differing << " of " << a[i].size()
                             << " values differ, the first at " << first << " (baseline "
                             << (first < a[i].size() ? a[i][first] : 0.0f) << ", avx2 "
                             << (first < a[i].size() ? b[i][first] : 0.0f) << ")";
  }
}
}  // namespace

TEST(Simd, ParseLevelAcceptsTheThreeValuesAndNamesABadOne) {
  EXPECT_EQ(simd::parse_level(nullptr), simd::best_supported());
  EXPECT_EQ(simd::parse_level(""), simd::best_supported());
  EXPECT_EQ(simd::parse_level("auto"), simd::best_supported());
  EXPECT_EQ(simd::parse_level("baseline"), simd::Level::Baseline);
  if (simd::best_supported() == simd::Level::Avx2) {
    EXPECT_EQ(simd::parse_level("avx2"), simd::Level::Avx2);
  } else {
    EXPECT_THAT([] { simd::parse_level("avx2"); },
                ::testing::ThrowsMessage<Error>(::testing::HasSubstr("this CPU has no AVX2")));
  }
  EXPECT_THAT([] { simd::parse_level("avx512"); },
              ::testing::ThrowsMessage<Error>(
                  ::testing::AllOf(::testing::HasSubstr("ROPEGRAD_SIMD"), ::testing::HasSubstr("'avx512'"))));
}

TEST(Simd, SetLevelSwitchesTheKernelsAndRefusesAvx2WithoutTheCpu) {
  SimdLevel keep;
  simd::set_level(simd::Level::Baseline);
  EXPECT_EQ(simd::level(), simd::Level::Baseline);
  EXPECT_STREQ(simd::level_name(simd::level()), "baseline");
  if (simd::best_supported() == simd::Level::Avx2) {
    simd::set_level(simd::Level::Avx2);
    EXPECT_EQ(simd::level(), simd::Level::Avx2);
    EXPECT_STREQ(simd::level_name(simd::level()), "avx2");
  } else {
    EXPECT_THROW(simd::set_level(simd::Level::Avx2), Error);
    EXPECT_EQ(simd::level(), simd::Level::Baseline);
  }
}

// The AVX2 compilation must give the same bits as the baseline one: each
// element goes through the same operations (no FMA, no reordered sum), only
// the vector width differs. Every kernel run through simd::run_best, forward
// and backward, and a whole training step of each attention variant.
TEST(Simd, KernelsGiveTheSameBitsOnBothCompilations) {
  if (simd::best_supported() != simd::Level::Avx2) {
    // Only one compilation can run here; SetLevel... above checks the refusal.
    EXPECT_THROW(simd::set_level(simd::Level::Avx2), Error);
    return;
  }
  SimdLevel keep;
  Generator gen(21);
  const Tensor x = randn({64, 517}, DType::Float32, &gen) * 4.0;  // exp over a wide range, odd row length
  const Tensor a = randn({3, 1000}, DType::Float32, &gen) * 6.0;
  const Tensor b = randn({3, 1000}, DType::Float32, &gen);
  const Tensor q = randn({2, 3, 40, 16}, DType::Float32, &gen);
  const Tensor k = randn({2, 3, 40, 16}, DType::Float32, &gen);
  const std::vector<std::string> names = {"exp(x) * x + 1", "x * 0.5 (scalar broadcast)", "softmax", "log_softmax",
                                          "softmax backward", "log_softmax backward", "silu_mul",
                                          "silu_mul one-pass grad a", "silu_mul one-pass grad b",
                                          "causal attention probabilities", "attention probabilities backward"};
  const auto kernels = [&] {
    std::vector<Tensor> out = {exp(x) * x + 1.0, x * 0.5, softmax(x, -1), log_softmax(x, -1)};
    const Tensor g = randn(x.shape(), DType::Float32, &gen);
    out.push_back(kernels::softmax_backward(out[2], g, -1));
    out.push_back(kernels::log_softmax_backward(out[3], g, -1));
    out.push_back(nn::silu_mul(a, b));
    const Tensor ag = a.detach().requires_grad_(true), bg = b.detach().requires_grad_(true);
    backward(nn::silu_mul(ag, bg), b);  // both gradients: the one-pass backward
    out.push_back(ag.grad());
    out.push_back(bg.grad());
    const Tensor qg = q.detach().requires_grad_(true);
    const Tensor p = nn::dot_attention_probs(qg, k, 0.25, nn::ScoreMask{Tensor(), true, 0});
    out.push_back(p.detach());
    backward(sum(p * randn(p.shape(), DType::Float32, &gen)));
    out.push_back(qg.grad());
    return as_floats(out);
  };
  gen.manual_seed(5);
  simd::set_level(simd::Level::Baseline);
  const auto baseline = kernels();
  gen.manual_seed(5);
  simd::set_level(simd::Level::Avx2);
  const auto avx2 = kernels();
  expect_same_bits(baseline, avx2, names);

  // Each variant on both attention paths: the (B, H, T, T) kernels and the tiled ones.
  const nn::AttentionPath saved_path = nn::attention_path();
  for (const auto path : {nn::AttentionPath::Materialized, nn::AttentionPath::Tiled}) {
    for (const auto kind : nn::attention_kinds()) {
      nn::set_attention_path(path);
      nn::TransformerConfig c;
      c.vocab_size = 50;
      c.context_length = 32;
      c.d_model = 32;
      c.num_heads = 2;
      c.num_layers = 2;
      c.d_ff = 88;
      c.attention = kind;
      std::vector<std::string> step_names;
      const auto step = [&] {
        Generator init(3);
        nn::TransformerLM lm(c, &init);
        Generator data(4);
        const Tensor ids = randint(0, c.vocab_size, {4, c.context_length}, &data);
        const Tensor targets = randint(0, c.vocab_size, {4, c.context_length}, &data);
        const Tensor loss = nn::cross_entropy(lm.forward(ids), targets);
        backward(loss);
        std::vector<Tensor> out = {loss.detach()};
        const std::string label = std::string(nn::attention_kind_name(kind)) +
                                  (path == nn::AttentionPath::Tiled ? " (tiled)" : " (materialized)");
        step_names = {label + ": loss"};
        for (const auto& [name, param] : lm.named_parameters()) {
          out.push_back(param.grad());
          step_names.push_back(label + ": gradient of " + name);
        }
        return as_floats(out);
      };
      simd::set_level(simd::Level::Baseline);
      const auto base_step = step();
      simd::set_level(simd::Level::Avx2);
      const auto avx2_step = step();
      expect_same_bits(base_step, avx2_step, step_names);
    }
  }
  nn::set_attention_path(saved_path);
}

// ---- fast_exp -------------------------------------------------------------------------------

TEST(FastExp, WithinFourUlpOfStdExpOverTheFloatRange) {
  double worst = 0;
  for (float x = -87.0f; x < 88.0f; x += 0.0137f) {
    const double exact = std::exp(static_cast<double>(x));
    const double got = fast_exp(x);
    worst = std::max(worst, std::abs(got - exact) / exact);
  }
  EXPECT_LT(worst, 4.5 * std::numeric_limits<float>::epsilon() / 2) << "worst relative error " << worst;
}

TEST(FastExp, EdgesMatchStdExp) {
  EXPECT_EQ(fast_exp(0.0f), 1.0f);
  EXPECT_EQ(fast_exp(-std::numeric_limits<float>::infinity()), 0.0f);  // a masked score
  EXPECT_EQ(fast_exp(-1000.0f), 0.0f);
  EXPECT_EQ(fast_exp(1000.0f), std::numeric_limits<float>::infinity());
  EXPECT_EQ(fast_exp(std::numeric_limits<float>::infinity()), std::numeric_limits<float>::infinity());
  EXPECT_EQ(fast_exp(2.5), std::exp(2.5));  // double keeps std::exp exactly
}

// ---- max_of -------------------------------------------------------------------------------

// Eight running maxima give the value of one running maximum, for every
// length (a tail of 0-7 after the full groups) and wherever the maximum sits.
TEST(MaxOf, EqualsTheRunningMaximumForEveryLengthAndPosition) {
  Generator gen(5);
  const std::vector<float> values = randn({40}, DType::Float32, &gen).to_vector<float>();
  for (int64_t n = 1; n <= 40; ++n) {
    float running = -std::numeric_limits<float>::infinity();
    for (int64_t j = 0; j < n; ++j) running = std::max(running, values[j]);
    EXPECT_EQ(max_of(values.data(), n), running) << "n = " << n;
    for (int64_t at = 0; at < n; ++at) {  // a new maximum at each position
      std::vector<float> x(values.begin(), values.begin() + n);
      x[at] = 100.0f + static_cast<float>(at);
      EXPECT_EQ(max_of(x.data(), n), x[at]) << "n = " << n << ", max at " << at;
    }
  }
  const std::vector<double> wide = {-3.0, -1.0, -2.0};  // double, as the float64 kernels use it
  EXPECT_EQ(max_of(wide.data(), 3), -1.0);
}

TEST(MaxOf, EmptyIsMinusInfinityAndNanSticks) {
  const float inf = std::numeric_limits<float>::infinity(), nan = std::numeric_limits<float>::quiet_NaN();
  EXPECT_EQ(max_of(static_cast<const float*>(nullptr), 0), -inf);
  const std::vector<float> masked(11, -inf);
  EXPECT_EQ(max_of(masked.data(), 11), -inf);  // a fully masked row
  for (int64_t at = 0; at < 11; ++at) {  // NaN first, last, in the groups of eight and in the tail
    std::vector<float> x(11, 1.0f);
    x[at] = nan;
    EXPECT_TRUE(std::isnan(max_of(x.data(), 11))) << "NaN at " << at;
    std::vector<float> all_masked(11, -inf);
    all_masked[at] = nan;
    EXPECT_TRUE(std::isnan(max_of(all_masked.data(), 11))) << "NaN among -inf at " << at;
  }
}

// ---- sum_of -----------------------------------------------------------------------------------

// Small integers: every partial sum is exact, so any term lost or counted
// twice (the tail of 0-7 after the groups of eight) shows as a wrong integer.
TEST(SumOf, ExactOnIntegersForEveryLength) {
  std::vector<float> x;
  for (int i = 0; i < 29; ++i) x.push_back(static_cast<float>(3 * i - 40));
  for (int64_t n = 0; n <= 29; ++n) {
    double in_order = 0;
    for (int64_t i = 0; i < n; ++i) in_order += x[i];
    EXPECT_EQ(sum_of(x.data(), n), static_cast<float>(in_order)) << "n = " << n;
  }
  const std::vector<double> wide = {0.5, 0.25, 0.125};
  EXPECT_EQ(sum_of(wide.data(), 3), 0.875);
}

// The eight lanes add in a fixed order: lane l holds x[l], x[l + 8], ...; the
// lanes are then added 0 to 7. 1e8 + 1 is 1e8 in float32, so the order shows.
TEST(SumOf, AddsLaneByLaneThenTheLanesInOrder) {
  std::vector<float> x(16, 1.0f);
  x[0] = 1e8f;   // lane 0: 1e8 + 1 (x[8]) = 1e8
  x[9] = -1e8f;  // lane 1: 1 - 1e8 = -1e8
  // lanes: 1e8, -1e8, 2, 2, 2, 2, 2, 2 -> (1e8 - 1e8) + 12 = 12
  EXPECT_EQ(sum_of(x.data(), 16), 12.0f);
}

// ---- dot_in_double --------------------------------------------------------------------------

// Small integers: every product and partial sum is exact, so any term lost or
// counted twice (the tail after the groups of four) shows as a wrong integer.
TEST(DotInDouble, ExactOnIntegersForEveryLength) {
  std::vector<float> x, y, z;
  for (int i = 0; i < 23; ++i) {
    x.push_back(static_cast<float>(i % 7 - 3));
    y.push_back(static_cast<float>(2 * i - 5));
    z.push_back(static_cast<float>(i % 3 + 1));
  }
  for (int64_t n = 0; n <= 23; ++n) {
    double xy = 0, xyz = 0;
    for (int64_t i = 0; i < n; ++i) {
      xy += static_cast<double>(x[i]) * y[i];
      xyz += static_cast<double>(x[i]) * y[i] * z[i];
    }
    EXPECT_EQ(dot_in_double(x.data(), y.data(), n), xy) << "n = " << n;
    EXPECT_EQ(dot_in_double(x.data(), y.data(), z.data(), n), xyz) << "n = " << n;
  }
}

// On float32 data the four sums in double are far more accurate than float32
// itself: within n double ulps of the magnitude of the terms.
TEST(DotInDouble, WithinDoubleRoundingOfTheExactSum) {
  Generator gen(6);
  const std::vector<float> x = (randn({4099}, DType::Float32, &gen) * 1e3).to_vector<float>();
  const std::vector<float> y = randn({4099}, DType::Float32, &gen).to_vector<float>();
  long double exact = 0, magnitude = 0;
  for (size_t i = 0; i < x.size(); ++i) {
    exact += static_cast<long double>(x[i]) * y[i];
    magnitude += std::abs(static_cast<long double>(x[i]) * y[i]);
  }
  const double bound = static_cast<double>(x.size()) * std::numeric_limits<double>::epsilon() * static_cast<double>(magnitude);
  EXPECT_NEAR(dot_in_double(x.data(), y.data(), static_cast<int64_t>(x.size())), static_cast<double>(exact), bound);
}

// NaN in gives NaN out, without converting NaN to an integer on the way
// (undefined behaviour that -fsanitize=float-cast-overflow reports); a NaN
// weight reaches the attention softmax and the SwiGLU gate this way.
TEST(FastExp, NanInNanOutAlsoThroughSoftmaxAndTheGate) {
  const float nan = std::numeric_limits<float>::quiet_NaN();
  EXPECT_TRUE(std::isnan(fast_exp(nan)));
  EXPECT_TRUE(std::isnan(fast_exp(-nan)));
  const Tensor row = tensor({1.0, nan, 2.0}, {1, 3}, DType::Float32);
  for (double v : softmax(row, -1).to_vector<double>()) EXPECT_TRUE(std::isnan(v));
  // A NaN among masked (-inf) scores is NaN too, not the zeros of a fully masked row.
  const float inf = std::numeric_limits<float>::infinity();
  const Tensor masked_row = tensor({-inf, nan, -inf}, {1, 3}, DType::Float32);
  for (double v : softmax(masked_row, -1).to_vector<double>()) EXPECT_TRUE(std::isnan(v));
  const std::vector<double> gate = nn::silu_mul(row, ones({1, 3})).to_vector<double>();
  EXPECT_TRUE(std::isnan(gate[1]));
  EXPECT_FLOAT_EQ(static_cast<float>(gate[0]), 1.0f / (1.0f + std::exp(-1.0f)));
}

// ---- the block cache --------------------------------------------------------------------------

TEST(BlockCache, FreedLargeBlocksAreKeptAndReusedButNotCountedAsHeld) {
  release_cached_memory();
  const MemoryStats before = memory_stats();
  {
    Tensor big = empty({1 << 20});  // 4 MiB
    EXPECT_EQ(memory_stats().current_bytes - before.current_bytes, 4 << 20);
    fill_(big, 7.0);
  }
  EXPECT_EQ(memory_stats().current_bytes, before.current_bytes);  // a cached block is not "held"
  // Sanitizer builds turn the cache off (ROPEGRAD_NO_BLOCK_CACHE) so that
  // every free reaches ASan; each build checks its own behaviour.
  const int64_t expected_cached = block_cache_enabled() ? (4 << 20) : 0;
  EXPECT_EQ(cached_bytes(), expected_cached);
  const Tensor again = zeros({1 << 20});  // takes the block back (when cached)...
  EXPECT_EQ(cached_bytes(), 0);
  EXPECT_EQ(sum(again).item<double>(), 0.0);  // ...and zeros() still zeroes it: no 7s leak through
  { const Tensor small = empty({1000}); }  // 4 KB, freed: below the 1 MiB threshold, never cached
  EXPECT_EQ(cached_bytes(), 0);
}

// ROPEGRAD_NUM_THREADS is read by one declared rule: a whole number in
// 1..1024 (more than 64 run as 64); a typo is an error naming the variable,
// never a quiet fall back to the cores.
TEST(ParallelSettings, NumThreadsIsAWholeNumberByOneRule) {
  EXPECT_EQ(ropegrad::threads_from_setting("1"), 1);
  EXPECT_EQ(ropegrad::threads_from_setting("+3"), 3);
  EXPECT_EQ(ropegrad::threads_from_setting("1024"), 64);
  const int cores = ropegrad::threads_from_setting(nullptr);
  EXPECT_GE(cores, 1);
  EXPECT_LE(cores, 8);
  for (const char* bad : {"0", "-2", "abc", "4x", "", " 2", "1e3", "1025", "99999999999999999999"}) {
    SCOPED_TRACE(bad);
    EXPECT_RG_ERROR(ropegrad::threads_from_setting(bad), "ROPEGRAD_NUM_THREADS: must be a whole number in 1..1024, got");
  }
}
