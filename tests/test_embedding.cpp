// nn::Embedding (docs/appendix-a-formulas.md, building blocks): rows of a (V, D) table for int64 ids of any shape,
// (...) -> (..., D). Backward adds each row's gradient back at its id, so a
// row picked twice gets two gradients.
//
// Parity: tests/fixtures/make_nn_fixtures.py wrote ids (2, 3) (id 2 three
// times), W (7, 4), F.embedding(ids, W) and d sum(out * w) / dW with torch 1.13,
// under tests/fixtures/nn/embedding/. Tolerances: |actual - torch| <= atol +
// rtol |torch| with float64 rtol 1e-10 atol 1e-12, float32 rtol 1e-5 atol 1e-7.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <functional>
#include <string>
#include <vector>

#include "autograd/gradcheck.h"
#include "autograd/ops.h"
#include "nn/layers.h"
#include "tests/support/test_util.h"

using namespace ropegrad;
using namespace ropegrad::testing;
using ::testing::HasSubstr;

namespace {

void check_parity(const std::string& dt) {
  const Tensor ids = nn_fixture("embedding", dt, "ids");  // (2, 3) int64
  ASSERT_EQ(dtype_name(ids.dtype()), "int64");
  // leaves: weight (7, 4), w (2, 3, 4).
  const ParityRun run = [&](const std::vector<Tensor>& ls) {
    nn::Embedding m(7, 4, nullptr, ls[0].dtype());
    m.load_state_dict({{"weight", ls[0]}});
    const Tensor out = m.forward(ids);  // (2, 3, 4)
    backward(sum(mul(out, ls[1])));
    return NamedTensors{{"out", out.detach()}, {"grad_weight", m.weight.grad()}};
  };
  const std::vector<Tensor> leaves = {nn_fixture("embedding", dt, "weight"), nn_fixture("embedding", dt, "w")};
  const auto expected = [&](const std::string& n) { return nn_fixture("embedding", dt, n); };
  if (dt == "f64") {
    for (const auto& [n, t] : run(leaves)) expect_nn_close(t, expected(n), "embedding/f64 " + n);
    return;
  }
  // K = 6: a row's gradient sums over at most the B T = 6 positions of its id;
  // stages: the lookup is exact, the backward's product and sum.
  expect_f32_parity(run, leaves, expected, {6, 2}, "embedding/f32");
}

}  // namespace

// ---- parity with torch -----------------------------------------------------------------

TEST(EmbeddingParity, Float32) { check_parity("f32"); }
TEST(EmbeddingParity, Float64) { check_parity("f64"); }

// ---- lookups and their gradient, by hand ------------------------------------------------------

TEST(Embedding, IdsOfShapeBTGiveRowsOfShapeBTD) {
  // W (5, 2) = [[0, 1], [10, 11], [20, 21], [30, 31], [40, 41]]; ids (2, 3).
  nn::Embedding m(5, 2);
  m.load_state_dict({{"weight", tensor({0, 1, 10, 11, 20, 21, 30, 31, 40, 41}, {5, 2})}});
  const Tensor out = m.forward(tensor_i64({4, 0, 2, 2, 1, 3}, {2, 3}));
  EXPECT_EQ(shape_str(out.shape()), "[2, 3, 2]");
  EXPECT_EQ(out.to_vector<double>(), (std::vector<double>{40, 41, 0, 1, 20, 21, 20, 21, 10, 11, 30, 31}));
  // A 0-d id gives one row (D); a 1-D list of ids gives (N, D).
  EXPECT_EQ(shape_str(m.forward(reshape(tensor_i64({3}), {})).shape()), "[2]");
  EXPECT_EQ(m.forward(reshape(tensor_i64({3}), {})).to_vector<double>(), (std::vector<double>{30, 31}));
  EXPECT_EQ(shape_str(m.forward(tensor_i64({1, 1}, {2})).shape()), "[2, 2]");
}

TEST(Embedding, RepeatedIdsAccumulateTheirGradients) {
  // ids [1, 3, 1, 1] with upstream gradient rows g_k = (k+1) * [1, 1]:
  // row 1 gets g_0 + g_2 + g_3 = [8, 8], row 3 gets g_1 = [2, 2], the rest 0.
  nn::Embedding m(4, 2);
  const Tensor out = m.forward(tensor_i64({1, 3, 1, 1}, {4}));  // (4, 2)
  backward(sum(mul(out, tensor({1, 1, 2, 2, 3, 3, 4, 4}, {4, 2}))));
  EXPECT_EQ(m.weight.grad().to_vector<double>(), (std::vector<double>{0, 0, 8, 8, 0, 0, 2, 2}));
}

// ---- gradcheck ----------------------------------------------------------------------------

TEST(EmbeddingGradcheck, Float64Weight) {
  Generator gen(2);
  nn::Embedding m(6, 16, &gen);
  m.to(DType::Float64);
  const Tensor ids = tensor_i64({0, 5, 2, 2, 3, 0}, {2, 3});  // ids are passed through, not perturbed
  const GradcheckResult r =
      gradcheck([&](const std::vector<Tensor>& in) { return m.forward(in[0]); }, {ids, m.weight});
  EXPECT_TRUE(r.passed) << r.report;
}

// ---- init ------------------------------------------------------------------------------------

TEST(EmbeddingInit, StandardNormalCutAtThree) {
  // CS336: W ~ N(0, 1) cut at +-3; the cut shrinks the std to 0.98658.
  Generator gen(11);
  nn::Embedding m(1000, 64, &gen);
  ASSERT_EQ(shape_str(m.weight.shape()), "[1000, 64]");
  EXPECT_EQ(dtype_name(m.weight.dtype()), "float32");
  const std::vector<double> w = m.weight.to_vector<double>();
  const double n = static_cast<double>(w.size());
  double mean = 0, sq = 0, max_abs = 0;
  for (double v : w) mean += v / n;
  for (double v : w) sq += (v - mean) * (v - mean) / n, max_abs = std::max(max_abs, std::abs(v));
  EXPECT_NEAR(mean, 0.0, 0.02);  // ~5 standard errors for n = 64000
  EXPECT_NEAR(std::sqrt(sq), 0.98658, 0.015);
  EXPECT_LE(max_abs, 3.0);
  EXPECT_GT(max_abs, 2.9);  // n = 64000 draws reach close to the cut
}

// ---- names and shapes ---------------------------------------------------------------------------

TEST(Embedding, OneParameterNamedWeightOfShapeVD) {
  nn::Embedding m(7, 4);
  EXPECT_EQ(m.type_name(), "Embedding");
  EXPECT_EQ(m.num_embeddings, 7);
  EXPECT_EQ(m.dim, 4);
  const auto params = m.named_parameters();
  ASSERT_EQ(params.size(), 1u);
  EXPECT_EQ(params[0].first, "weight");
  EXPECT_EQ(shape_str(params[0].second.shape()), "[7, 4]");
  EXPECT_TRUE(params[0].second.requires_grad());
  EXPECT_EQ(m.num_parameters(), 28);
}

// ---- bad input ----------------------------------------------------------------------------------

TEST(EmbeddingErrors, NegativeIdNamesEmbeddingAndTheId) {
  nn::Embedding m(7, 4);
  const std::string msg = error_of([&] { m.forward(tensor_i64({0, -1, 3, 2}, {2, 2})); });
  EXPECT_THAT(msg, HasSubstr("embedding"));
  EXPECT_THAT(msg, HasSubstr("id -1"));
  EXPECT_THAT(msg, HasSubstr("7 embeddings"));
  EXPECT_THAT(msg, HasSubstr("[2, 2]"));  // the ids' shape
}

TEST(EmbeddingErrors, IdEqualToVNamesEmbeddingAndTheId) {
  nn::Embedding m(7, 4);
  const std::string msg = error_of([&] { m.forward(tensor_i64({6, 7}, {2})); });  // 6 is the last valid id
  EXPECT_THAT(msg, HasSubstr("embedding"));
  EXPECT_THAT(msg, HasSubstr("id 7"));
  EXPECT_THAT(msg, HasSubstr("out of range"));
}

TEST(EmbeddingErrors, FloatIdsNameEmbeddingAndTheDtype) {
  nn::Embedding m(7, 4);
  const std::string msg = error_of([&] { m.forward(tensor({1, 2}, {2})); });
  EXPECT_THAT(msg, HasSubstr("embedding"));
  EXPECT_THAT(msg, HasSubstr("int64"));
  EXPECT_THAT(msg, HasSubstr("float32"));
}
