// The experiments chapter 16 (triple-product attention) shows, lettered as in the chapter.
//   snippet_ch16_triple gram        G. det G = |k_perp|^2 (qq rr - rq^2) on random triples
//   snippet_ch16_triple scale       D. size of det G and of the scaled scores for random vectors
//   snippet_ch16_triple saturation  E. within-row spread and how one-hot the weights are at initialisation
//   snippet_ch16_triple layer       F. TripleAttention's weights at initialisation
//   snippet_ch16_triple backward    C. the kernel against separate ops (float64, causal)
//   snippet_ch16_triple resilience  the notebook's resilience table, with nn::gram_score
//   snippet_ch16_triple leak        G. a loud key whose leak along q grows with it
//   snippet_ch16_triple rope        B. shifting every position: r rotated at the query's position, or not
// (The memory row comes from snippet_ch15_w2 memory.)
#include <cmath>
#include <cstdint>
#include <limits>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "autograd/ops.h"
#include "nn/rope.h"
#include "nn/triple_attention.h"

using namespace ropegrad;
using namespace ropegrad::nn;

namespace {

constexpr DType f64 = DType::Float64;

double max_abs_diff(const Tensor& a, const Tensor& b) { return max(abs(a - b)).item(); }
Tensor leaf(const Tensor& t) { return t.detach().requires_grad_(); }
Tensor row_dots(const Tensor& a, const Tensor& b) { return sum(a * b, {-1}, true); }  // (..., N, 1)

// det G(q_i, k_j, r_i) for every pair with separate ops: (..., Nq, d), (..., Nk, d), (..., Nq, d) -> (..., Nq, Nk).
Tensor gram_dets(const Tensor& q, const Tensor& k, const Tensor& r) {
  const Tensor qk = matmul(q, transpose(k, -2, -1)), kr = matmul(r, transpose(k, -2, -1));
  const Tensor qq = row_dots(q, q), rr = row_dots(r, r), rq = row_dots(r, q);
  const Tensor kk = transpose(row_dots(k, k), -2, -1);
  return qq * kk * rr + 2 * qk * kr * rq - qq * kr * kr - kk * rq * rq - rr * qk * qk;
}

Tensor causal_softmax(const Tensor& s) {
  const int64_t t = s.size(-1);
  return softmax(masked_fill(s, gt(triu(ones({t, t}), 1), 0.0), -std::numeric_limits<double>::infinity()), -1);
}

double dot(const std::vector<double>& a, const std::vector<double>& b) {
  double s = 0;
  for (size_t i = 0; i < a.size(); ++i) s += a[i] * b[i];
  return s;
}

std::vector<double> axpy(double a, const std::vector<double>& x, const std::vector<double>& y) {  // a x + y
  std::vector<double> out(y);
  for (size_t i = 0; i < y.size(); ++i) out[i] += a * x[i];
  return out;
}

void gram() {
  Generator gen(8);
  const auto random_vector = [&] {
    std::vector<double> v(8);
    for (double& x : v) x = gen.normal();
    return v;
  };
  double worst = 0;
  for (int n = 0; n < 1000; ++n) {
    const auto q = random_vector(), k = random_vector(), r = random_vector();
    const double det = -gram_score(q, k, r);
    // k_perp: k minus its projection on span(q, r), through an orthonormal basis e1, e2 of the plane.
    const double qn = std::sqrt(dot(q, q));
    const auto e1 = axpy(1 / qn - 1, q, q);
    auto e2 = axpy(-dot(r, e1), e1, r);
    const double e2n = std::sqrt(dot(e2, e2));
    for (double& x : e2) x /= e2n;
    const auto k_perp = axpy(-dot(k, e2), e2, axpy(-dot(k, e1), e1, k));
    const double by_volume = dot(k_perp, k_perp) * (dot(q, q) * dot(r, r) - dot(r, q) * dot(r, q));
    worst = std::max(worst, std::abs(det - by_volume) / det);
  }
  fmt::print("G. det G vs |k_perp|^2 (qq rr - rq^2), 1000 random triples in R^8: max relative difference {:.2e}\n",
             worst);
}

double sd(const Tensor& x) {
  const Tensor c = x - mean(x);
  return std::sqrt(mean(c * c).item());
}

// sd along each row (over the keys), root mean square over the rows.
double within_row_sd(const Tensor& s) {
  const Tensor c = s - mean(s, {-1}, true);
  return std::sqrt(mean(c * c).item());
}

void scale() {
  for (int64_t dh : {16, 32, 64, 128}) {
    Generator gen(dh);
    const Tensor q = randn({256, dh}, f64, &gen), k = randn({256, dh}, f64, &gen), r = randn({256, dh}, f64, &gen);
    const Tensor det = gram_dets(q, k, r);
    const double s = std::pow(static_cast<double>(dh), -1.5);
    fmt::print("D. dh={:3}: det G mean {:.4g} (dh^3 = {}), sd {:.4g}; scaled by dh^-1.5: mean {:.3f} sd {:.3f}; "
               "q.k/sqrt(dh) sd {:.3f}\n",
               dh, mean(det).item(), dh * dh * dh, sd(det), mean(det).item() * s, sd(det) * s,
               sd(matmul(q, transpose(k, 0, 1)) / std::sqrt(static_cast<double>(dh))));
  }
}

double mean_row_max(const Tensor& p) { return mean(amax(p, {-1})).item(); }

void saturation() {
  const int64_t t = 256;
  for (int64_t dh : {16, 32, 64}) {
    Generator gen(dh);
    const Tensor q = randn({1, 1, t, dh}, f64, &gen), k = randn({1, 1, t, dh}, f64, &gen),
                 r = randn({1, 1, t, dh}, f64, &gen);
    const double s = std::pow(static_cast<double>(dh), -1.5);
    const Tensor p = triple_attention_probs(q, k, r, s);
    const Tensor p_dot = dot_attention_probs(q, k, 1 / std::sqrt(static_cast<double>(dh)));
    // The key with the smallest norm, and how many rows put their largest weight on it.
    const int64_t smallest = argmin(sum(k * k, {-1}), -1).to_vector<int64_t>()[0];
    int64_t on_smallest = 0;
    for (int64_t top : argmax(p, -1).to_vector<int64_t>()) on_smallest += top == smallest;
    fmt::print("E. dh={}, T={}: within-row sd of -det G * dh^-1.5 = {:.1f}; mean row max of P: triple {:.3f}, "
               "dot {:.3f}; rows whose top key is the smallest-norm key: {}/{}\n",
               dh, t, within_row_sd(-gram_dets(q, k, r) * s), mean_row_max(p), mean_row_max(p_dot), on_smallest, t);
  }
}

void layer() {
  Generator gen(0);
  TripleAttention attn(128, 4, nullptr, &gen);
  const Tensor x = randn({1, 128, 128}, kDefaultFloat, &gen);
  Tensor weights;
  AttentionCall call = AttentionCall::bidirectional();  // every key: the weights at init, not a mask's shape
  call.weights = &weights;
  attn.forward(x, call);
  fmt::print("F. TripleAttention(128, 4) at init, x ~ N(0,1) (1, 128, 128): mean row max of the weights {:.3f} "
             "(uniform would be {:.4f})\n",
             mean_row_max(weights), 1.0 / 128);
}

void backward_check() {
  const int64_t b = 2, h = 2, t = 5, dh = 6;
  Generator gen(6);
  const Tensor q0 = randn({b, h, t, dh}, f64, &gen), k0 = randn({b, h, t, dh}, f64, &gen),
               r0 = randn({b, h, t, dh}, f64, &gen);
  const Tensor grad_p = randn({b, h, t, t}, f64, &gen);
  const double s = std::pow(static_cast<double>(dh), -1.5);
  Tensor q = leaf(q0), k = leaf(k0), r = leaf(r0);
  const Tensor p = triple_attention_probs(q, k, r, s, ScoreMask{Tensor(), true, 0});
  backward(p, grad_p);
  Tensor q2 = leaf(q0), k2 = leaf(k0), r2 = leaf(r0);
  const Tensor p_ops = causal_softmax(-gram_dets(q2, k2, r2) * s);
  backward(p_ops, grad_p);
  fmt::print("C. kernel vs separate ops (float64, causal): P {:.2e}, dq {:.2e}, dk {:.2e}, dr {:.2e}\n",
             max_abs_diff(p, p_ops), max_abs_diff(q.grad(), q2.grad()), max_abs_diff(k.grad(), k2.grad()),
             max_abs_diff(r.grad(), r2.grad()));
}

const std::vector<double> kQ{1, 0, 0}, kR{0, 1, 0};  // q = e1, r = e2: unit, orthogonal, area 1

void resilience() {
  const std::string rule(60, '-');
  fmt::print("{:<10} | {:<12} | {:<15} | Result\n{}\n", "Mag(K)", "Dot(Q,K)", "Gram(Q,K,R)", rule);
  const std::vector<double> match{1 / std::sqrt(2.0), 1 / std::sqrt(2.0), 0};  // (q + r) / sqrt 2
  fmt::print("{:<10} | {:<12.4f} | {:<15.4f} | True Match\n{}\n", "1.0 (Ref)", dot(kQ, match),
             gram_score(kQ, match, kR), rule);
  for (double mag : {1.0, 5.0, 10.0, 50.0, 100.0}) {
    const std::vector<double> loud{0.1, 0, mag};  // mag e3 + 0.1 q
    fmt::print("{:<10.1f} | {:<12.4f} | {:<15.4f} | Loud Mismatch\n", mag, dot(kQ, loud), gram_score(kQ, loud, kR));
  }
}

void leak() {
  fmt::print("G. k = mag (e3 + 0.1 q): ");
  for (double mag : {1.0, 5.0, 10.0, 50.0, 100.0}) {
    const std::vector<double> k{0.1 * mag, 0, mag};  // mag (e3 + 0.1 q)
    fmt::print(" mag {:g}: dot {:g}, gram {:g};{}", mag, dot(kQ, k), gram_score(kQ, k, kR), mag < 100 ? " " : "\n");
  }
}

void rope() {
  const int64_t t = 6, dh = 8;
  RopeConfig config;
  config.head_dim = dh;
  RotaryEmbedding rope(config, f64);
  Generator gen(100);
  const Tensor q = randn({1, 1, t, dh}, f64, &gen), k = randn({1, 1, t, dh}, f64, &gen),
               r = randn({1, 1, t, dh}, f64, &gen);
  const double s = std::pow(static_cast<double>(dh), -1.5);
  const ScoreMask causal{Tensor(), true, 0};
  const auto weights = [&](int64_t first, bool rotate_r) {
    const Tensor pos = arange(first, first + t);
    return triple_attention_probs(rope.forward(q, pos, false), rope.forward(k, pos, true),
                                  rotate_r ? rope.forward(r, pos, false) : r, s, causal);
  };
  fmt::print("B. positions shifted by 100: r rotated at the query position: max |dP| = {:.2e}; "
             "r not rotated: max |dP| = {:.2e}\n",
             max_abs_diff(weights(0, true), weights(100, true)), max_abs_diff(weights(0, false), weights(100, false)));
}

}  // namespace

int main(int argc, char** argv) {
  const std::string what = argc > 1 ? argv[1] : "";
  if (what == "gram") {
    gram();
  } else if (what == "scale") {
    scale();
  } else if (what == "saturation") {
    saturation();
  } else if (what == "layer") {
    layer();
  } else if (what == "backward") {
    backward_check();
  } else if (what == "resilience") {
    resilience();
  } else if (what == "leak") {
    leak();
  } else if (what == "rope") {
    rope();
  } else {
    fmt::print(stderr, "usage: snippet_ch16_triple gram | scale | saturation | layer | backward | resilience | leak | rope\n");
    return 2;
  }
  return 0;
}
