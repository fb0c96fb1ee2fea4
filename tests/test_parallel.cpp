// The thread pool (tensor/parallel.h), the float32 fast_exp
// (tensor/fast_math.h) and the large-block cache (tensor/storage.cpp): the
// machinery under the kernels, checked directly.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <atomic>
#include <cmath>
#include <limits>
#include <mutex>
#include <string>
#include <vector>

#include "autograd/ops.h"
#include "nn/attention_scores.h"
#include "nn/functional.h"
#include "tensor/fast_math.h"
#include "tensor/parallel.h"
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

TEST(ParallelFor, KernelsGiveTheSameBitsOnOneAndTwoThreads) {
  ThreadCount keep;
  Generator gen(9);
  const Tensor x = randn({300, 517}, DType::Float32, &gen);  // large enough to be split
  const Tensor q = randn({2, 4, 128, 16}, DType::Float32, &gen);
  const Tensor k = randn({2, 4, 128, 16}, DType::Float32, &gen);
  const auto run = [&] {
    return std::vector<Tensor>{exp(x) * x + 1.0, softmax(x, -1), log_softmax(x, 0), sigmoid(x),
                               nn::dot_attention_probs(q, k, 0.25, nn::ScoreMask{Tensor(), true, 0})};
  };
  set_num_threads(1);
  const std::vector<Tensor> one = run();
  set_num_threads(2);
  const std::vector<Tensor> two = run();
  for (size_t i = 0; i < one.size(); ++i) {
    EXPECT_EQ(one[i].to_vector<float>(), two[i].to_vector<float>()) << "result " << i;
  }
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

// NaN in gives NaN out, without converting NaN to an integer on the way
// (undefined behaviour that -fsanitize=float-cast-overflow reports); a NaN
// weight reaches the attention softmax and the SwiGLU gate this way.
TEST(FastExp, NanInNanOutAlsoThroughSoftmaxAndTheGate) {
  const float nan = std::numeric_limits<float>::quiet_NaN();
  EXPECT_TRUE(std::isnan(fast_exp(nan)));
  EXPECT_TRUE(std::isnan(fast_exp(-nan)));
  const Tensor row = tensor({1.0, nan, 2.0}, {1, 3}, DType::Float32);
  for (double v : softmax(row, -1).to_vector<double>()) EXPECT_TRUE(std::isnan(v));
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
