// The data of the book's explanatory figures, printed by the library itself;
// docs/figures/draw_figures.py turns each mode's lines into an SVG, and the docs
// test (docs/tests/check_docs.py, `<!-- figure: ... -->`) redraws every figure
// and compares it with the file byte for byte. One mode per figure:
//
//   snippet_figure_data views             chapter 1: four views of one storage (shape, strides, offset,
//                                         the storage index each element reads)
//   snippet_figure_data broadcast-matmul  chapter 3: a right operand broadcast over a batch (stride 0)
//                                         and its gradient, each batch's part summed back by sum_to
//   snippet_figure_data rope              chapter 9: the pairs of a real vector rotated at positions 0..5
//   snippet_figure_data masks             chapter 12: the attention weights under a causal mask, a
//                                         padding mask, both, and a causal offset
//   snippet_figure_data tiles             chapter 12: the tile products causal tiled attention hands to
//                                         BLAS, read from a GemmTrace
//   snippet_figure_data gram              chapter 16: q, r and three keys in R^3, the Gram determinant of
//                                         each, and the key's height above the (q, r) plane
//   snippet_figure_data bpe               chapter 19: a real BPE run: each merge and how the words are
//                                         split after it
//   snippet_figure_data fd-error          chapter 4: the central difference's error against eps, exp at 1,
//                                         float64 and float32
//   snippet_figure_data init              chapter 5: histograms of a Linear's and an Embedding's weights
//   snippet_figure_data embedding         chapter 6: an embedding's forward (rows gathered) and its
//                                         backward (gradient rows added into the table)
//   snippet_figure_data rmsnorm           chapter 7: 2-D rows before and after rms_norm, with and
//                                         without a gain
//   snippet_figure_data silu              chapter 8: SiLU, ReLU, sigmoid and their derivatives by backward
//   snippet_figure_data rope-scores       chapter 10: the score of q at m and k at n for every (m, n),
//                                         RoPE's and the conjugate-phase recipe's
//   snippet_figure_data schedule          chapter 13: cosine_lr with warmup
//   snippet_figure_data optimizers        chapter 13: SGD, SGD with momentum and AdamW on a 2-D quadratic
//   snippet_figure_data checkpoint DIR    chapter 14: a training checkpoint written into DIR, its header
//                                         and its data section
//   snippet_figure_data w2                chapter 15: one query Gaussian, four key Gaussians, the W2
//                                         terms and w2_attention_probs' weights
//   snippet_figure_data flop-shares       chapter 17: the forward FLOPs by part against the context,
//                                         GPT-2 small and XL
//   snippet_figure_data kv-cache          chapter 17: attention weights of a sequence fed in chunks
//                                         through a KV cache
//   snippet_figure_data ring              chapter 21: a ring all-reduce of 3 ranks, round by round
//   snippet_figure_data buckets DIR       chapter 21: the all-reduce of each gradient bucket against the
//                                         backward, for the measured profile in DIR and GPT-2 small
//   snippet_figure_data zero              chapter 21: ZeroAdamW's element ranges on 3 ranks, and the
//                                         bytes each rank holds
//
// Every line is "KEY value value ...", numbers in fixed formats, so the output
// (and the figure) is the same on every machine.
#include <algorithm>
#include <cmath>
#include <filesystem>
#include <functional>
#include <fstream>
#include <iostream>
#include <iterator>
#include <memory>
#include <numbers>
#include <string>
#include <utility>
#include <vector>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "autograd/ops.h"
#include "nn/accounting.h"
#include "nn/attention.h"
#include "nn/attention_scores.h"
#include "io/checkpoint.h"
#include "nn/fast/attention_tiled.h"
#include "nn/functional.h"
#include "nn/layers.h"
#include "optim/optim.h"
#include "nn/rope.h"
#include "optim/schedule.h"
#include "nn/transformer.h"
#include "train/dp_settings.h"
#include "train/dp_simulate.h"
#include "dist/zero_adamw.h"
#include "tensor/kernels.h"
#include "tensor/parallel.h"
#include "tokenizer/bpe_train.h"

using namespace ropegrad;

namespace {

std::string join(const Shape& s) {
  std::string out;
  for (size_t i = 0; i < s.size(); ++i) {
    if (i) out += ' ';
    out += std::to_string(s[i]);
  }
  return out;
}

std::string numbers(const Tensor& t, const char* format = "{:g}") {
  std::string out;
  const std::vector<double> v = contiguous(to(t, DType::Float64)).to_vector<double>();
  for (size_t i = 0; i < v.size(); ++i) {
    if (i) out += ' ';
    out += fmt::format(fmt::runtime(format), v[i]);
  }
  return out;
}

double dot(const Tensor& a, const Tensor& b) { return sum(a * b).item(); }

void print_view(const std::string& name, const Tensor& t) {
  // the storage index of each element, walked in row-major order of the view
  std::string reads;
  const Shape& shape = t.shape();
  int64_t n = 1;
  for (int64_t s : shape) n *= s;
  for (int64_t flat = 0; flat < n; ++flat) {
    int64_t rest = flat, index = t.offset();
    for (int64_t d = static_cast<int64_t>(shape.size()) - 1; d >= 0; --d) {
      index += (rest % shape[d]) * t.strides()[d];
      rest /= shape[d];
    }
    if (flat) reads += ' ';
    reads += std::to_string(index);
  }
  fmt::print("view {}\nshape {}\nstrides {}\noffset {}\nreads {}\nvalues {}\n", name, join(shape),
             join(t.strides()), t.offset(), reads, numbers(t));
}


// ---- chapter 4: the error of a central difference against eps ----------------------------------------------

// |(exp(1 + eps) - exp(1 - eps)) / (2 eps) - e| computed with the library's ops in `dtype`.
double exp_slope_error(double eps, DType dtype) {
  const Tensor x = tensor({1.0}, dtype);
  const Tensor slope = (exp(x + eps) - exp(x - eps)) / (2 * eps);
  return std::abs(slope.item<double>() - std::numbers::e);
}

void fd_error() {
  // eps = 10^(-k/8), k = 0 .. 104: 1 down to 1e-13
  fmt::print("f 1 exp e\n");
  fmt::print("u float64 {:.6e}\nu float32 {:.6e}\n", std::ldexp(1.0, -53), std::ldexp(1.0, -24));
  for (int k = 0; k <= 104; ++k) {
    const double eps = std::pow(10.0, -k / 8.0);
    fmt::print("eps {:.6e} {:.6e} {:.6e}\n", eps, exp_slope_error(eps, DType::Float64),
               exp_slope_error(eps, DType::Float32));
  }
}

// ---- chapter 5: the initial weights --------------------------------------------------------------------------

// Counts of w / sigma in bins of 0.1 from -4 to 4 (80 bins).
void histogram(const std::string& name, const Tensor& w, double sigma) {
  const std::vector<double> v = to(w.detach(), DType::Float64).to_vector<double>();
  std::vector<int64_t> counts(80, 0);
  double lo = 0, hi = 0;
  for (double x : v) {
    const double z = x / sigma;
    lo = std::min(lo, z);
    hi = std::max(hi, z);
    const int bin = static_cast<int>(std::floor((z + 4.0) * 10.0));
    if (bin >= 0 && bin < 80) ++counts[bin];
  }
  const double rms = std::sqrt(mean(to(w.detach(), DType::Float64) * to(w.detach(), DType::Float64)).item());
  fmt::print("weight {}\nnumel {}\nsigma {:.9g}\nstd {:.9g}\nrange {:.4f} {:.4f}\ncounts", name, v.size(), sigma, rms,
             lo, hi);
  for (int64_t c : counts) fmt::print(" {}", c);
  fmt::print("\n");
}

void init() {
  Generator gen(42);
  nn::Linear linear(1024, 4096, &gen, DType::Float64);  // (d_out, d_in) = (4096, 1024)
  histogram("Linear(1024, 4096).weight", linear.weight, std::sqrt(2.0 / (1024 + 4096)));
  nn::Embedding embedding(50000, 64, &gen, DType::Float64);
  histogram("Embedding(50000, 64).weight", embedding.weight, 1.0);
}

// ---- chapter 6: an embedding's forward and backward -------------------------------------------------------------

void embedding_figure() {
  // E (5, 3): row v holds 10 v + 0, 1, 2; ids [[1, 3], [1, 1]], flattened positions 0..3
  std::vector<double> e;
  for (int v = 0; v < 5; ++v)
    for (int j = 0; j < 3; ++j) e.push_back(10.0 * v + j);
  Tensor weight = tensor(e, {5, 3}, DType::Float64).requires_grad_();
  const Tensor ids = tensor_i64({1, 3, 1, 1}, {2, 2});
  const Tensor out = embedding(ids, weight);  // (2, 2, 3)
  // L = sum(out * c): the gradient reaching position n is n + 1 in every column
  const Tensor c = view(expand(view(arange(1.0, 5.0, 1.0, DType::Float64), {4, 1}), {4, 3}), {2, 2, 3});
  backward(sum(out * c));
  fmt::print("table {}\nids {}\nout {}\ngrad_out {}\ngrad_table {}\n", numbers(weight.detach()), numbers(ids),
             numbers(out.detach()), numbers(c), numbers(weight.grad()));
}

// ---- chapter 7: RMSNorm in two dimensions ------------------------------------------------------------------------

void rmsnorm_figure() {
  // eight rows of D = 2 at different angles and lengths, and one tiny row (ms << eps)
  std::vector<double> x;
  const double lengths[] = {0.5, 2.4, 1.1, 3.0, 0.8, 1.8, 2.7, 1.4};
  for (int i = 0; i < 8; ++i) {
    const double angle = (i * 45.0 + 20.0) * std::numbers::pi / 180.0;
    x.push_back(lengths[i] * std::cos(angle));
    x.push_back(lengths[i] * std::sin(angle));
  }
  x.push_back(0.002);
  x.push_back(0.001);
  const Tensor rows = tensor(x, {9, 2}, DType::Float64);
  const Tensor gain = tensor({1.6, 0.5}, DType::Float64);
  fmt::print("D 2\neps 1e-05\ngain {}\nx {}\n", numbers(gain), numbers(rows, "{:.6f}"));
  fmt::print("y {}\n", numbers(nn::rms_norm(rows, ones({2}, DType::Float64)), "{:.6f}"));
  fmt::print("y_gain {}\n", numbers(nn::rms_norm(rows, gain), "{:.6f}"));
}

// ---- chapter 8: SiLU and its derivative -------------------------------------------------------------------------

void silu_figure() {
  // z = -6 .. 6 in steps of 0.05; each activation and its derivative from backward
  const Tensor z = arange(-6.0, 6.0 + 1e-9, 0.05, DType::Float64);
  fmt::print("z {}\n", numbers(z, "{:.2f}"));
  const std::vector<std::pair<std::string, Tensor (*)(const Tensor&)>> fs = {
      {"silu", [](const Tensor& t) { return silu(t); }},
      {"relu", [](const Tensor& t) { return relu(t); }},
      {"sigmoid", [](const Tensor& t) { return sigmoid(t); }}};
  for (const auto& [name, f] : fs) {
    Tensor x = clone(z);
    x.requires_grad_();
    const Tensor y = f(x);
    backward(sum(y));
    fmt::print("{} {}\nd{} {}\n", name, numbers(y.detach(), "{:.6f}"), name, numbers(x.grad(), "{:.6f}"));
  }
}

// ---- chapter 10: scores against both positions -------------------------------------------------------------------

void rope_scores() {
  // a random q and k (dh = 64, as the chapter's conjugate-phase example), the query at m and the key at n,
  // m, n = 0 .. 47: RoPE rotates both by e^{i p w}; the recipe rotates the key by e^{-i n w}
  const int64_t n = 48, dh = 64;
  nn::RopeConfig config;
  config.head_dim = dh;
  nn::RotaryEmbedding rope(config, DType::Float64);
  Generator gen(0);
  const Tensor q = randn({1, dh}, DType::Float64, &gen), k = randn({1, dh}, DType::Float64, &gen);
  const Tensor flip = tensor({1.0, -1.0}, DType::Float64);  // (re, im) -> (re, -im)
  const auto conj = [&](const Tensor& x) { return nn::view_as_real(nn::view_as_complex(x) * flip); };
  const Tensor positions = arange(int64_t{0}, n);
  const Tensor rq = rope.forward_complex(contiguous(expand(q, {n, dh})), positions);      // row m: q e^{i m w}
  const Tensor rk = rope.forward_complex(contiguous(expand(k, {n, dh})), positions);      // row n: k e^{i n w}
  const Tensor ck = conj(rope.forward_complex(conj(contiguous(expand(k, {n, dh}))), positions));  // k e^{-i n w}
  fmt::print("positions {}\n", n);
  fmt::print("rope {}\n", numbers(matmul(rq, transpose(rk, 0, 1)), "{:.4f}"));
  fmt::print("conjugate {}\n", numbers(matmul(rq, transpose(ck, 0, 1)), "{:.4f}"));
}

// ---- chapter 13: the schedule and the optimizers ------------------------------------------------------------------

void schedule() {
  // the values of the chapter's example, every step, and a longer run's shape
  fmt::print("run 1 0.1 7 21 25\n");
  for (int64_t t = 0; t <= 25; ++t) fmt::print("lr {} {:.6f}\n", t, nn::cosine_lr(t, 1.0, 0.1, 7, 21));
}

void optimizers() {
  // f(x, y) = (x^2 + 20 y^2) / 2 from (-4.5, 1.2), 40 steps of each optimizer on the real loss
  const double a = 1.0, b = 20.0;
  fmt::print("quadratic {:g} {:g}\nstart -4.5 1.2\n", a, b);
  const Tensor coeff = tensor({a / 2, b / 2}, DType::Float64);
  struct Run {
    std::string name;
    std::function<std::unique_ptr<nn::Optimizer>(const std::vector<Tensor>&)> make;
  };
  const std::vector<Run> runs = {
      {"SGD lr=0.09", [](const std::vector<Tensor>& p) { return std::make_unique<nn::SGD>(p, nn::SGDOptions{.lr = 0.09}); }},
      {"SGD lr=0.05 momentum=0.5",
       [](const std::vector<Tensor>& p) {
         return std::make_unique<nn::SGD>(p, nn::SGDOptions{.lr = 0.05, .momentum = 0.5});
       }},
      {"AdamW lr=0.15 weight_decay=0",
       [](const std::vector<Tensor>& p) {
         return std::make_unique<nn::AdamW>(p, nn::AdamWOptions{.lr = 0.15, .weight_decay = 0.0});
       }}};
  for (const Run& run : runs) {
    Tensor p = tensor({-4.5, 1.2}, DType::Float64).requires_grad_();
    const std::unique_ptr<nn::Optimizer> opt = run.make({p});
    fmt::print("optimizer {}\n", run.name);
    for (int step = 0; step <= 40; ++step) {
      const Tensor loss = sum(coeff * p * p);
      const std::vector<double> v = p.detach().to_vector<double>();
      fmt::print("step {} {:.6f} {:.6f} {:.6e}\n", step, v[0], v[1], loss.item());
      if (step == 40) break;
      opt->zero_grad();
      backward(loss);
      opt->step();
    }
  }
}


// ---- chapter 14: a checkpoint's bytes ----------------------------------------------------------------------

void checkpoint_figure(const std::string& dir) {
  // the chapter's checkpoint: a Linear(3, 2) after one AdamW step on sum(model(x))
  std::filesystem::create_directories(dir);
  const std::string path = dir + "/ckpt.safetensors";
  Generator gen(0);
  nn::Linear model(3, 2, &gen);
  nn::AdamW opt(model.parameters(), {.lr = 1e-3});
  const Tensor x = randn({4, 3}, kDefaultFloat, &gen);
  backward(sum(model.forward(x)));
  opt.step();
  nn::save_checkpoint(path, model, opt.state_dict(), opt.step_count());
  std::ifstream in(path, std::ios::binary);
  const std::string bytes{std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
  uint64_t n = 0;
  for (int i = 7; i >= 0; --i) n = n << 8 | static_cast<unsigned char>(bytes[i]);
  fmt::print("file {}\nheader_length {}\nheader {}\ndata", bytes.size(), n, bytes.substr(8, n));
  for (size_t i = 8 + n; i < bytes.size(); ++i) fmt::print(" {:02x}", static_cast<unsigned char>(bytes[i]));
  fmt::print("\n");
}

// ---- chapter 15: Gaussians and their W2 distance -------------------------------------------------------------

void w2_figure() {
  // d_h = 1, scalar sigma, tau = 1 (sqrt(d_h), the initial temperature): one query, four keys
  const std::vector<std::pair<std::string, std::pair<double, double>>> keys = {
      {"near, as sure", {0.4, 0.5}}, {"same place, unsure", {0.0, 1.4}},
      {"far, as sure", {1.6, 0.5}}, {"far, unsure", {1.4, 1.3}}};
  const double mu_q = 0.0, sigma_q = 0.5;
  std::vector<double> mk, sk;
  for (const auto& k : keys) {
    mk.push_back(k.second.first);
    sk.push_back(k.second.second);
  }
  const Tensor mu_k = tensor(mk, {1, 1, 4, 1}, DType::Float64), sig_k = tensor(sk, {1, 1, 4}, DType::Float64);
  const Tensor mu_qt = tensor({mu_q}, {1, 1, 1, 1}, DType::Float64), sig_qt = tensor({sigma_q}, {1, 1, 1}, DType::Float64);
  const Tensor tau = tensor({1.0}, DType::Float64);
  const Tensor p = nn::w2_attention_probs(mu_qt, mu_k, sig_qt, sig_k, tau);  // (1, 1, 1, 4)
  // the two terms, and the scores the probabilities imply: tau log(P_n / P_0) = S_n - S_0
  const Tensor location = sum((mu_qt - mu_k) * (mu_qt - mu_k), {-1});              // (1, 1, 4)
  const Tensor shape = (unsqueeze(sig_qt, -1) - sig_k) * (unsqueeze(sig_qt, -1) - sig_k);  // (1, 1, 4) (d_h = 1)
  fmt::print("tau 1\nquery {:.2f} {:.2f}\n", mu_q, sigma_q);
  const std::vector<double> pv = p.to_vector<double>(), lv = location.to_vector<double>(),
                            sv = shape.to_vector<double>();
  for (size_t i = 0; i < keys.size(); ++i)
    fmt::print("key {:.2f} {:.2f} {:.6f} {:.6f} {:.6f} {}\n", mk[i], sk[i], lv[i], sv[i], pv[i], keys[i].first);
}

// ---- chapter 17: FLOP shares against the context, and the KV cache --------------------------------------------

void flop_shares() {
  const std::vector<std::string> groups = {"attention projections", "attention scores", "attention values",
                                           "feed-forward", "lm_head"};
  fmt::print("groups {}\n", fmt::join(groups, ","));
  for (const std::string size : {"small", "xl"}) {
    for (int64_t t = 128; t <= 131072; t *= 2) {
      nn::TransformerConfig config = nn::gpt2_config(size);
      config.context_length = std::max(config.context_length, t);
      const nn::Accounting a = nn::account(config, 1, t);
      fmt::print("{} {} {:.6e}", size, t, a.forward_flops());
      for (const std::string& g : groups) fmt::print(" {:.6f}", a.group_forward_flops(g) / a.forward_flops());
      fmt::print("\n");
    }
  }
}

void kv_cache() {
  // one attention layer (D = 32, H = 4, RoPE), a sequence of 10 fed in chunks of 6, 1 and 3
  Generator gen(0);
  nn::RopeConfig rc;
  rc.head_dim = 8;
  const auto rope = std::make_shared<nn::RotaryEmbedding>(rc, DType::Float64);
  nn::MultiHeadAttention mha(32, 4, rope, &gen, DType::Float64);
  const Tensor x = randn({1, 10, 32}, DType::Float64, &gen);
  Tensor full_weights;
  {
    nn::AttentionCall call = nn::AttentionCall::causal();
    call.weights = &full_weights;
    (void)mha.forward(x, call);
  }
  nn::KVCache cache;
  int64_t fed = 0;
  double worst = 0;
  for (int64_t chunk : {6, 1, 3}) {
    Tensor weights;
    nn::AttentionCall call = nn::AttentionCall::causal();
    call.cache = &cache;
    call.weights = &weights;
    const int64_t past = cache.length();
    (void)mha.forward(narrow(x, 1, fed, chunk), call);
    const Tensor head0 = select(select(weights, 0, 0), 0, 0);  // (chunk, past + chunk)
    const Tensor same = narrow(narrow(select(select(full_weights, 0, 0), 0, 0), 0, fed, chunk), 1, 0, past + chunk);
    worst = std::max(worst, max(abs(head0 - same)).item());
    fmt::print("call {} {} {}\nweights {}\n", past, chunk, cache.length(), numbers(head0, "{:.4f}"));
    fed += chunk;
  }
  fmt::print("max_diff_to_full {:.1e}\n", worst);
}

// ---- chapter 21: the ring, the buckets, ZeRO-1 ---------------------------------------------------------------------

void ring() {
  // three ranks, each vector cut into three chunks; a chunk's value is the set of ranks summed in it (a bit
  // per rank), simulated round by round as the chapter's table describes, and checked at the end
  const int n = 3;
  std::vector<std::vector<int>> held(n, std::vector<int>(n));
  for (int r = 0; r < n; ++r)
    for (int c = 0; c < n; ++c) held[r][c] = 1 << r;
  const auto state = [&](const std::string& label) {
    fmt::print("state {}", label);
    for (int r = 0; r < n; ++r)
      for (int c = 0; c < n; ++c) fmt::print(" {}", held[r][c]);
    fmt::print("\n");
  };
  state("start");
  for (int s = 0; s < n - 1; ++s) {  // reduce-scatter: rank r sends chunk (r - s) mod n to r + 1, which adds
    std::vector<std::vector<int>> next = held;
    fmt::print("round reduce-scatter {}", s + 1);
    for (int r = 0; r < n; ++r) {
      const int c = ((r - s) % n + n) % n, to = (r + 1) % n;
      next[to][c] = held[to][c] | held[r][c];
      fmt::print(" {}", c);
    }
    fmt::print("\n");
    held = next;
    state(fmt::format("reduce-scatter {}", s + 1));
  }
  for (int s = 0; s < n - 1; ++s) {  // all-gather: rank r sends its complete chunk (r + 1 - s) mod n to r + 1
    std::vector<std::vector<int>> next = held;
    fmt::print("round all-gather {}", s + 1);
    for (int r = 0; r < n; ++r) {
      const int c = ((r + 1 - s) % n + n) % n, to = (r + 1) % n;
      next[to][c] = held[r][c];
      fmt::print(" {}", c);
    }
    fmt::print("\n");
    held = next;
    state(fmt::format("all-gather {}", s + 1));
  }
  bool complete = true;
  for (int r = 0; r < n; ++r)
    for (int c = 0; c < n; ++c) complete = complete && held[r][c] == (1 << n) - 1;
  fmt::print("complete {}\nbytes_per_rank_of_900 {:g}\n", complete ? "yes" : "no", tasks::ring_bytes(900, n));
}

void buckets(const std::string& run_dir) {
  // bucket k's all-reduce starts at max(ready_k, end of k - 1) on one channel (train/dp_simulate.h)
  const tasks::NetworkModel net;
  const auto show = [&](const std::string& name, const tasks::BackwardProfile& p, int64_t ranks) {
    const tasks::SimulatedStep s = tasks::simulate_step(p, net, ranks);
    fmt::print("profile {}\nranks {}\nbackward {:.9f}\nexposed {:.9f}\noverlap {:.9f}\n", name, ranks,
               p.backward_s, s.exposed_s, s.overlap);
    double channel_free = 0;
    for (const tasks::ProfileBucket& b : p.buckets) {
      const double start = std::max(b.ready_s, channel_free);
      channel_free = start + tasks::ring_allreduce_seconds(static_cast<double>(b.elements) * net.wire_bytes, ranks, net);
      fmt::print("bucket {} {:.6f} {:.6f} {:.6f}\n", b.elements, b.ready_s, start, channel_free);
    }
  };
  const tasks::BackwardProfile run = tasks::profile_from_run(run_dir);
  show("the copy-task model measured (857,216 parameters, 4 buckets)", run, 8);
  show("the copy-task model measured (857,216 parameters, 4 buckets)", run, 1024);
  const tasks::BackwardProfile gpt2 =
      tasks::profile_from_shape(nn::gpt2_config("small"), 8, 1024, 100000, 1 << 20, 2000);
  show("GPT-2 small's shape at 100 TFLOP/s (8 x 1024 tokens a rank, 1 MB buckets)", gpt2, 8);
}

// A process group that only knows its rank and size: enough for ZeroAdamW to cut its ranges.
class FigureGroup : public tasks::ProcessGroup {
 public:
  FigureGroup(int rank, int size) : rank_(rank), size_(size) {}
  int rank() const override { return rank_; }
  int size() const override { return size_; }
  void start_sum(double*, int64_t, int, int64_t) override {}
  void wait_sums(int64_t) override {}
  void all_gather(const double*, int64_t, double*, const std::string&) override {}
  std::vector<std::string> all_gather_text(const std::string& mine) override { return {mine}; }
  void all_gather_floats(const float*, const std::vector<int64_t>&, float*, const std::string&) override {}
  bool rank0_says(bool mine) override { return mine; }
  int64_t take_bytes_summed() override { return 0; }
  tasks::StepTimes take_times() override { return {}; }

 private:
  int rank_, size_;
};

void zero() {
  // the copy-task model of the chapter's measured runs: vocab 16, d_model 128, 4 layers, 4 heads
  nn::TransformerConfig config;
  config.vocab_size = 16;
  config.d_model = 128;
  config.num_layers = 4;
  config.num_heads = 4;
  Generator gen(0);
  nn::TransformerLM model(config, &gen);
  int64_t total = 0;
  for (const auto& [name, p] : model.named_parameters()) {
    fmt::print("param {} {}\n", name, p.numel());
    total += p.numel();
  }
  fmt::print("total {}\n", total);
  for (int r = 0; r < 3; ++r) {
    FigureGroup group(r, 3);
    tasks::ZeroAdamW opt(model.parameters(), {.lr = 1e-3}, group);
    fmt::print("rank {} {} {} {}\n", r, opt.begin(), opt.end(), opt.state_bytes());
  }
}

}  // namespace

int main(int argc, char** argv) {
  const std::string what = argc > 1 ? argv[1] : "";
  set_num_threads(1);  // the GemmTrace's order is the order of one thread
  if (what == "views") {
    const Tensor x = view(arange(0.0, 12.0, 1.0), {3, 4});
    fmt::print("storage 12\n");
    print_view("x = arange(12).view({3, 4})", x);
    print_view("transpose(x, 0, 1)", transpose(x, 0, 1));
    print_view("narrow(x, 1, 1, 2)", narrow(x, 1, 1, 2));
    print_view("expand(narrow(x, 1, 3, 1), {3, 4})", expand(narrow(x, 1, 3, 1), {3, 4}));
  } else if (what == "broadcast-matmul") {
    // a (2, 3, 2) @ b (2, 2): b is used by both batch entries
    const Tensor a = view(arange(1.0, 13.0, 1.0, DType::Float64), {2, 3, 2});
    Tensor b = tensor({1.0, 0.0, 0.0, 1.0}, {2, 2}, DType::Float64).requires_grad_();
    const Tensor out = matmul(a, b);
    const Tensor g = ones({2, 3, 2}, DType::Float64);
    backward(sum(out));
    const Tensor b_expanded = expand(b.detach(), {2, 2, 2});
    fmt::print("a_shape {}\nb_shape {}\nout_shape {}\nb {}\n", join(a.shape()), join(b.shape()), join(out.shape()),
               numbers(b.detach()));
    fmt::print("b_expanded_shape {}\nb_expanded_strides {}\n", join(b_expanded.shape()), join(b_expanded.strides()));
    for (int64_t i = 0; i < 2; ++i) {
      const Tensor ai = select(a, 0, i);
      fmt::print("a{} {}\n", i, numbers(ai));
      fmt::print("part{} {}\n", i, numbers(matmul(transpose(ai, 0, 1), select(g, 0, i))));
    }
    fmt::print("grad_b {}\n", numbers(b.grad()));
    fmt::print("sum_to {}\n", numbers(kernels::sum_to(matmul(transpose(a, 1, 2), g), {2, 2})));
  } else if (what == "rope") {
    // one real vector of dh = 8 (4 pairs) at positions 0..5; base 100 so the slow pairs move visibly
    nn::RopeConfig config;
    config.head_dim = 8;
    config.base = 100.0;
    nn::RotaryEmbedding rope(config, DType::Float64);
    const Tensor x = tensor({1.0, 0.0, 0.8, 0.6, 0.0, 1.0, -0.6, 0.8}, {1, 8}, DType::Float64);
    const Tensor xs = contiguous(expand(x, {6, 8}));
    fmt::print("base {:g}\nfrequencies", config.base);
    for (double w : rope.frequencies()) fmt::print(" {:.6f}", w);
    fmt::print("\n");
    const Tensor y = rope.forward(xs, arange(int64_t{0}, int64_t{6}));
    for (int64_t p = 0; p < 6; ++p) fmt::print("position {} {}\n", p, numbers(select(y, 0, p), "{:.6f}"));
  } else if (what == "masks") {
    // uniform scores (q = k = 0), so each weight is 1 / (allowed keys of its row)
    const int64_t T = 6;
    const Tensor q = zeros({1, 1, T, 4}), kv = zeros({1, 1, T, 4});
    // a sequence of 4 tokens padded to 6: keys 4 and 5 are padding
    const Tensor padding = tensor_bool({true, true, true, true, false, false}, {1, 1, 1, T});
    struct Case {
      std::string name;
      bool causal;
      Tensor mask;
      int64_t nq, offset;
    };
    for (const Case& c : {Case{"causal", true, Tensor(), T, 0}, Case{"padding", false, padding, T, 0},
                          Case{"causal and padding", true, padding, T, 0},
                          Case{"causal, offset 4 (2 new queries, 6 keys)", true, Tensor(), 2, 4}}) {
      nn::AttentionOptions options;
      options.causal = c.causal;
      options.causal_offset = c.offset;
      options.mask = c.mask;
      Tensor weights;
      (void)nn::scaled_dot_product_attention(narrow(q, 2, T - c.nq, c.nq), kv, kv, options, &weights);
      fmt::print("mask {}\nsize {} {}\nweights {}\n", c.name, c.nq, T, numbers(weights, "{:.4f}"));
    }
  } else if (what == "tiles") {
    // causal tiled attention, T = 512, tiles of 64 queries x 128 keys: the products of the forward
    const int64_t T = 512, dh = 16, dv = 8;
    Generator gen(0);
    const Tensor q = randn({1, 1, T, dh}, kDefaultFloat, &gen), k = randn({1, 1, T, dh}, kDefaultFloat, &gen);
    const Tensor v = randn({1, 1, T, dv}, kDefaultFloat, &gen);
    nn::TileSizes tiles;
    nn::ScoreMask mask;
    mask.causal = true;
    std::vector<kernels::GemmCall> calls;
    {
      kernels::GemmTrace trace;
      (void)nn::dot_attention_tiled(q, k, v, 1.0 / std::sqrt(double(dh)), mask, tiles);
      calls = trace.calls();
    }
    fmt::print("T {}\ntile {} {}\n", T, tiles.query, tiles.key);
    // score tiles are (queries x dh) . (dh x keys): k = dh; the P v products have k = keys
    for (const auto& c : calls)
      if (c.k == dh && !c.accumulate) fmt::print("scores {} {}\n", c.m, c.n);
  } else if (what == "gram") {
    const Tensor q = tensor({2.0, 0.0, 0.0}, DType::Float64), r = tensor({0.8, 1.6, 0.0}, DType::Float64);
    const std::vector<std::pair<std::string, Tensor>> keys = {
        {"in the plane", tensor({1.2, 1.0, 0.0}, DType::Float64)},
        {"slightly off", tensor({2.0, 0.8, 0.5}, DType::Float64)},
        {"far off", tensor({0.4, 0.4, 1.4}, DType::Float64)}};
    fmt::print("q {}\nr {}\n", numbers(q), numbers(r));
    const double area2 = dot(q, q) * dot(r, r) - dot(r, q) * dot(r, q);
    fmt::print("area2 {:.4f}\n", area2);
    for (const auto& [name, k] : keys) {
      const Tensor X = stack({q, k, r});                   // (3, 3), rows q, k, r
      const Tensor G = matmul(X, transpose(X, 0, 1));      // the Gram matrix
      const std::vector<double> g = G.to_vector<double>();
      const double det = g[0] * (g[4] * g[8] - g[5] * g[7]) - g[1] * (g[3] * g[8] - g[5] * g[6]) +
                         g[2] * (g[3] * g[7] - g[4] * g[6]);
      fmt::print("key {}\nk {}\ndet {:.4f}\nheight2 {:.4f}\n", name, numbers(k), det, det / area2);
    }
  } else if (what == "bpe") {
    // the example of Sennrich et al. (2016), as CS336 uses it: a real training run
    const std::string corpus =
        "low low low low low lower lower widest widest widest newest newest newest newest newest newest";
    const tok::BpeModel model = tok::train_bpe(corpus, 256 + 1 + 6, {"<|endoftext|>"});
    std::vector<tok::Word> words = tok::pretoken_words(corpus, {"<|endoftext|>"});
    const auto show = [&](const tok::Word& w) {
      std::string out;
      for (size_t i = 0; i < w.ids.size(); ++i) {
        std::string piece = model.vocab[w.ids[i]];
        for (char& ch : piece)
          if (ch == ' ') ch = '_';
        if (i) out += '|';
        out += piece;
      }
      return out;
    };
    const auto state = [&](const std::string& label) {
      fmt::print("{}", label);
      for (const auto& w : words) fmt::print(" {}x{}", w.count, show(w));
      fmt::print("\n");
    };
    state("start");
    int32_t id = 256 + 1;
    for (const auto& [left, right] : model.merges) {
      std::string l = model.vocab[left], r = model.vocab[right];
      for (std::string* s : {&l, &r})
        for (char& ch : *s)
          if (ch == ' ') ch = '_';
      for (auto& w : words) tok::merge_pair_in_word(w.ids, left, right, id);
      state(fmt::format("merge {} {} {}", l, r, id));
      ++id;
    }
  } else if (what == "fd-error") {
    fd_error();
  } else if (what == "init") {
    init();
  } else if (what == "embedding") {
    embedding_figure();
  } else if (what == "rmsnorm") {
    rmsnorm_figure();
  } else if (what == "silu") {
    silu_figure();
  } else if (what == "rope-scores") {
    rope_scores();
  } else if (what == "schedule") {
    schedule();
  } else if (what == "optimizers") {
    optimizers();
  } else if (what == "checkpoint" && argc > 2) {
    checkpoint_figure(argv[2]);
  } else if (what == "w2") {
    w2_figure();
  } else if (what == "flop-shares") {
    flop_shares();
  } else if (what == "kv-cache") {
    kv_cache();
  } else if (what == "ring") {
    ring();
  } else if (what == "buckets" && argc > 2) {
    buckets(argv[2]);
  } else if (what == "zero") {
    zero();
  } else {
    std::cerr << "usage: snippet_figure_data views | broadcast-matmul | rope | masks | tiles | gram | bpe | fd-error | "
                 "init | embedding | rmsnorm | silu | rope-scores | schedule | optimizers | checkpoint DIR | w2 | "
                 "flop-shares | kv-cache | ring | buckets DIR | zero\n";
    return 2;
  }
  return 0;
}
