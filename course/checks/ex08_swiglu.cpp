// ex08-swiglu: the fused gate silu_mul(a, b) = SiLU(a) b, forward and backward
// (nn/swiglu_gate.cpp), and SwiGLU through it against PyTorch
// (tests/fixtures/nn/swiglu: x (2, 3, 16), d_ff = 64, three weights).
#include <cmath>

#include "course/checks/check_util.h"
#include "course/checks/linear_form.h"
#include "nn/layers.h"

namespace ropegrad::course {
namespace {

double sigmoid_of(double x) { return 1 / (1 + std::exp(-x)); }

TEST(ex08_swiglu, swiglu_forward_and_gradients_match_torch_float64) {
  nn::SwiGLU m(16, 64);
  expect_module_parity(m, [&](const Tensor& x) { return m.forward(x); }, "swiglu", "f64");
}

TEST(ex08_swiglu, swiglu_forward_matches_torch_float32) {
  // out = W2 u, u = silu(a) b, a = W1 x, b = W3 x. The condition of out
  // (sum over leaves of |d out / d leaf| |leaf|), bounded in float64 through
  // the composition: a and b each have 2 |W||x| (every term is linear in W and
  // in x), u has |silu'(a) b| c_a + |silu(a)| c_b, and out |W2| (c_u + |u|).
  // K = 64 (d_ff, the longest contraction); stages: the two first
  // contractions, the gate, the last contraction.
  nn::SwiGLU m(16, 64, nullptr, DType::Float32);
  m.load_state_dict({{"w1.weight", nn_fixture("swiglu", "f32", "w1.weight")},
                     {"w2.weight", nn_fixture("swiglu", "f32", "w2.weight")},
                     {"w3.weight", nn_fixture("swiglu", "f32", "w3.weight")}});
  const Tensor got = m.forward(nn_fixture("swiglu", "f32", "x"));
  const auto f64 = [](const std::string& n) { return to(nn_fixture("swiglu", "f32", n), DType::Float64); };
  const Tensor x = f64("x"), w1 = f64("w1.weight"), w2 = f64("w2.weight"), w3 = f64("w3.weight");
  const auto t = [](const Tensor& w) { return transpose(abs(w), 0, 1); };
  const Tensor a = matmul(x, transpose(w1, 0, 1)), b = matmul(x, transpose(w3, 0, 1));
  const Tensor c_a = mul(matmul(abs(x), t(w1)), 2.0), c_b = mul(matmul(abs(x), t(w3)), 2.0);
  const Tensor s = sigmoid(a), silu_a = mul(a, s);
  const Tensor d_silu = mul(s, add(mul(a, sub(ones_like(s), s)), 1.0));
  const Tensor c_u = add(mul(abs(mul(d_silu, b)), c_a), mul(abs(silu_a), c_b));
  const Tensor c_out = matmul(add(c_u, abs(mul(silu_a, b))), t(w2));
  const auto r = within_f32_bound(got, nn_fixture("swiglu", "f32", "out"), c_out, {64, 4});
  if (!r) ADD_FAILURE() << "out: " << r.message();
}

TEST(ex08_swiglu, silu_is_x_times_sigmoid_x) {
  const std::vector<double> xs = {-30, -2, -0.5, 0, 0.5, 3, 30};
  std::vector<double> want;
  for (double x : xs) want.push_back(x * sigmoid_of(x));
  const Tensor a = tensor(xs, {7}, DType::Float64);
  const std::vector<double> got = nn::silu_mul(a, ones({7}, DType::Float64)).to_vector<double>();
  bool is_sigmoid = true;
  for (size_t i = 0; i < xs.size(); ++i) is_sigmoid = is_sigmoid && std::abs(got[i] - sigmoid_of(xs[i])) <= 1e-12;
  if (is_sigmoid) {
    ADD_FAILURE() << "silu(x) (b = 1) is sigmoid(x) at all 7 points (x = -30 .. 30): the factor x of silu(x) = x "
                     "sigmoid(x) is missing from the forward";
    return;
  }
  expect_values(nn::silu_mul(a, ones({7}, DType::Float64)), tensor(want, {7}, DType::Float64), f64_tol(),
                "silu(x) (b = 1)");
}

// Does got[i] equal want[i] at every point (relative 1e-9)?
bool same_values(const std::vector<double>& got, const std::vector<double>& want) {
  for (size_t i = 0; i < got.size(); ++i)
    if (!(std::abs(got[i] - want[i]) <= 1e-9 * std::max(1.0, std::abs(want[i])))) return false;
  return true;
}

TEST(ex08_swiglu, gate_gradients_at_five_points) {
  COURSE_AFTER_FORWARD("silu_is_x_times_sigmoid_x", "swiglu_forward_matches_torch_float32");
  // d silu_mul(a, b) / da = b silu'(a) = b s (1 + a (1 - s)), d / db = silu(a), s = sigmoid(a).
  // Points where the look-alikes differ: a away from 0 and 1 (silu(1) = s(1)),
  // b distinct and not 1, so that a swapped pair or a missing term shows.
  const std::vector<double> as = {-2.5, -0.5, 0.75, 1.5, 3}, bs = {0.5, -1.25, 2, 0.3, -0.8};
  std::vector<double> want_a, want_b, only_s, silu_prime;
  for (size_t i = 0; i < as.size(); ++i) {
    const double s = sigmoid_of(as[i]);
    silu_prime.push_back(s * (1 + as[i] * (1 - s)));
    want_a.push_back(bs[i] * silu_prime.back());
    want_b.push_back(as[i] * s);
    only_s.push_back(bs[i] * s);
  }
  Tensor a = tensor(as, {5}, DType::Float64).requires_grad_(), b = tensor(bs, {5}, DType::Float64).requires_grad_();
  backward(nn::silu_mul(a, b), ones({5}, DType::Float64));  // d sum(silu(a) b)
  if (!a.grad().defined() || !b.grad().defined()) {
    ADD_FAILURE() << "no gradient for " << (a.grad().defined() ? "b" : "a");
    return;
  }
  const std::vector<double> got_a = a.grad().to_vector<double>(), got_b = b.grad().to_vector<double>();
  if (same_values(got_a, want_a) && same_values(got_b, want_b)) return;
  if (same_values(got_a, want_b) && same_values(got_b, want_a)) {
    ADD_FAILURE() << "the gradients of the two inputs are exchanged: d a equals the expected d b (silu(a)) and d b "
                  << "the expected d a (b silu'(a)) at all 5 points";
    return;
  }
  if (same_values(got_a, only_s) && same_values(got_b, want_b)) {
    ADD_FAILURE() << "d a is b sigmoid(a) at all 5 points, where b silu'(a) = b s (1 + a (1 - s)) was expected: "
                  << "the term a sigmoid(a) (1 - sigmoid(a)) of silu' is missing";
    return;
  }
  const bool a_right = same_values(got_a, want_a), b_right = same_values(got_b, want_b);
  const size_t n = as.size();
  // The one combination of at most two of the quantities the rule is
  // built from that gives all 5 points (linear_form.h): tried after the named forms.
  const auto gate_form = [&](const std::vector<double>& got, const char* which, const char* right) -> std::string {
    std::vector<FormTerm> terms = {{"b s", {}}, {"b a s (1 - s)", {}}, {"a s", {}}, {"b", {}}, {"a", {}}, {"s", {}},
                                   {"b s (1 - s)", {}}, {"a s (1 - s)", {}}, {"b a s", {}}, {"1", {}},
                                   {"b a s^2", {}}, {"b s^2", {}}, {"a s^2", {}}, {"b silu'(a)", {}}};
    for (size_t i = 0; i < n; ++i) {
      const double a = as[i], b = bs[i], s = sigmoid_of(a);
      const double values[] = {b * s,         b * a * s * (1 - s), a * s, b, a, s, b * s * (1 - s), a * s * (1 - s),
                               b * a * s,     1,                   b * a * s * s, b * s * s, a * s * s,
                               b * s * (1 + a * (1 - s))};
      for (size_t t = 0; t < terms.size(); ++t) terms[t].values.push_back(values[t]);
    }
    const std::string form = linear_form(got, terms, 2);
    return form.empty() ? "" : fmt::format("{} is {} at all 5 points (s = sigmoid(a)), where {} belongs", which, form, right);
  };
  // A form of d a that gives all 5 points, tried in turn: the sigmoid taken at
  // another input than a, or another input in (1 + a (1 - s)); silu'(a) times
  // another function of b than b; one of silu's two terms right and the other
  // a simple factor off. "" when none fits.
  const auto describe_a = [&]() -> std::string {
    // The whole rule with a and b in each other's places: a silu'(b).
    std::vector<double> swapped;
    for (size_t i = 0; i < n; ++i) {
      const double sb = sigmoid_of(bs[i]);
      swapped.push_back(as[i] * sb * (1 + bs[i] * (1 - sb)));
    }
    if (same_values(got_a, swapped))
      return "d a is a silu'(b) = a s (1 + b (1 - s)) with s = sigmoid(b) at all 5 points: b silu'(a) with a and b in "
             "each other's places (the rule's arguments exchanged)";
    std::vector<double> a_for_b;
    for (size_t i = 0; i < n; ++i) a_for_b.push_back(as[i] * silu_prime[i]);
    if (same_values(got_a, a_for_b))
      return "d a is a silu'(a) at all 5 points, where b silu'(a) was expected: a read where b belongs";
    std::vector<std::pair<const char*, std::vector<double>>> args = {{"a", as}, {"b", bs}, {"-a", {}}, {"-b", {}}};
    for (size_t i = 0; i < n; ++i) args[2].second.push_back(-as[i]), args[3].second.push_back(-bs[i]);
    for (const auto& z : args) {
      for (size_t u = 0; u < 2; ++u) {
        if (z.first == args[0].first && u == 0) continue;  // the rule itself
        std::vector<double> form;
        for (size_t i = 0; i < n; ++i) {
          const double sz = sigmoid_of(z.second[i]), uu = u == 0 ? as[i] : bs[i];
          form.push_back(bs[i] * sz * (1 + uu * (1 - sz)));
        }
        if (same_values(got_a, form))
          return fmt::format("d a is b s (1 + {} (1 - s)) with s = sigmoid({}) at all 5 points, where b silu'(a) = b s "
                             "(1 + a (1 - s)) with s = sigmoid(a) was expected",
                             args[u].first, z.first);
      }
    }
    const std::vector<std::pair<const char*, double (*)(double)>> of_b = {
        {"silu'(a) alone (no factor b)", [](double) { return 1.0; }},
        {"b^2 silu'(a)", [](double b) { return b * b; }},
        {"silu'(a) / b", [](double b) { return 1 / b; }},
        {"-b silu'(a)", [](double b) { return -b; }}};
    for (const auto& f : of_b) {
      std::vector<double> form;
      for (size_t i = 0; i < n; ++i) form.push_back(f.second(bs[i]) * silu_prime[i]);
      if (same_values(got_a, form)) return fmt::format("d a is {} at all 5 points, where b silu'(a) was expected", f.first);
    }
    // silu'(a) = s + a s (1 - s): d a / b minus one term, over the other.
    const std::vector<std::pair<const char*, double (*)(double a, double s)>> factors = {
        {"0 x", [](double, double) { return 0.0; }},        {"-1 x", [](double, double) { return -1.0; }},
        {"2 x", [](double, double) { return 2.0; }},        {"1/s x", [](double, double s) { return 1 / s; }},
        {"s x", [](double, double s) { return s; }},        {"1/(1 - s) x", [](double, double s) { return 1 / (1 - s); }},
        {"(1 - s) x", [](double, double s) { return 1 - s; }}, {"1/a x", [](double a, double) { return 1 / a; }},
        {"a x", [](double a, double) { return a; }}};
    const char* term_text[2] = {"s", "a s (1 - s)"};
    for (int k = 0; k < 2; ++k) {
      for (const auto& f : factors) {
        std::vector<double> form;
        for (size_t i = 0; i < n; ++i) {
          const double s = sigmoid_of(as[i]), t1 = s, t2 = as[i] * s * (1 - s);
          const double factor = f.second(as[i], s);
          form.push_back(bs[i] * (k == 0 ? factor * t1 + t2 : t1 + factor * t2));
        }
        if (same_values(got_a, form))
          return fmt::format("d a / b, your silu'(a), at all 5 points: of silu'(a) = s + a s (1 - s) (s = sigmoid(a)) "
                             "the {} term {} is right and the {} is {} {}",
                             k == 0 ? "second" : "first", term_text[1 - k], k == 0 ? "first" : "second", f.first,
                             term_text[k]);
      }
    }
    // Sigmoid's derivative where silu's belongs.
    {
      std::vector<double> form;
      for (size_t i = 0; i < n; ++i) form.push_back(bs[i] * sigmoid_of(as[i]) * (1 - sigmoid_of(as[i])));
      if (same_values(got_a, form))
        return "d a / b, your silu'(a), at all 5 points is s (1 - s) (s = sigmoid(a)): sigmoid's derivative, where "
               "silu's s + a s (1 - s) belongs";
    }
    // Both terms other than silu's, each its own factor (0: the term left out),
    // named only when one pair alone fits (several pairs can be one function).
    std::vector<std::string> fitting;
    for (const auto& f1 : factors) {
      for (const auto& f2 : factors) {
        std::vector<double> form;
        for (size_t i = 0; i < n; ++i) {
          const double s = sigmoid_of(as[i]);
          form.push_back(bs[i] * (f1.second(as[i], s) * s + f2.second(as[i], s) * as[i] * s * (1 - s)));
        }
        if (!same_values(got_a, form)) continue;
        const auto said = [](const char* factor, const char* term) {
          return std::string(factor) == "0 x" ? fmt::format("{} left out", term) : fmt::format("{} {}", factor, term);
        };
        fitting.push_back(fmt::format("the first is {}, the second {}", said(f1.first, "s"), said(f2.first, "a s (1 - s)")));
      }
    }
    if (fitting.size() == 1)
      return "d a / b, your silu'(a), at all 5 points: of silu'(a) = s + a s (1 - s) (s = sigmoid(a)) neither term "
             "is right: " + fitting[0];
    return "";
  };
  const auto describe_b = [&]() -> std::string {
    const std::vector<std::pair<const char*, double (*)(double a, double b)>> forms = {
        {"sigmoid(a)", [](double a, double) { return sigmoid_of(a); }},
        {"a", [](double a, double) { return a; }},
        {"silu'(a)", [](double a, double) { return sigmoid_of(a) * (1 + a * (1 - sigmoid_of(a))); }},
        {"silu(b)", [](double, double b) { return b * sigmoid_of(b); }},
        {"b silu(a)", [](double a, double b) { return b * a * sigmoid_of(a); }},
        {"-silu(a)", [](double a, double) { return -a * sigmoid_of(a); }}};
    for (const auto& f : forms) {
      std::vector<double> form;
      for (size_t i = 0; i < n; ++i) form.push_back(f.second(as[i], bs[i]));
      if (same_values(got_b, form))
        return fmt::format("d b is {} at all 5 points, where silu(a) = a sigmoid(a) was expected", f.first);
    }
    if (const std::string form = gate_form(got_b, "d b", "a s"); !form.empty()) return form;
    return fmt::format("d b is wrong: at a = {}, b = {} it is {:.6g}, expected silu(a) = {:.6g}", as[0], bs[0],
                       got_b[0], want_b[0]);
  };
  std::string a_text = a_right ? "d a is right" : describe_a();
  if (a_text.empty()) a_text = gate_form(got_a, "d a", "b s + b a s (1 - s)");
  if (a_text.empty()) {  // no form fits: what the rule gives for silu'(a) (d a / b) beside the true values
    a_text = "d a / b, your silu'(a), at ";
    for (size_t i = 0; i < n; ++i)
      a_text += fmt::format("{}a = {}: {:.6g} (silu' {:.6g})", i ? ", " : "", as[i], got_a[i] / bs[i], silu_prime[i]);
  }
  const std::string b_text = b_right ? "d b is right" : describe_b();
  ADD_FAILURE() << (a_right ? b_text + "; " + a_text : a_text + "; " + b_text);
}

// Where b = 0 the gate's output is 0 whatever a, yet d b = silu(a) is not:
// each gradient is computed from the inputs, never recovered from the output.
TEST(ex08_swiglu, a_zero_b_still_gets_silu_a) {
  COURSE_REQUIRES("gate_gradients_at_five_points");
  const std::vector<double> as = {1.5, -0.7, 2.0}, bs = {0.0, 1.2, 0.0};
  Tensor a = tensor(as, {3}, DType::Float64).requires_grad_(), b = tensor(bs, {3}, DType::Float64).requires_grad_();
  backward(nn::silu_mul(a, b), ones({3}, DType::Float64));
  if (!b.grad().defined()) {
    ADD_FAILURE() << "no gradient for b";
    return;
  }
  const std::vector<double> got = b.grad().to_vector<double>();
  bool right = true, nan_where_zero = true;
  std::string seen;
  for (size_t i = 0; i < 3; ++i) {
    const double want = as[i] * sigmoid_of(as[i]);
    const bool ok = std::abs(got[i] - want) <= 1e-12 * std::max(1.0, std::abs(want));
    right = right && ok;
    nan_where_zero = nan_where_zero && (bs[i] == 0 ? std::isnan(got[i]) : ok);
    seen += fmt::format("{}{} (expected {:.6g})", i ? ", " : "", got[i], want);
  }
  if (right) return;
  ADD_FAILURE() << "at a = 1.5, -0.7, 2 and b = 0, 1.2, 0: d b = " << seen << ", expected silu(a)"
                << (nan_where_zero ? ": nan exactly where b = 0 and right where b = 1.2 (a division by b, such as "
                                     "silu(a) taken as out / b, is 0 / 0 there)"
                                   : "");
}

TEST(ex08_swiglu, gradients_of_the_gate_pass_gradcheck) {
  COURSE_AFTER_FORWARD("silu_is_x_times_sigmoid_x", "swiglu_forward_matches_torch_float32");
  Generator gen(8);
  expect_gradcheck([](const std::vector<Tensor>& in) { return nn::silu_mul(in[0], in[1]); },
                   {randn({3, 4}, DType::Float64, &gen).requires_grad_(),
                    randn({3, 4}, DType::Float64, &gen).requires_grad_()},
                   "silu_mul");
}

TEST(ex08_swiglu, a_broadcast_operand_gets_its_gradient_summed_back) {  // a (3, 4), b (4)
  COURSE_AFTER_FORWARD("silu_is_x_times_sigmoid_x", "swiglu_forward_matches_torch_float32");
  Generator gen(9);
  expect_gradcheck([](const std::vector<Tensor>& in) { return nn::silu_mul(in[0], in[1]); },
                   {randn({3, 4}, DType::Float64, &gen).requires_grad_(),
                    randn({4}, DType::Float64, &gen).requires_grad_()},
                   "silu_mul with b broadcast");
}

// a broadcast the other way: a (4) against b (3, 4), a's gradient summed over the rows.
TEST(ex08_swiglu, a_broadcast_gate_input_gets_its_gradient_summed_back) {  // a (4), b (3, 4)
  COURSE_AFTER_FORWARD("silu_is_x_times_sigmoid_x", "swiglu_forward_matches_torch_float32");
  COURSE_REQUIRES("gate_gradients_at_five_points");  // the rule's values first: this one is about the sum back
  Generator gen(10);
  expect_gradcheck(
      [](const std::vector<Tensor>& in) { return nn::silu_mul(in[0], in[1]); },
      {randn({4}, DType::Float64, &gen).requires_grad_(), randn({3, 4}, DType::Float64, &gen).requires_grad_()},
      "silu_mul with a broadcast");
}

// Only a or only b requiring a gradient (the other a constant).
TEST(ex08_swiglu, a_or_b_alone_gets_its_gradient) {
  COURSE_AFTER_FORWARD("silu_is_x_times_sigmoid_x", "swiglu_forward_matches_torch_float32");
  Generator gen(11);
  expect_each_input_alone("silu_mul(a, b)", {"a", "b"},
                          [](const std::vector<Tensor>& in) { return nn::silu_mul(in[0], in[1]); },
                          {randn({3, 4}, DType::Float64, &gen), randn({3, 4}, DType::Float64, &gen)});
}

// Large |a|: sigmoid(a) saturates at 0 and 1, so silu(a) -> 0 and -> a, and
// the gradients stay finite (exp of a large argument overflows to inf:
// a form that divides inf by inf gives NaN). float64 overflows past 709,
// float32 past 88.
TEST(ex08_swiglu, large_inputs_saturate_without_nan) {
  for (const DType dt : {DType::Float64, DType::Float32}) {
    const double big = dt == DType::Float64 ? 800 : 100;
    const std::vector<double> as = {-big, -50, 50, big};
    Tensor a = tensor(as, {4}, DType::Float64), b = tensor({1.0, 2, 3, 4}, {4}, DType::Float64);
    a = to(a, dt).requires_grad_();
    b = to(b, dt).requires_grad_();
    const Tensor out = nn::silu_mul(a, b);
    backward(sum(out));
    const std::string name = dt == DType::Float64 ? "float64" : "float32";
    std::vector<double> want;  // silu(a) b, a sigmoid(a) in a form that does not overflow
    for (size_t i = 0; i < as.size(); ++i) want.push_back(as[i] * sigmoid_of(as[i]) * (static_cast<double>(i) + 1));
    expect_values(to(out, DType::Float64), tensor(want, {4}, DType::Float64), {1e-6, 1e-30},
                  fmt::format("silu(a) b at a = {}, -50, 50, {} ({})", -big, big, name));
    for (const auto& [t, n] : {std::pair{a, "a"}, std::pair{b, "b"}}) {
      if (!t.grad().defined() || !all_finite(t.grad()))
        ADD_FAILURE() << "d " << n << " at a = " << -big << ", -50, 50, " << big << " (" << name
                      << "): a gradient is missing or not finite";
    }
  }
}

}  // namespace
}  // namespace ropegrad::course
