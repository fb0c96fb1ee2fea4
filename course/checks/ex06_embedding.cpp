// ex06-embedding: Embedding's row lookup and its accumulating backward
// (autograd/ops_index.cpp: embedding, and index_select's backward) against
// F.embedding (tests/fixtures/nn/embedding: ids (2, 3) with id 2 three times,
// weight (7, 4), out, and d sum(out * w) / d weight).
#include <cmath>
#include <string>

#include "course/checks/check_util.h"
#include "nn/layers.h"

namespace ropegrad::course {
namespace {

struct Run {
  Tensor out, grad_weight;
};

// The fixture's lookup and the gradient of sum(out * w) with respect to the table.
Run fixture_run(const std::string& dt) {
  nn::Embedding m(7, 4, nullptr, dt == "f64" ? DType::Float64 : DType::Float32);
  m.load_state_dict({{"weight", nn_fixture("embedding", dt, "weight")}});
  const Tensor out = m.forward(nn_fixture("embedding", dt, "ids"));  // (2, 3, 4)
  backward(out, clone(nn_fixture("embedding", dt, "w")));  // d sum(out * w)
  return {out.detach(), m.weight.grad()};
}

TEST(ex06_embedding, rows_match_torch_float64) {
  expect_values(fixture_run("f64").out, nn_fixture("embedding", "f64", "out"), f64_tol(), "rows");
}

TEST(ex06_embedding, rows_match_torch_float32_exactly) {  // a lookup copies: no rounding at all
  expect_values(fixture_run("f32").out, nn_fixture("embedding", "f32", "out"), {0, 0}, "rows");
}

TEST(ex06_embedding, gradient_of_the_table_matches_torch_float64) {  // id 2 occurs three times
  COURSE_AFTER_FORWARD("rows_match_torch_float64");
  expect_values(fixture_run("f64").grad_weight, nn_fixture("embedding", "f64", "grad_weight"), f64_tol(),
                "d weight");
}

TEST(ex06_embedding, gradient_of_the_table_matches_torch_float32) {
  COURSE_AFTER_FORWARD("rows_match_torch_float64");
  // Row v of d weight sums the upstream rows w_n over the positions whose id
  // is v: at most K = 6 (B T) terms, one rounded stage (the sum; each term is
  // w_n itself, exact). The condition of row v is sum |w_n| over those positions.
  const Tensor ids = nn_fixture("embedding", "f64", "ids"), w = nn_fixture("embedding", "f64", "w");
  const std::vector<int64_t> id = ids.to_vector<int64_t>();
  const std::vector<double> wv = w.to_vector<double>();
  std::vector<double> cond(7 * 4, 0.0);
  for (size_t n = 0; n < id.size(); ++n)
    for (size_t j = 0; j < 4; ++j) cond[id[n] * 4 + j] += std::abs(wv[n * 4 + j]);
  const Tensor got = fixture_run("f32").grad_weight;
  if (!got.defined()) {
    ADD_FAILURE() << "d weight: no gradient reached the table";
    return;
  }
  const auto r = within_f32_bound(got, nn_fixture("embedding", "f32", "grad_weight"),
                                  tensor(cond, {7, 4}, DType::Float64), {6, 1});
  if (!r) ADD_FAILURE() << "d weight: " << r.message();
}

TEST(ex06_embedding, a_repeated_id_gets_the_sum_of_its_gradients) {
  COURSE_AFTER_FORWARD("rows_match_torch_float64");
  // ids [1, 3, 1, 1], upstream gradient rows g_n = (n + 1) [1, 1]: row 1 must
  // get g_0 + g_2 + g_3 = [8, 8], row 3 g_1 = [2, 2], rows 0 and 2 nothing.
  nn::Embedding m(4, 2, nullptr, DType::Float64);
  const Tensor out = m.forward(tensor_i64({1, 3, 1, 1}, {4}));
  backward(out, tensor({1, 1, 2, 2, 3, 3, 4, 4}, {4, 2}, DType::Float64));  // d sum(out * w)
  const Tensor g = m.weight.grad();
  if (!g.defined()) {
    ADD_FAILURE() << "d weight: no gradient reached the table";
    return;
  }
  const std::vector<double> got = g.to_vector<double>();
  if (got[2] == 4 || got[2] == 3 || got[2] == 1)
    ADD_FAILURE() << "id 1 occurs three times but its row's gradient is " << got[2]
                  << ", one occurrence's, not the sum 8: repeated ids must accumulate (+=), not assign";
  else
    expect_values(g, tensor({0, 0, 8, 8, 0, 0, 2, 2}, {4, 2}, DType::Float64), {0, 0}, "d weight");
}

TEST(ex06_embedding, gradient_passes_gradcheck_with_repeated_ids) {
  COURSE_AFTER_FORWARD("rows_match_torch_float64");
  Generator gen(3);
  const Tensor ids = tensor_i64({2, 0, 2, 4, 2, 0}, {2, 3});
  expect_gradcheck([&](const std::vector<Tensor>& in) { return embedding(ids, in[0]); },
                   {randn({5, 3}, DType::Float64, &gen).requires_grad_()}, "embedding");
}

TEST(ex06_embedding, an_out_of_range_id_is_an_error_naming_the_id_and_the_vocabulary_size) {
  const Tensor weight = zeros({6, 2}, DType::Float64);
  expect_error([&] { embedding(tensor_i64({1, 9}, {2}), weight); }, {"embedding", "9", "6"}, "id 9 of 6");
  expect_error([&] { embedding(tensor_i64({-1}, {1}), weight); }, {"embedding", "-1", "6"}, "id -1 of 6");
}

}  // namespace
}  // namespace ropegrad::course
