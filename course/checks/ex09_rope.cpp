// ex09-rope: RoPE, real form (nn/rope.cpp: rope_frequency; nn/rope_rotate.cpp:
// the pair rotation, interleaved pairs, rope_rotate and its backward) against
// PyTorch (tests/fixtures/attention/rope_*: x (B, H, T, dh) = (2, 3, 5, 8),
// default positions 0..T-1 or explicit (B, T) positions up to 104).
#include <cmath>
#include <numbers>

#include "course/checks/check_util.h"
#include "nn/rope.h"

namespace ropegrad::course {
namespace {

Tensor rope_fixture(const std::string& name) { return load_fixture("attention/" + name); }

nn::RopeConfig config(int64_t head_dim, nn::RopePairing pairing = nn::RopePairing::Interleaved) {
  nn::RopeConfig c;
  c.head_dim = head_dim;
  c.pairing = pairing;
  c.max_seq_len = 16;  // the (B, T) fixture reaches position 104: the table must extend
  return c;
}

// out and d sum(out * w) / dx of case `name` with the given positions, in x's dtype.
NamedTensors rope_run(const std::string& name, const Tensor& x_in, const Tensor& positions,
                      nn::RopePairing pairing = nn::RopePairing::Interleaved) {
  nn::RotaryEmbedding rope(config(8, pairing), x_in.dtype());
  Tensor x = to(x_in, x_in.dtype()).detach().requires_grad_();
  const Tensor out = rope.forward(x, positions);
  backward(out, clone(to(rope_fixture(name + ".w"), x_in.dtype())));  // d sum(out * w) / dx
  return {{"out", out.detach()}, {"grad_x", x.grad()}};
}

void expect_f64_case(const std::string& name, bool explicit_positions, Part part) {
  const Tensor positions = explicit_positions ? rope_fixture(name + ".positions") : Tensor();
  for (const auto& [n, t] : rope_run(name, rope_fixture(name + ".x"), positions))
    if (in_part(n, part)) expect_values(t, rope_fixture(name + ".f64." + n), f64_tol(), n);
}

// The forward checks come first; the gradient checks below are skipped while
// one fails (sin and cos swapped in the forward would otherwise show as a
// gradient "of the wrong sign": the right backward of the wrong forward).
const char* const kForwardChecks[] = {"forward_of_interleaved_pairs_matches_torch_float64",
                                      "forward_with_positions_of_shape_b_t_matches_torch_float64"};
#define AFTER_ROPE_FORWARD() COURSE_AFTER_FORWARD(kForwardChecks[0], kForwardChecks[1])

// The parts first: the frequencies, then what a rotation does to one pair.
TEST(ex09_rope, pair_k_turns_by_base_to_the_minus_2k_over_dh_per_position) {
  // dh = 8, base 10000: pair k turns by 10000^(-2k/8) = 1, 0.1, 0.01, 0.001 rad per position.
  nn::RotaryEmbedding rope(config(8), DType::Float64);
  bool right = true;
  std::vector<double> exponent;  // x_k with frequency k = base^(-x_k)
  std::string seen;
  for (int64_t k = 0; k < 4; ++k) {
    const double want = std::pow(10000.0, -2.0 * k / 8), got = rope.frequencies()[k];
    right = right && std::abs(got - want) <= 1e-15 * want;
    exponent.push_back(-std::log(got) / std::log(10000.0));
    seen += fmt::format("{}{:.6g}", k ? ", " : "", got);
  }
  if (!right) {
    // The exponents the frequencies imply, and the line through them (x_k = a k + b) when one fits all four.
    const double a = exponent[1] - exponent[0], b = exponent[0];
    bool linear = true;
    for (int64_t k = 0; k < 4; ++k) linear = linear && std::abs(exponent[k] - (a * k + b)) <= 1e-9;
    std::string form;
    if (linear && std::abs(a) <= 1e-12 && std::abs(b) <= 1e-12) {
      form = ": base^0 = 1 for every pair, the exponent 0 for each k (2k / dh in whole numbers is 0 for k < dh / 2)";
    } else if (linear && std::isfinite(a) && std::isfinite(b)) {
      form = fmt::format(": base^(-x) with x = {:.6g} k{} for pair k", a,
                         std::abs(b) <= 1e-12 ? "" : fmt::format(" + {:.6g}", b));
      if (std::abs(b) <= 1e-12 && a != 0) {
        const double denominator = 2 / a;  // x = 2k / D
        form += fmt::format(" = 2k / {:.6g}", denominator);
        const std::pair<double, const char*> dims[] = {{6, "dh - 2"}, {10, "dh + 2"}, {7, "dh - 1"},
                                                       {9, "dh + 1"}, {4, "dh / 2"},  {16, "2 dh"},
                                                       {-8, "-dh"}};
        for (const auto& [d, name] : dims) {
          if (std::abs(denominator - d) <= 1e-9) form += fmt::format(" = 2k / ({}), where 2k / dh belongs", name);
        }
      } else if (std::abs(a - 0.25) <= 1e-12 && std::abs(b - 0.25) <= 1e-12) {
        form += " = 2(k + 1) / dh: the pairs numbered from 1, where pair 0 turns by 1 rad";
      }
    }
    // One factor for every pair (2 pi: a period taken for a frequency), or one other base b for b^(-2k/dh).
    double ratio = rope.frequencies()[0];
    for (int64_t k = 1; k < 4 && std::isfinite(ratio); ++k) {
      const double r = rope.frequencies()[k] / std::pow(10000.0, -2.0 * k / 8);
      if (!(std::abs(r - ratio) <= 1e-9 * std::abs(ratio))) ratio = NAN;
    }
    if (std::isfinite(ratio) && std::abs(ratio - 1) > 1e-9) {
      const std::pair<double, const char*> named[] = {{2 * M_PI, " = 2 pi"}, {M_PI, " = pi"}, {1 / (2 * M_PI), " = 1 / (2 pi)"},
                                                      {2.0, ""}, {0.5, ""}};
      std::string name;
      for (const auto& [v, text] : named)
        if (std::abs(ratio - v) <= 1e-9 * v) name = text;
      form += fmt::format("; each is {:.6g}{} x the expected", ratio, name);
    } else if (linear && std::abs(b) <= 1e-12 && a > 0) {
      const double base = std::pow(10000.0, a * 8 / 2);  // base^(-a k) = B^(-2k/8)
      const std::pair<double, const char*> named[] = {{M_E, " = e (exp where pow(base, .) belongs)"}, {10.0, ""},
                                                      {100.0, ""}, {1000.0, ""}, {2.0, ""}};
      std::string name;
      for (const auto& [v, text] : named)
        if (std::abs(base - v) <= 1e-9 * v) name = text;
      if (std::abs(base - 10000.0) > 1e-6)
        form += fmt::format("; that is B^(-2k/dh) with B = {:.6g}{}, where base = 10000 belongs", base, name);
    }
    // Each within float32's rounding of the right one: computed in float, then widened.
    bool float_close = true;
    double worst = 0;
    for (int64_t k = 0; k < 4; ++k) {
      const double want = std::pow(10000.0, -2.0 * k / 8), off = std::abs(rope.frequencies()[k] - want) / want;
      float_close = float_close && off <= 1e-6;
      worst = std::max(worst, off);
    }
    if (float_close)
      form = fmt::format(": each is right to float32 precision only (relative differences up to {:.2g}, where double "
                         "keeps 1e-16): the frequency is computed in float",
                         worst);
    ADD_FAILURE() << "with dh = 8, base 10000 the pairs k = 0..3 turn by " << seen
                  << " rad per position, expected base^(-2k/dh) = 1, 0.1, 0.01, 0.001" << form;
    return;
  }
}

// The base is the config's: with base 100 and dh = 8 the pairs turn by
// 100^(-2k/8) = 1, 0.316228, 0.1, 0.0316228 rad per position.
TEST(ex09_rope, the_frequencies_follow_the_configured_base) {
  COURSE_REQUIRES("pair_k_turns_by_base_to_the_minus_2k_over_dh_per_position");
  nn::RopeConfig c = config(8);
  c.base = 100.0;
  nn::RotaryEmbedding rope(c, DType::Float64);
  std::string seen;
  bool right = true, as_10000 = true;
  for (int64_t k = 0; k < 4; ++k) {
    const double got = rope.frequencies()[k], want = std::pow(100.0, -2.0 * k / 8);
    right = right && std::abs(got - want) <= 1e-15 * want;
    as_10000 = as_10000 && std::abs(got - std::pow(10000.0, -2.0 * k / 8)) <= 1e-15;
    seen += fmt::format("{}{:.6g}", k ? ", " : "", got);
  }
  if (right) return;
  ADD_FAILURE() << "with base 100 (dh = 8) the pairs k = 0..3 turn by " << seen
                << " rad per position, expected 100^(-2k/dh) = 1, 0.316228, 0.1, 0.0316228"
                << (as_10000 ? ": those of base 10000, whatever the config's base" : "");
}

TEST(ex09_rope, pairs_are_adjacent_dims) {
  COURSE_REQUIRES("pair_k_turns_by_base_to_the_minus_2k_over_dh_per_position");
  // x = e_0 (dh = 4) at position 1: pair (x0, x1) turns by theta_0 = 1 rad,
  // out = (cos 1, sin 1, 0, 0). Half-split pairs (x_i, x_i+dh/2) would move dim 0 into dim 2.
  nn::RotaryEmbedding rope(config(4), DType::Float64);
  const Tensor x = reshape(tensor({1, 0, 0, 0}, {4}, DType::Float64), {1, 4});  // (T = 1, dh)
  const std::vector<double> out = rope.forward(x, tensor_i64({1}, {1})).to_vector<double>();
  if (std::abs(out[2]) > 1e-12 && std::abs(out[1]) < 1e-12)
    ADD_FAILURE() << "half-split pairs: dim 0 was rotated into dim 2 = 0 + dh/2 (out = [" << out[0] << ", " << out[1]
                  << ", " << out[2] << ", " << out[3]
                  << "]); the pairs are interleaved: (x0, x1), (x2, x3), ...";
  else
    expect_values(rope.forward(x, tensor_i64({1}, {1})),
                  reshape(tensor({std::cos(1.0), std::sin(1.0), 0, 0}, {4}, DType::Float64), {1, 4}), f64_tol(),
                  "e_0 at position 1");
}

// The pair (a, b) = (1, 2) of dims 0 and 1 at position 1 (turned by t = 1
// rad) becomes (a cos t - b sin t, a sin t + b cos t). When it does not, the
// map the code applies to the pair is measured on (1, 0) and (0, 1); when
// that map gives (1, 2) too (it is linear), each of its four entries is named
// (cos t, sin t, either negated, 0, 1 or its value) against the rotation's.
// Otherwise each output is named among look-alikes, or as none of them.
std::string entry_name(double v, double c, double s) {
  const std::pair<const char*, double> names[] = {{"cos t", c}, {"-cos t", -c}, {"sin t", s}, {"-sin t", -s},
                                                  {"0", 0.0},   {"1", 1.0},     {"-1", -1.0}};
  for (const auto& [text, value] : names) {
    if (std::abs(v - value) <= 1e-12) return text;
  }
  return fmt::format("{:.6g}", v);
}

std::string pair_map_text(nn::RotaryEmbedding& rope, const std::vector<double>& out, double c, double s) {
  const auto turn = [&](double a, double b) {
    const Tensor x = reshape(tensor({a, b, 0, 0}, {4}, DType::Float64), {1, 4});
    return rope.forward(x, tensor_i64({1}, {1})).to_vector<double>();
  };
  const std::vector<double> e0 = turn(1, 0), e1 = turn(0, 1);
  const double m[2][2] = {{e0[0], e1[0]}, {e0[1], e1[1]}};
  for (int r = 0; r < 2; ++r) {
    if (std::abs(out[r] - (m[r][0] + 2 * m[r][1])) > 1e-12) return "";  // not one linear map of the pair
  }
  const double want[2][2] = {{c, -s}, {s, c}};
  std::string got_text = "[[", wrong;
  for (int r = 0; r < 2; ++r) {
    for (int k = 0; k < 2; ++k) {
      got_text += entry_name(m[r][k], c, s) + (k == 0 ? ", " : r == 0 ? "], [" : "]]");
      if (std::abs(m[r][k] - want[r][k]) > 1e-12) {
        wrong += fmt::format("{}({}, {}) is {} where {} belongs", wrong.empty() ? "" : ", ", r, k,
                             entry_name(m[r][k], c, s), entry_name(want[r][k], c, s));
      }
    }
  }
  return fmt::format("the code turns the pair (a, b) into M (a, b) with M = {}, where the rotation [[cos t, -sin t], "
                     "[sin t, cos t]] belongs (measured on (1, 0) and (0, 1); out[k] = M[k][0] a + M[k][1] b): entry {}",
                     got_text, wrong);
}

TEST(ex09_rope, a_pair_turns_as_a_complex_number) {
  COURSE_REQUIRES("pair_k_turns_by_base_to_the_minus_2k_over_dh_per_position");
  nn::RotaryEmbedding rope(config(4), DType::Float64);
  const double a = 1, b = 2, c = std::cos(1.0), s = std::sin(1.0);
  const Tensor x = reshape(tensor({a, b, 0, 0}, {4}, DType::Float64), {1, 4});
  const std::vector<double> out = rope.forward(x, tensor_i64({1}, {1})).to_vector<double>();
  const std::pair<const char*, double> forms[] = {{"a cos t - b sin t", a * c - b * s}, {"a sin t + b cos t", a * s + b * c},
                                                  {"a cos t + b sin t", a * c + b * s}, {"b cos t - a sin t", b * c - a * s},
                                                  {"a", a}, {"b", b}, {"0", 0.0}};
  const auto name = [&](double v) -> std::string {
    for (const auto& [text, value] : forms) {
      if (std::abs(v - value) <= 1e-12) return text;
    }
    return "none of a cos t -+ b sin t, a sin t +- b cos t, a, b, 0";
  };
  const bool first = std::abs(out[0] - (a * c - b * s)) <= 1e-12, second = std::abs(out[1] - (a * s + b * c)) <= 1e-12;
  if (first && second) return;
  const std::string map = pair_map_text(rope, out, c, s);
  ADD_FAILURE() << "(a, b) = (1, 2) at position 1 (t = 1 rad) gives out[0] = " << fmt::format("{:.6g}", out[0]) << " ("
                << name(out[0]) << (first ? ", right" : ", where a cos t - b sin t belongs") << "), out[1] = "
                << fmt::format("{:.6g}", out[1]) << " (" << name(out[1])
                << (second ? ", right" : ", where a sin t + b cos t belongs") << ")" << (map.empty() ? "" : "; " + map);
}

// The table the rotation uses, once the frequencies and one pair's rotation
// are right: pair 1 of e_2 at position 3 turns by 0.3 rad.
TEST(ex09_rope, the_rotation_uses_each_pairs_frequency) {
  COURSE_REQUIRES("pair_k_turns_by_base_to_the_minus_2k_over_dh_per_position", "pairs_are_adjacent_dims",
                  "a_pair_turns_as_a_complex_number");
  nn::RotaryEmbedding rope(config(8), DType::Float64);
  const Tensor x = reshape(tensor({0, 0, 1, 0, 0, 0, 0, 0}, {8}, DType::Float64), {1, 8});
  expect_values(rope.forward(x, tensor_i64({3}, {1})),
                reshape(tensor({0, 0, std::cos(0.3), std::sin(0.3), 0, 0, 0, 0}, {8}, DType::Float64), {1, 8}),
                f64_tol(),
                "the frequencies are right (1, 0.1, 0.01, 0.001), the rotation that uses them is not: e_2 at "
                "position 3");
}

// Then the whole forward against torch.
TEST(ex09_rope, forward_of_interleaved_pairs_matches_torch_float64) {
  COURSE_REQUIRES("pair_k_turns_by_base_to_the_minus_2k_over_dh_per_position", "pairs_are_adjacent_dims",
                  "a_pair_turns_as_a_complex_number", "the_rotation_uses_each_pairs_frequency");
  expect_f64_case("rope_interleaved", false, Part::Forward);
}

TEST(ex09_rope, forward_with_positions_of_shape_b_t_matches_torch_float64) {
  COURSE_REQUIRES("pair_k_turns_by_base_to_the_minus_2k_over_dh_per_position", "pairs_are_adjacent_dims",
                  "a_pair_turns_as_a_complex_number", "the_rotation_uses_each_pairs_frequency");
  expect_f64_case("rope_positions_bt", true, Part::Forward);
}

TEST(ex09_rope, positions_of_shape_t_match_torch_float64) {
  COURSE_REQUIRES("pair_k_turns_by_base_to_the_minus_2k_over_dh_per_position", "pairs_are_adjacent_dims",
                  "a_pair_turns_as_a_complex_number");
  // Batch b of the (B, T) fixture alone, with its positions as a (T) vector.
  const Tensor x = rope_fixture("rope_positions_bt.x"), positions = rope_fixture("rope_positions_bt.positions");
  nn::RotaryEmbedding rope(config(8), DType::Float64);
  for (int64_t b = 0; b < 2; ++b) {
    const Tensor out = rope.forward(contiguous(select(x, 0, b)), contiguous(select(positions, 0, b)));
    expect_values(out, select(rope_fixture("rope_positions_bt.f64.out"), 0, b), f64_tol(),
                  "out of batch " + std::to_string(b));
  }
}

// ---- the gradient, once the forward is right ----

// The gradient of one pair at position 1 (t = 1 rad) is g turned back:
// R(-t) g = [[cos t, sin t], [-sin t, cos t]] g, whatever x is. Measured as
// the map from g, on g = (1, 0) and (0, 1), at two inputs x; a gradient that
// changes with x, or does not change with g, is said so first.
TEST(ex09_rope, the_gradient_of_a_pair_turns_g_back) {
  AFTER_ROPE_FORWARD();
  nn::RotaryEmbedding rope(config(4), DType::Float64);
  const auto grad = [&](double a, double b, double ga, double gb) {
    Tensor x = reshape(tensor({a, b, 0, 0}, {4}, DType::Float64), {1, 4}).requires_grad_();
    backward(rope.forward(x, tensor_i64({1}, {1})), reshape(tensor({ga, gb, 0, 0}, {4}, DType::Float64), {1, 4}));
    const std::vector<double> d = x.grad().defined() ? x.grad().to_vector<double>() : std::vector<double>(4, NAN);
    return std::vector<double>{d[0], d[1]};
  };
  const auto same = [](const std::vector<double>& p, const std::vector<double>& q) {
    return std::abs(p[0] - q[0]) <= 1e-12 && std::abs(p[1] - q[1]) <= 1e-12;
  };
  const double c = std::cos(1.0), sn = std::sin(1.0);
  const std::vector<double> e0 = grad(1, 2, 1, 0), e1 = grad(1, 2, 0, 1);
  if (same(e0, {c, -sn}) && same(e1, {sn, c})) return;
  if (same(grad(3, -1, 1, 0), grad(3, -1, 2, 0)) && same(grad(1, 2, 1, 0), grad(1, 2, 3, 0))) {
    ADD_FAILURE() << "the gradient of the pair (x0, x1) does not change with the output's gradient g (g = (1, 0), "
                  << "(2, 0) and (3, 0) give the same): g is not read; the gradient is R(-t) g";
    return;
  }
  if (!same(grad(3, -1, 1, 0), e0)) {
    const std::vector<double> other = grad(3, -1, 1, 0);
    ADD_FAILURE() << fmt::format("the gradient of the pair for g = (1, 0) is ({:.6g}, {:.6g}) at x = (1, 2) and "
                                 "({:.6g}, {:.6g}) at x = (3, -1): it changes with x, where R(-t) g = (cos t, -sin t) "
                                 "depends on g and the angle alone",
                                 e0[0], e0[1], other[0], other[1]);
    return;
  }
  const double m[2][2] = {{e0[0], e1[0]}, {e0[1], e1[1]}}, want[2][2] = {{c, sn}, {-sn, c}};
  std::string got, wrong;
  for (int r = 0; r < 2; ++r) {
    for (int k = 0; k < 2; ++k) {
      got += (r == 0 && k == 0 ? "[[" : k == 0 ? "], [" : ", ") + entry_name(m[r][k], c, sn);
      if (std::abs(m[r][k] - want[r][k]) > 1e-12)
        wrong += fmt::format("{}({}, {}) is {} where {} belongs", wrong.empty() ? "" : ", ", r, k,
                             entry_name(m[r][k], c, sn), entry_name(want[r][k], c, sn));
    }
  }
  ADD_FAILURE() << "the gradient of the pair (x0, x1) at position 1 (t = 1 rad) is M g with M = " << got
                << "]] (measured on g = (1, 0) and (0, 1)), where R(-t) = [[cos t, sin t], [-sin t, cos t]] belongs: "
                << "entry " << wrong;
}

TEST(ex09_rope, gradient_of_interleaved_pairs_matches_torch_float64) {
  AFTER_ROPE_FORWARD();
  expect_f64_case("rope_interleaved", false, Part::Gradients);
}

TEST(ex09_rope, gradient_with_positions_of_shape_b_t_matches_torch_float64) {
  AFTER_ROPE_FORWARD();
  expect_f64_case("rope_positions_bt", true, Part::Gradients);
}

// A non-contiguous input, as q is after splitting heads (a transposed
// view): its gradient is that of the same values laid out contiguously.
TEST(ex09_rope, a_transposed_view_gets_its_gradient) {
  AFTER_ROPE_FORWARD();
  nn::RotaryEmbedding rope(config(8), DType::Float64);
  Generator gen(21);
  const Tensor base = randn({2, 8, 3}, DType::Float64, &gen), w = randn({2, 3, 8}, DType::Float64, &gen);
  Tensor leaf = clone(base).requires_grad_(), flat = contiguous(transpose(base, 1, 2)).requires_grad_();
  const Tensor positions = tensor_i64({0, 1, 2}, {3});
  std::string error;
  try {
    backward(rope.forward(transpose(leaf, 1, 2), positions), w);  // (2, 3, 8), strides of (2, 8, 3)
  } catch (const NotImplemented&) {
    throw;
  } catch (const Error& e) {
    error = e.what();
  }
  backward(rope.forward(flat, positions), w);
  const std::string label = "rope of transpose(x, 1, 2), x (2, 8, 3): a non-contiguous (2, 3, 8) view";
  if (!error.empty()) {
    ADD_FAILURE() << label << ": backward raised an error (the same values laid out contiguously run): " << error;
  } else if (!leaf.grad().defined()) {
    ADD_FAILURE() << label << ": x got no gradient (the same values laid out contiguously get theirs): the node "
                              "is not attached to the caller's input";
  } else {
    expect_values(transpose(leaf.grad(), 1, 2), flat.grad(), f64_tol(),
                  label + ": grad x (expected: the contiguous input's, transposed back)");
  }
}

// The tensor a run names NAME.
Tensor named(const NamedTensors& run, const std::string& name) {
  for (const auto& [n, t] : run)
    if (n == name) return t;
  return Tensor();
}

// Half-split pairs (x_i, x_{i + dh/2}) (their pairing is given, outside the
// exercise's region): the backward turns the gradient back on the pairs the
// forward turned.
TEST(ex09_rope, gradient_of_half_split_pairs_matches_torch_float64) {
  AFTER_ROPE_FORWARD();
  const Tensor x = rope_fixture("rope_half_split.x");
  const NamedTensors run = rope_run("rope_half_split", x, Tensor(), nn::RopePairing::HalfSplit);
  const Tensor want_grad = rope_fixture("rope_half_split.f64.grad_x");
  // The forward right and the gradient that of interleaved pairs (with the interleaved gradient checked right):
  // the backward turns g on the other pairing.
  if (all_close(named(run, "out"), rope_fixture("rope_half_split.f64.out"), f64_tol()) &&
      !all_close(named(run, "grad_x"), want_grad, f64_tol()) &&
      failed_forward_check({"gradient_of_interleaved_pairs_matches_torch_float64"}).empty() &&
      all_close(named(run, "grad_x"), named(rope_run("rope_half_split", x, Tensor()), "grad_x"), f64_tol())) {
    ADD_FAILURE() << "half-split pairs (x_i, x_{i + dh/2}): the output is right, and grad_x is exactly the gradient "
                     "of interleaved pairs (x_2k, x_2k+1) for the same output gradient: the backward turns g back on "
                     "interleaved pairs where the forward turned half-split ones";
  }
  for (const auto& [n, t] : run)
    expect_values(t, rope_fixture("rope_half_split.f64." + n), f64_tol(), "half-split pairs (x_i, x_{i + dh/2}): " + n);
}

TEST(ex09_rope, interleaved_pairs_match_torch_float32) {
  AFTER_ROPE_FORWARD();
  // K = 2: an output is a pair's rotation x_a cos - x_b sin; stages: the table
  // (cos, sin of a float32 angle), the rotation, the backward's rotation.
  expect_f32_within_bound([](const std::vector<Tensor>& ls) { return rope_run("rope_interleaved", ls[0], Tensor()); },
                          {rope_fixture("rope_interleaved.x")},
                          [](const std::string& n) { return rope_fixture("rope_interleaved.f32." + n); }, {2, 3});
}

TEST(ex09_rope, the_gradient_passes_gradcheck) {  // the backward turns the gradient back by -angle
  AFTER_ROPE_FORWARD();
  Generator gen(9);
  const Tensor positions = tensor_i64({4, 0, 7, 2, 9, 1}, {2, 3});
  expect_gradcheck(
      [&](const std::vector<Tensor>& in) {
        nn::RotaryEmbedding rope(config(6), DType::Float64);
        return rope.forward(in[0], positions);
      },
      {randn({2, 3, 6}, DType::Float64, &gen).requires_grad_()}, "RoPE");  // (B, T, dh)
}
// cos and sin tables of another dtype than x (float64 tables, a float32 x)
// are converted to x's dtype, in the forward and in what the backward
// saves: the same as with the tables converted by the caller, bit for bit.
TEST(ex09_rope, tables_of_another_dtype_are_converted_to_the_inputs) {
  AFTER_ROPE_FORWARD();
  Generator gen(33);
  const Tensor angles = mul(rand({3, 4}, DType::Float64, &gen), 6.0);  // (T, dh/2)
  const Tensor cos64 = cos(angles), sin64 = sin(angles);
  const Tensor x0 = randn({2, 3, 8}, DType::Float32, &gen), w = randn({2, 3, 8}, DType::Float32, &gen);
  const auto run = [&](const Tensor& c, const Tensor& s) {
    Tensor x = clone(x0).requires_grad_();
    const Tensor out = nn::rope_rotate(x, c, s, nn::RopePairing::Interleaved);
    backward(out, w);
    return std::make_pair(out.detach(), x.grad());
  };
  const auto [want_out, want_grad] = run(to(cos64, DType::Float32), to(sin64, DType::Float32));
  const std::string label = "rope_rotate of a float32 x with float64 cos and sin tables";
  std::pair<Tensor, Tensor> got;
  try {
    got = run(cos64, sin64);
  } catch (const NotImplemented&) {
    throw;
  } catch (const Error& e) {
    ADD_FAILURE() << label << " raised an error (with the tables converted to float32 first it runs): " << e.what();
    return;
  }
  expect_values(got.first, want_out, {0, 0}, label + ": out (expected: that with the tables converted first)");
  if (!got.second.defined()) {
    ADD_FAILURE() << label << ": x got no gradient";
    return;
  }
  expect_values(got.second, want_grad, {0, 0}, label + ": grad x (expected: that with the tables converted first)");
}
}  // namespace
}  // namespace ropegrad::course
