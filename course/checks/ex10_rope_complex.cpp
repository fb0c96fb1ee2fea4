// ex10-rope-complex: RoPE as a complex product (nn/rope_rotate.cpp:
// view_as_complex, complex_mul and its backward; nn/rope.cpp:
// RotaryEmbedding::forward_complex) against PyTorch's real-form fixtures
// (tests/fixtures/attention/rope_*): the complex form pairs (x_2k, x_2k+1) as
// x_2k + i x_2k+1 and multiplies by e^{i p theta_k}, the interleaved rotation.
#include "course/checks/check_util.h"
#include "nn/rope.h"

namespace ropegrad::course {
namespace {

Tensor complex_rope_fixture(const std::string& name) { return load_fixture("attention/" + name); }

NamedTensors complex_run(const std::string& name, const Tensor& x_in, const Tensor& positions) {
  nn::RopeConfig c;
  c.head_dim = 8;
  c.max_seq_len = 16;
  nn::RotaryEmbedding rope(c, x_in.dtype());
  Tensor x = x_in.detach().requires_grad_();
  const Tensor out = rope.forward_complex(x, positions);
  backward(out, clone(to(complex_rope_fixture(name + ".w"), x_in.dtype())));  // d sum(out * w)
  return {{"out", out.detach()}, {"grad_x", x.grad()}};
}

TEST(ex10_rope_complex, the_complex_form_matches_torch_float64) {
  for (const auto& [n, t] : complex_run("rope_interleaved", clone(complex_rope_fixture("rope_interleaved.x")), Tensor()))
    expect_values(t, complex_rope_fixture("rope_interleaved.f64." + n), f64_tol(), n);
}

TEST(ex10_rope_complex, the_complex_form_matches_torch_float32) {
  // K = 2 (a complex product's real part sums two products); stages: the
  // table, the product, the backward's product with the conjugate.
  expect_f32_within_bound([](const std::vector<Tensor>& ls) { return complex_run("rope_interleaved", ls[0], Tensor()); },
                          {complex_rope_fixture("rope_interleaved.x")},
                          [](const std::string& n) { return complex_rope_fixture("rope_interleaved.f32." + n); }, {2, 3});
}

TEST(ex10_rope_complex, positions_of_shape_b_t_match_torch_float64) {
  for (const auto& [n, t] : complex_run("rope_positions_bt", clone(complex_rope_fixture("rope_positions_bt.x")),
                                        complex_rope_fixture("rope_positions_bt.positions")))
    expect_values(t, complex_rope_fixture("rope_positions_bt.f64." + n), f64_tol(), n);
}

TEST(ex10_rope_complex, one_plus_2i_times_3_plus_4i_is_minus_5_plus_10i) {
  expect_values(nn::complex_mul(tensor({1, 2}, {2}, DType::Float64), tensor({3, 4}, {2}, DType::Float64)),
                tensor({-5, 10}, {2}, DType::Float64), f64_tol(), "(1 + 2i)(3 + 4i)");
}

TEST(ex10_rope_complex, view_as_complex_is_a_view_of_adjacent_pairs) {
  const Tensor x = reshape(arange(0.0, 24.0, 1.0, DType::Float64), {2, 3, 4});
  const Tensor z = nn::view_as_complex(x);
  if (z.shape() != Shape{2, 3, 2, 2}) {
    ADD_FAILURE() << "view_as_complex of (2, 3, 4) has shape " << shape_str(z.shape()) << ", expected [2, 3, 2, 2]";
    return;
  }
  if (!z.shares_storage_with(x)) ADD_FAILURE() << "view_as_complex copied: it must be a view of x's storage";
  // z[1, 2, 1] = x[1, 2, 2] + i x[1, 2, 3] = 22 + 23i
  expect_values(select(select(select(z, 0, 1), 0, 2), 0, 1), tensor({22, 23}, {2}, DType::Float64), {0, 0},
                "z[1, 2, 1]");
}

TEST(ex10_rope_complex, complex_mul_gradients_pass_gradcheck) {  // a (3, 4, 2), b (4, 2) broadcast
  COURSE_AFTER_FORWARD("one_plus_2i_times_3_plus_4i_is_minus_5_plus_10i");
  Generator gen(10);
  expect_gradcheck([](const std::vector<Tensor>& in) { return nn::complex_mul(in[0], in[1]); },
                   {randn({3, 4, 2}, DType::Float64, &gen).requires_grad_(),
                    randn({4, 2}, DType::Float64, &gen).requires_grad_()},
                   "complex_mul");
}

}  // namespace
}  // namespace ropegrad::course
