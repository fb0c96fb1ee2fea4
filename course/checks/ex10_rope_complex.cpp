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

// A complex number's look-alike values, to name what a product gave: (re, im) -> text.
std::string complex_name(double re, double im, const std::vector<std::pair<std::string, std::pair<double, double>>>& forms) {
  for (const auto& [text, v] : forms) {
    if (std::abs(re - v.first) <= 1e-12 && std::abs(im - v.second) <= 1e-12) return " (" + text + ")";
  }
  return "";
}

TEST(ex10_rope_complex, one_plus_2i_times_3_plus_4i_is_minus_5_plus_10i) {
  const Tensor got = nn::complex_mul(tensor({1, 2}, {2}, DType::Float64), tensor({3, 4}, {2}, DType::Float64));
  const std::vector<double> z = got.to_vector<double>();
  if (z.size() == 2 && std::abs(z[0] + 5) <= 1e-12 && std::abs(z[1] - 10) <= 1e-12) return;
  // a = 1 + 2i, b = 3 + 4i: each look-alike gives another pair.
  const std::vector<std::pair<std::string, std::pair<double, double>>> forms = {
      {"a conj(b) = (1 + 2i)(3 - 4i)", {11, 2}},
      {"conj(a) b = (1 - 2i)(3 + 4i)", {11, -2}},
      {"the real and imaginary parts in each other's places", {10, -5}},
      {"re = ac + bd, the sign of bd flipped", {11, 10}},
      {"im = ad - bc, the sign of bc flipped", {-5, -2}},
      {"(ac, bd): the parts multiplied one by one", {3, 8}},
  };
  if (z.size() != 2) {
    ADD_FAILURE() << "(1 + 2i)(3 + 4i) has shape " << shape_str(got.shape()) << ", expected [2] (re, im)";
    return;
  }
  ADD_FAILURE() << "(1 + 2i)(3 + 4i) = " << z[0] << (z[1] < 0 ? " - " : " + ") << std::abs(z[1]) << "i"
                << complex_name(z[0], z[1], forms) << ", expected -5 + 10i: (a + bi)(c + di) = (ac - bd) + (ad + bc)i";
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

// x requires a gradient, grad mode is on: each step of the complex form must
// be recorded on the graph, view_as_complex, complex_mul, view_as_real and
// forward_complex itself. The first that is not is named.
TEST(ex10_rope_complex, each_step_is_recorded_on_the_graph) {
  COURSE_REQUIRES("view_as_complex_is_a_view_of_adjacent_pairs");
  Tensor x = reshape(arange(0.0, 8.0, 1.0, DType::Float64), {1, 8}).requires_grad_();
  const Tensor rotation = tensor({1, 0, 0, 1, 1, 0, 0, 1}, {4, 2}, DType::Float64);
  const Tensor z = nn::view_as_complex(x);
  const Tensor product = nn::complex_mul(z, rotation);
  const Tensor back = nn::view_as_real(product);
  nn::RopeConfig c;
  c.head_dim = 8;
  c.max_seq_len = 4;
  nn::RotaryEmbedding rope(c, DType::Float64);
  const Tensor out = rope.forward_complex(x, tensor_i64({1}, {1}));
  const std::pair<const char*, const Tensor*> steps[] = {{"view_as_complex(x)", &z},
                                                         {"complex_mul(view_as_complex(x), e^{it})", &product},
                                                         {"view_as_real(complex_mul(...))", &back},
                                                         {"forward_complex(x)", &out}};
  for (const auto& [what, t] : steps) {
    if (t->requires_grad()) continue;
    ADD_FAILURE() << what << " does not require a gradient though x does (grad mode on): it is not recorded on the "
                  << "graph, so no gradient can reach x through it"
                  << (t == &z ? "" : " (the steps before it are recorded)");
    return;
  }
}

// With a = 1 + 2i, b = 3 + 4i and the output's gradient g = 1 (then g = i),
// a real loss gives grad_a = g conj(b) = 3 - 4i (then 4 + 3i) and grad_b = g
// conj(a) = 1 - 2i (then 2 + i): each gradient named among its look-alikes.
TEST(ex10_rope_complex, gradients_are_g_times_the_conjugate_of_the_other_factor) {
  COURSE_AFTER_FORWARD("one_plus_2i_times_3_plus_4i_is_minus_5_plus_10i");
  struct Seen {
    double ar, ai, br, bi;
  };
  const auto grads = [](double gr, double gi) {
    Tensor a = tensor({1, 2}, {2}, DType::Float64).requires_grad_();
    Tensor b = tensor({3, 4}, {2}, DType::Float64).requires_grad_();
    backward(nn::complex_mul(a, b), tensor({gr, gi}, {2}, DType::Float64));
    const std::vector<double> da = a.grad().defined() ? a.grad().to_vector<double>() : std::vector<double>{NAN, NAN};
    const std::vector<double> db = b.grad().defined() ? b.grad().to_vector<double>() : std::vector<double>{NAN, NAN};
    return Seen{da[0], da[1], db[0], db[1]};
  };
  const Seen one = grads(1, 0), i = grads(0, 1);
  const auto check = [](const char* name, double re, double im, double want_re, double want_im, const char* want,
                        const std::vector<std::pair<std::string, std::pair<double, double>>>& forms,
                        const char* g) {
    if (std::abs(re - want_re) <= 1e-12 && std::abs(im - want_im) <= 1e-12) return;
    ADD_FAILURE() << "with g = " << g << ": " << name << " = " << re << (im < 0 ? " - " : " + ") << std::abs(im) << "i"
                  << complex_name(re, im, forms) << ", expected " << want;
  };
  // For g = 1 and g = i: the values of g conj(other), g other, conj(g) conj(other), g conj(self), g self.
  check("grad_a", one.ar, one.ai, 3, -4, "g conj(b) = 3 - 4i",
        {{"g b: the conjugate left out", {3, 4}}, {"g conj(a): the other factor is b", {1, -2}},
         {"g a", {1, 2}}}, "1");
  check("grad_a", i.ar, i.ai, 4, 3, "g conj(b) = i (3 - 4i) = 4 + 3i",
        {{"g b: the conjugate left out", {-4, 3}}, {"conj(g) conj(b) = -i (3 - 4i): g conjugated too", {-4, -3}},
         {"conj(g) b = -i (3 + 4i): g conjugated, not b", {4, -3}}, {"g conj(a): the other factor is b", {2, 1}}},
        "i");
  check("grad_b", one.br, one.bi, 1, -2, "g conj(a) = 1 - 2i",
        {{"g a: the conjugate left out", {1, 2}}, {"g conj(b): the other factor is a", {3, -4}},
         {"g b", {3, 4}}}, "1");
  check("grad_b", i.br, i.bi, 2, 1, "g conj(a) = i (1 - 2i) = 2 + i",
        {{"g a: the conjugate left out", {-2, 1}}, {"conj(g) conj(a) = -i (1 - 2i): g conjugated too", {-2, -1}},
         {"conj(g) a = -i (1 + 2i): g conjugated, not a", {2, -1}}, {"g conj(b): the other factor is a", {4, 3}}},
        "i");
}

// The pair (x_0, x_1) of e_0 and of e_1 at position 1 (dh = 4: t = 1 rad):
// forward_complex must turn (a, b) by [[cos t, -sin t], [sin t, cos t]], as
// a + bi times e^{it} = cos t + i sin t.
TEST(ex10_rope_complex, a_pair_turns_by_the_rotation_e_to_the_i_t) {
  COURSE_REQUIRES("one_plus_2i_times_3_plus_4i_is_minus_5_plus_10i", "view_as_complex_is_a_view_of_adjacent_pairs");
  nn::RopeConfig c;
  c.head_dim = 4;
  c.max_seq_len = 4;
  nn::RotaryEmbedding rope(c, DType::Float64);
  const auto turn = [&](double a, double b) {
    const Tensor x = reshape(tensor({a, b, 0, 0}, {4}, DType::Float64), {1, 4});
    const Tensor out = rope.forward_complex(x, tensor_i64({1}, {1}));
    return out.numel() == 4 ? out.to_vector<double>() : std::vector<double>{};
  };
  const std::vector<double> e0 = turn(1, 0), e1 = turn(0, 1);
  if (e0.empty() || e1.empty()) {
    ADD_FAILURE() << "forward_complex of a (1, 4) input at position 1 does not give 4 values (the shape of x)";
    return;
  }
  const double cs = std::cos(1.0), sn = std::sin(1.0);
  const double m[2][2] = {{e0[0], e1[0]}, {e0[1], e1[1]}}, want[2][2] = {{cs, -sn}, {sn, cs}};
  const auto name = [&](double v) -> std::string {
    const std::pair<const char*, double> names[] = {{"cos t", cs}, {"-cos t", -cs}, {"sin t", sn}, {"-sin t", -sn},
                                                    {"0", 0.0},    {"1", 1.0},      {"-1", -1.0}};
    for (const auto& [text, value] : names) {
      if (std::abs(v - value) <= 1e-12) return text;
    }
    return fmt::format("{:.6g}", v);
  };
  std::string got, wrong;
  for (int r = 0; r < 2; ++r) {
    for (int k = 0; k < 2; ++k) {
      got += (r == 0 && k == 0 ? "[[" : k == 0 ? "], [" : ", ") + name(m[r][k]);
      if (std::abs(m[r][k] - want[r][k]) > 1e-12)
        wrong += fmt::format("{}({}, {}) is {} where {} belongs", wrong.empty() ? "" : ", ", r, k, name(m[r][k]),
                             name(want[r][k]));
    }
  }
  if (wrong.empty()) return;
  bool backwards = true;  // M is the rotation by -t: times e^{-it}, the conjugate
  for (int r = 0; r < 2; ++r)
    for (int k = 0; k < 2; ++k) backwards = backwards && std::abs(m[r][k] - want[k][r]) <= 1e-12;
  ADD_FAILURE() << "the pair (a, b) of dims 0 and 1 at position 1 (t = 1 rad) becomes M (a, b) with M = " << got
                << "]] (measured on (1, 0) and (0, 1)), where the rotation [[cos t, -sin t], [sin t, cos t]] belongs "
                << "(a + bi times e^{it} = cos t + i sin t): entry " << wrong
                << (backwards ? "; M is the rotation by -t, a + bi times e^{-it} = cos t - i sin t" : "");
}

TEST(ex10_rope_complex, the_complex_form_matches_torch_float64) {
  COURSE_REQUIRES("one_plus_2i_times_3_plus_4i_is_minus_5_plus_10i", "view_as_complex_is_a_view_of_adjacent_pairs",
                  "a_pair_turns_by_the_rotation_e_to_the_i_t", "each_step_is_recorded_on_the_graph");
  for (const auto& [n, t] : complex_run("rope_interleaved", clone(complex_rope_fixture("rope_interleaved.x")), Tensor()))
    expect_values(t, complex_rope_fixture("rope_interleaved.f64." + n), f64_tol(), n);
}

TEST(ex10_rope_complex, the_complex_form_matches_torch_float32) {
  COURSE_REQUIRES("one_plus_2i_times_3_plus_4i_is_minus_5_plus_10i", "view_as_complex_is_a_view_of_adjacent_pairs",
                  "a_pair_turns_by_the_rotation_e_to_the_i_t", "the_complex_form_matches_torch_float64");
  // K = 2 (a complex product's real part sums two products); stages: the
  // table, the product, the backward's product with the conjugate.
  expect_f32_within_bound([](const std::vector<Tensor>& ls) { return complex_run("rope_interleaved", ls[0], Tensor()); },
                          {complex_rope_fixture("rope_interleaved.x")},
                          [](const std::string& n) { return complex_rope_fixture("rope_interleaved.f32." + n); }, {2, 3});
}

TEST(ex10_rope_complex, positions_of_shape_b_t_match_torch_float64) {
  COURSE_REQUIRES("one_plus_2i_times_3_plus_4i_is_minus_5_plus_10i", "view_as_complex_is_a_view_of_adjacent_pairs",
                  "a_pair_turns_by_the_rotation_e_to_the_i_t", "the_complex_form_matches_torch_float64");
  for (const auto& [n, t] : complex_run("rope_positions_bt", clone(complex_rope_fixture("rope_positions_bt.x")),
                                        complex_rope_fixture("rope_positions_bt.positions")))
    expect_values(t, complex_rope_fixture("rope_positions_bt.f64." + n), f64_tol(), n);
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
