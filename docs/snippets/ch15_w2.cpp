// The experiments chapter 15 (W2 attention) shows, lettered as in the chapter.
//   snippet_ch15_w2 temperature   A. the temperature starts at sqrt(head_dim)
//   snippet_ch15_w2 spread        E. within-row spread of the scores at initialisation
//   snippet_ch15_w2 degenerate    B. equal key sigmas: softmax of negative squared mean distances
//   snippet_ch15_w2 backward      C. the kernel's gradients against separate ops, and d tau three ways
//   snippet_ch15_w2 memory        D. bytes kept by the forward and peak over forward + backward
#include <cmath>
#include <cstdint>
#include <limits>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "autograd/ops.h"
#include "nn/attention_scores.h"
#include "nn/w2_attention.h"

using namespace ropegrad;
using namespace ropegrad::nn;

namespace {

constexpr double kEps = 1e-6;
constexpr DType f64 = DType::Float64;

double max_abs_diff(const Tensor& a, const Tensor& b) { return max(abs(a - b)).item(); }

// ||a_m - b_n||^2 for every pair, (..., Nq, d), (..., Nk, d) -> (..., Nq, Nk), as written (a 5-D difference).
Tensor squared_distances(const Tensor& a, const Tensor& b) {
  return sum(pow(unsqueeze(a, -2) - unsqueeze(b, -3), 2), {-1});
}

// The W2 scores with separate ops: -(D_mu^2 + dh (s_q - s_k)^2) / (tau + eps), scalar sigma.
Tensor w2_scores_by_ops(const Tensor& mu_q, const Tensor& mu_k, const Tensor& sigma_q, const Tensor& sigma_k,
                        const Tensor& tau) {
  const double dh = static_cast<double>(mu_q.size(-1));
  const Tensor d_sigma = pow(unsqueeze(sigma_q, -1) - unsqueeze(sigma_k, -2), 2) * dh;
  return -(squared_distances(mu_q, mu_k) + d_sigma) / (view(tau, {tau.size(0), 1, 1}) + kEps);
}

// true above the diagonal: the keys a causal query may not see.
Tensor future(int64_t t) { return gt(triu(ones({t, t}), 1), 0.0); }

Tensor causal_softmax(const Tensor& s) {
  return softmax(masked_fill(s, future(s.size(-1)), -std::numeric_limits<double>::infinity()), -1);
}

Tensor leaf(const Tensor& t) { return t.detach().requires_grad_(); }

std::string numbers(const Tensor& t) {
  std::string out = "[ ";
  for (double v : t.to_vector()) out += fmt::format("{:.10f} ", v);
  return out + "]";
}

void temperature() {
  W2Attention attn(128, 4);
  fmt::print("A. W2Attention(128, 4): head_dim {}, tau = softplus(temperature) = {}, sqrt(32) = {:.4f}\n",
             attn.head_dim, attn.temperatures(), std::sqrt(32.0));
}

// sd along each row (over the keys), root mean square over the rows.
double within_row_sd(const Tensor& s) {
  const Tensor centred = s - mean(s, {-1}, true);
  return std::sqrt(mean(centred * centred).item());
}

void spread() {
  for (int64_t dh : {16, 32, 64, 128}) {
    Generator gen(dh);
    const Tensor q = randn({256, dh}, f64, &gen), k = randn({256, dh}, f64, &gen);
    const double scale = std::sqrt(static_cast<double>(dh));
    const Tensor d2 = squared_distances(q, k);
    const Tensor dot = matmul(q, transpose(k, 0, 1));
    fmt::print("E. dh={:3}: within-row sd of |q-k|^2/sqrt(dh) = {:.3f} (sqrt 6 = {:.3f}); of q.k/sqrt(dh) = {:.3f}\n",
               dh, within_row_sd(d2 / scale), std::sqrt(6.0), within_row_sd(dot / scale));
  }
}

void degenerate() {
  Generator gen(5);
  const Tensor mu_q = randn({1, 2, 5, 4}, f64, &gen) * 0.5, mu_k = randn({1, 2, 5, 4}, f64, &gen) * 0.5;
  const Tensor tau = tensor({2.0, 3.0}, f64);
  const Tensor t = view(tau, {2, 1, 1}) + kEps;
  const Tensor want = softmax(-squared_distances(mu_q, mu_k) / t, -1);

  const Tensor sigma_q = rand({1, 2, 5}, f64, &gen) + 0.1;  // random
  const Tensor sigma_k = full({1, 2, 5}, 0.7, f64);          // the same for every key
  const Tensor p = w2_attention_probs(mu_q, mu_k, sigma_q, sigma_k, tau);
  const Tensor p_equal = w2_attention_probs(mu_q, mu_k, sigma_k, sigma_k, tau);
  const Tensor mu_k_norm = transpose(sum(mu_k * mu_k, {-1}, true), -2, -1);  // (1, 2, 1, 5)
  const Tensor expanded = softmax((2 * matmul(mu_q, transpose(mu_k, -2, -1)) - mu_k_norm) / t, -1);
  fmt::print("B. sigma_k constant, sigma_q random: max |P - softmax(-|mu_q-mu_k|^2/(tau+eps))| = {:.2e}\n",
             max_abs_diff(p, want));
  fmt::print("   sigma_q = sigma_k = 0.7:           max |P - softmax(-|mu_q-mu_k|^2/(tau+eps))| = {:.2e}\n",
             max_abs_diff(p_equal, want));
  fmt::print("   softmax((2 mu_q.mu_k - |mu_k|^2)/(tau+eps)) vs the same:         max diff = {:.2e}\n",
             max_abs_diff(expanded, want));
  fmt::print("   P[0, 0] =\n{}\n", select(select(p, 0, 0), 0, 0));
}

void backward_check() {
  const int64_t b = 2, h = 3, t = 6, dh = 4;
  Generator gen(3);
  const Tensor mu_q0 = randn({b, h, t, dh}, f64, &gen), mu_k0 = randn({b, h, t, dh}, f64, &gen);
  const Tensor sigma_q0 = rand({b, h, t}, f64, &gen) + 0.2, sigma_k0 = rand({b, h, t}, f64, &gen) + 0.2;
  const Tensor tau0 = tensor({1.5, 2.0, 2.5}, f64);
  const Tensor grad_p = randn({b, h, t, t}, f64, &gen);  // dP, the incoming gradient

  // The fused kernel.
  Tensor mu_q = leaf(mu_q0), mu_k = leaf(mu_k0), sigma_q = leaf(sigma_q0), sigma_k = leaf(sigma_k0), tau = leaf(tau0);
  const Tensor p = w2_attention_probs(mu_q, mu_k, sigma_q, sigma_k, tau, ScoreMask{Tensor(), true, 0});
  backward(p, grad_p);
  // The same scores by separate ops.
  Tensor mu_q2 = leaf(mu_q0), mu_k2 = leaf(mu_k0), sigma_q2 = leaf(sigma_q0), sigma_k2 = leaf(sigma_k0),
         tau2 = leaf(tau0);
  const Tensor s_ops = w2_scores_by_ops(mu_q2, mu_k2, sigma_q2, sigma_k2, tau2);
  const Tensor p_ops = causal_softmax(s_ops);
  backward(p_ops, grad_p);

  fmt::print("C. max |P_kernel - P_ops| = {:.2e}, max |grad mu_q| diff = {:.2e}, grad tau kernel {}\n",
             max_abs_diff(p, p_ops), max_abs_diff(mu_q.grad(), mu_q2.grad()), tau.grad());
  fmt::print("   grad tau by separate ops {}\n", tau2.grad());

  // d tau = -1/(tau + eps) sum dS * S, with dS = P (dP - rowsum(dP P)); a masked entry has dS = 0.
  const Tensor pd = p.detach(), s = s_ops.detach();
  const Tensor ds = pd * (grad_p - sum(grad_p * pd, {-1}, true));
  const Tensor denom = -1 / (tau0 + kEps);
  const Tensor by_s = denom * sum(ds * s, {0, 2, 3});
  const Tensor by_log_p = denom * sum(masked_fill(ds * log(pd), future(t), 0.0), {0, 2, 3});
  fmt::print("   -1/(tau+eps) sum dS*S      = {}\n", numbers(by_s));
  fmt::print("   -1/(tau+eps) sum dS*log P  = {}\n", numbers(by_log_p));
  fmt::print("   kernel                     = {}\n", numbers(tau.grad()));
  fmt::print("   max over rows |sum_n dS_mn| = {:.2e}\n", max(abs(sum(ds, {-1}))).item());
}

// Bytes held beyond the inputs: after the forward (what the node keeps), and at the peak of forward + backward.
// The inputs (fresh leaves) and the incoming gradient exist before the count starts.
template <typename Forward>
void measure(const std::string& name, const std::vector<Tensor>& values, const Tensor& grad_p, Forward forward) {
  double kept = 0, peak = 0;
  {
    std::vector<Tensor> inputs;
    for (const Tensor& x : values) inputs.push_back(leaf(x));
    reset_peak_memory();
    const int64_t base = memory_stats().current_bytes;
    Tensor p = forward(inputs);
    kept = static_cast<double>(memory_stats().current_bytes - base);
    backward(p, grad_p);
    peak = static_cast<double>(memory_stats().peak_bytes - base);
  }
  fmt::print("   {:<40}{:>9.2f}{:>19.2f}\n", name, kept / 1e6, peak / 1e6);
}

void memory() {
  const int64_t b = 2, h = 4, t = 256, dh = 32, f = 4;
  const double mb = 1e6;
  fmt::print("D. memory, float32, B={} H={} T={} dh={}: one (B,H,T,T) tensor = {:.2f} MB, one (B,H,T,dh) = {:.2f} MB, "
             "one (B,H,T,T,dh) = {:.2f} MB\n",
             b, h, t, dh, b * h * t * t * f / mb, b * h * t * dh * f / mb, b * h * t * t * dh * f / mb);
  fmt::print("   {:<40}{:>9}{:>19}\n", "kernel", "kept (MB)", "peak fwd+bwd (MB)");
  Generator gen(4);
  const auto r = [&](const Shape& shape) { return randn(shape, DType::Float32, &gen); };
  const auto positive = [&](const Shape& shape) { return rand(shape, DType::Float32, &gen) + 0.5; };
  const Tensor q = r({b, h, t, dh}), k = r({b, h, t, dh}), ref = r({b, h, t, dh});
  const Tensor sq = positive({b, h, t}), sk = positive({b, h, t});
  const Tensor vq = positive({b, h, t, dh}), vk = positive({b, h, t, dh});
  const Tensor tau = full({h}, std::sqrt(static_cast<double>(dh)), DType::Float32);
  const Tensor grad_p = randn({b, h, t, t}, DType::Float32, &gen);
  const ScoreMask causal{Tensor(), true, 0};
  const double dh_d = static_cast<double>(dh);

  measure("dot_attention_probs", {q, k}, grad_p,
          [&](const auto& in) { return dot_attention_probs(in[0], in[1], 1 / std::sqrt(dh_d), causal); });
  measure("w2_attention_probs, scalar sigma", {q, k, sq, sk, tau}, grad_p,
          [&](const auto& in) { return w2_attention_probs(in[0], in[1], in[2], in[3], in[4], causal); });
  measure("w2_attention_probs, vector sigma", {q, k, vq, vk, tau}, grad_p,
          [&](const auto& in) { return w2_attention_probs(in[0], in[1], in[2], in[3], in[4], causal); });
  measure("triple_attention_probs", {q, k, ref}, grad_p,
          [&](const auto& in) { return triple_attention_probs(in[0], in[1], in[2], std::pow(dh_d, -1.5), causal); });
  measure("W2 by separate ops (scalar sigma)", {q, k, sq, sk, tau}, grad_p,
          [&](const auto& in) { return causal_softmax(w2_scores_by_ops(in[0], in[1], in[2], in[3], in[4])); });
}

}  // namespace

int main(int argc, char** argv) {
  const std::string what = argc > 1 ? argv[1] : "";
  if (what == "temperature") {
    temperature();
  } else if (what == "spread") {
    spread();
  } else if (what == "degenerate") {
    degenerate();
  } else if (what == "backward") {
    backward_check();
  } else if (what == "memory") {
    memory();
  } else {
    fmt::print(stderr, "usage: snippet_ch15_w2 temperature | spread | degenerate | backward | memory\n");
    return 2;
  }
  return 0;
}
