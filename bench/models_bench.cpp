// ropegrad-models-bench: time and memory of whole modules and of a training
// step, for bench/compare_with_torch.py to set against PyTorch
// (bench/torch_reference.py computes the same things). One run prints ONE
// JSON object on stdout; nothing here asserts a time.
//
//   ropegrad-models-bench module --module attention [--D 512 --H 8 --T 256 --B 8 --iters 10 --warmup 2]
//   ropegrad-models-bench train  --variant w2 [--D 128 --H 4 --L 2 --T 128 --B 16 --V 256 --d_ff 344 ...]
//   ropegrad-models-bench sgemm  [--M 2048 --N 512 --K 512 --iters 20 --warmup 3]
//   ropegrad-models-bench gemm-floor --variant w2 [the train flags; --rounds 5]
//
// Both modes take --attention auto|materialized|tiled (default auto): the
// attention kernels' path (nn/attention_path.h), reported as "attention".
//
// module: forward + backward (with a fixed random output gradient) of one of
//   linear     Linear(D, D) on x (B, T, D)
//   embedding  Embedding(V, D) on ids (B, T)
//   rmsnorm    RMSNorm(D) on x (B, T, D)
//   swiglu     SwiGLU(D, d_ff) on x (B, T, D)
//   rope       RotaryEmbedding(dh) on x (B, H, T, dh)
//   attention  MultiHeadAttention(D, H) with RoPE, causal, on x (B, T, D)
//   w2         W2Attention(D, H) with RoPE (scalar sigma), causal
//   triple     TripleAttention(D, H) with RoPE, causal
// train: one step of nn::TransformerLM (forward, cross_entropy, backward,
//   AdamW step) on random tokens.
//
// Memory (ropegrad's tensor allocator, tensor/storage.h memory_stats):
//   held_bytes      bytes alive after forward minus before: what the graph
//                   keeps for backward, plus the output itself
//   saved_bytes     held_bytes minus the output's bytes
//   peak_bytes      the most bytes alive during forward + backward beyond
//                   what was alive before
// train also reports the process's peak RSS growth: VmHWM at the end minus
// VmRSS before the model was built (VmHWM reset there through
// /proc/self/clear_refs where the kernel allows it).
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <functional>
#include <map>
#include <optional>
#include <stdexcept>
#include <memory>
#include <string>
#include <vector>

#include <cblas.h>
#include <fmt/format.h>

#include "autograd/engine.h"
#include "autograd/ops.h"
#include "nn/attention.h"
#include "nn/attention_path.h"
#include "nn/attention_variants.h"
#include "nn/functional.h"
#include "nn/layers.h"
#include "optim/optim.h"
#include "nn/rope.h"
#include "nn/transformer.h"
#include "nn/triple_attention.h"
#include "io/flags.h"
#include "nn/w2_attention.h"
#include "tensor/kernels.h"
#include "tensor/parallel.h"
#include "tensor/random.h"
#include "tensor/simd.h"
#include "tensor/storage.h"

namespace rg = ropegrad;
namespace nn = ropegrad::nn;

namespace {

using Clock = std::chrono::steady_clock;

// ---- command line -----------------------------------------------------------------------

// Each mode's flags, read by the command line's one reader (io/flags.h):
// one table a mode, its defaults the mode's (a module's shapes are larger
// than a training step's). The modes' names and the modules' come first.
using Args = ropegrad::flags::Values;

std::vector<std::string> module_names() {
  std::vector<std::string> names = {"linear", "embedding", "rmsnorm", "swiglu", "rope", "attention"};
  for (const nn::AttentionVariant& v : nn::attention_variants()) {
    if (v.kind != nn::AttentionKind::Standard) names.push_back(v.name);
  }
  return names;
}

std::vector<std::string> variant_names() {
  std::vector<std::string> names;
  for (const nn::AttentionVariant& v : nn::attention_variants()) names.push_back(v.name);
  return names;
}

// A dimension's row: a whole number in 1..2^20.
ropegrad::flags::Flag dim(const char* name, int64_t fallback, const char* help) {
  return ropegrad::flags::whole(name, 1, int64_t{1} << 20, std::to_string(fallback), help);
}

// What every mode has: how many runs, the seed, and (but sgemm) the attention kernels.
std::vector<ropegrad::flags::Flag> run_rows(const char* count, int64_t runs, int64_t warmup, bool attention) {
  using namespace ropegrad::flags;
  std::vector<Flag> rows = {whole(count, 1, 1000000, std::to_string(runs), "timed runs"),
                            whole("warmup", 0, 1000000, std::to_string(warmup), "untimed runs first"),
                            whole("seed", 0, int64_t{1} << 62, "0", "the generator's seed")};
  if (attention) {
    rows.push_back(choice("attention", {"auto", "materialized", "tiled"}, "auto", "the attention kernels"));
  }
  return rows;
}

// The model of train and gemm-floor.
std::vector<ropegrad::flags::Flag> model_rows() {
  using namespace ropegrad::flags;
  return {dim("D", 128, "d_model"), dim("H", 4, "heads"), dim("L", 2, "layers"), dim("T", 128, "context"),
          dim("V", 256, "vocabulary"), dim("d_ff", 344, "feed-forward width"), dim("B", 16, "batch"),
          choice("variant", variant_names(), variant_names().front(), "the attention variant")};
}

ropegrad::flags::Command mode_command(const std::string& mode) {
  using namespace ropegrad::flags;
  const std::string name = "ropegrad-models-bench " + mode;
  std::vector<Flag> rows;
  if (mode == "module") {
    rows = {choice("module", module_names(), "attention", "the module"), dim("D", 512, "d_model"),
            dim("H", 8, "heads"), dim("T", 256, "tokens per sequence"), dim("B", 8, "batch"),
            dim("V", 1024, "vocabulary (embedding)"),
            whole("d_ff", 0, int64_t{1} << 20, "0", "SwiGLU's width (0: its default from D)")};
  } else if (mode == "train" || mode == "gemm-floor") {
    rows = model_rows();
  } else if (mode == "sgemm") {
    rows = {dim("M", 2048, "rows of A"), dim("N", 512, "columns of B"), dim("K", 512, "the inner size")};
  } else {
    throw std::invalid_argument("usage: ropegrad-models-bench module|train|sgemm|gemm-floor [--flag value ...] "
                             "(MODE --help: its flags); got '" + mode + "'");
  }
  const std::vector<Flag> runs = mode == "module"       ? run_rows("iters", 10, 2, true)
                                 : mode == "train"      ? run_rows("iters", 5, 2, true)
                                 : mode == "gemm-floor" ? run_rows("rounds", 5, 1, true)
                                                        : run_rows("iters", 20, 3, false);
  rows.insert(rows.end(), runs.begin(), runs.end());
  return Command{name, "", "one measurement, printed as one JSON object", rows};
}

// ---- measurements ---------------------------------------------------------------------------

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  const size_t n = v.size();
  return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

double ms_since(Clock::time_point t0) {
  return std::chrono::duration<double, std::milli>(Clock::now() - t0).count();
}

// A field of /proc/self/status in bytes (VmRSS, VmHWM), -1 if unreadable.
int64_t proc_status_bytes(const std::string& field) {
  std::ifstream in("/proc/self/status");
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind(field + ":", 0) == 0) return std::stoll(line.substr(field.size() + 1)) * 1024;  // kB
  }
  return -1;
}

// Resets VmHWM to the current RSS (Linux >= 4.0); false where not allowed.
bool reset_peak_rss() {
  std::ofstream out("/proc/self/clear_refs");
  if (!out) return false;
  out << "5";
  out.flush();
  return static_cast<bool>(out);
}

int64_t tensor_bytes(const rg::Tensor& t) { return t.numel() * static_cast<int64_t>(rg::element_size(t.dtype())); }

// --attention: which attention kernels run (nn/attention_path.h).
std::string set_attention(const Args& args) {
  const std::string path = args.text("attention");
  nn::set_attention_path(path == "auto"           ? nn::AttentionPath::Auto
                         : path == "materialized" ? nn::AttentionPath::Materialized
                                                  : nn::AttentionPath::Tiled);  // the table allows no other
  return path;
}

std::string threads_json() {
  const char* blas = std::getenv("OPENBLAS_NUM_THREADS");
  // "simd": which compilation of the kernels ran (tensor/simd.h; ROPEGRAD_SIMD).
  return fmt::format("\"ropegrad_threads\": {}, \"openblas_num_threads_env\": \"{}\", \"simd\": \"{}\"",
                     rg::num_threads(), blas ? blas : "", rg::simd::level_name(rg::simd::level()));
}

// ---- module mode --------------------------------------------------------------------------------

struct ModuleCase {
  std::vector<rg::Tensor> params;          // to drop their grads between iterations
  std::function<rg::Tensor()> forward;     // builds the graph
  rg::Tensor input;                        // requires grad where differentiable
  std::string shape;
};

// The attention modules: "attention" (standard attention, the bench's older name) or a variant's name.
const nn::AttentionVariant* attention_module_variant(const std::string& name) {
  if (name == "attention") return &nn::attention_variant(nn::AttentionKind::Standard);
  const nn::AttentionVariant* variant = nn::find_attention_variant(name);
  return variant != nullptr && variant->kind != nn::AttentionKind::Standard ? variant : nullptr;
}

ModuleCase make_module(const std::string& name, int64_t D, int64_t H, int64_t T, int64_t B, int64_t V,
                       int64_t d_ff, rg::Generator& gen) {
  const int64_t dh = D / H;
  ModuleCase c;
  auto rope = std::make_shared<nn::RotaryEmbedding>(nn::RopeConfig{.head_dim = dh, .max_seq_len = T});
  if (name == "embedding") {
    auto m = std::make_shared<nn::Embedding>(V, D, &gen);
    c.input = rg::randint(0, V, {B, T}, &gen);
    c.params = m->parameters();
    c.forward = [m, &c] { return m->forward(c.input); };
    c.shape = fmt::format("ids ({}, {}) -> ({}, {}, {})", B, T, B, T, D);
    return c;
  }
  if (name == "rope") {
    c.input = rg::randn({B, H, T, dh}, rg::DType::Float32, &gen).requires_grad_();
    c.forward = [rope, &c] { return rope->forward(c.input); };
    c.shape = fmt::format("x ({}, {}, {}, {})", B, H, T, dh);
    return c;
  }
  c.input = rg::randn({B, T, D}, rg::DType::Float32, &gen).requires_grad_();
  c.shape = fmt::format("x ({}, {}, {})", B, T, D);
  nn::AttentionCall causal = nn::AttentionCall::causal();
  if (name == "linear") {
    auto m = std::make_shared<nn::Linear>(D, D, &gen);
    c.params = m->parameters();
    c.forward = [m, &c] { return m->forward(c.input); };
  } else if (name == "rmsnorm") {
    auto m = std::make_shared<nn::RMSNorm>(D, 1e-5);
    c.params = m->parameters();
    c.forward = [m, &c] { return m->forward(c.input); };
  } else if (name == "swiglu") {
    auto m = std::make_shared<nn::SwiGLU>(D, d_ff, &gen);
    c.params = m->parameters();
    c.forward = [m, &c] { return m->forward(c.input); };
  } else if (const nn::AttentionVariant* variant = attention_module_variant(name)) {
    nn::TransformerConfig shape;  // scalar sigma, no dropout
    shape.d_model = D, shape.num_heads = H;
    auto m = variant->make(shape, rope, &gen, rg::kDefaultFloat);
    c.params = m->parameters();
    c.forward = [m, &c, causal] { return m->forward(c.input, causal); };
  } else {
    std::string known = "linear, embedding, rmsnorm, swiglu, rope, attention";
    for (const nn::AttentionVariant& v : nn::attention_variants()) {
      if (v.kind != nn::AttentionKind::Standard) known += std::string(", ") + v.name;
    }
    throw std::runtime_error("unknown module " + name + " (" + known + ")");
  }
  return c;
}

int run_module(const Args& args) {
  const std::string name = args.text("module");
  const int64_t D = args.whole("D"), H = args.whole("H"), T = args.whole("T"), B = args.whole("B");
  const int64_t V = args.whole("V"), d_ff = args.whole("d_ff");
  const int64_t iters = args.whole("iters"), warmup = args.whole("warmup");
  rg::Generator gen(static_cast<uint64_t>(args.whole("seed")));
  const std::string attention = set_attention(args);

  ModuleCase c = make_module(name, D, H, T, B, V, d_ff, gen);
  int64_t n_params = 0;
  for (const auto& p : c.params) n_params += p.numel();

  std::vector<double> fwd_ms, total_ms;
  int64_t held = 0, saved = 0, peak = 0;
  for (int64_t it = 0; it < warmup + iters; ++it) {
    for (auto& p : c.params) p.set_grad(rg::Tensor());
    if (c.input.requires_grad()) c.input.set_grad(rg::Tensor());
    rg::Tensor grad_out;
    {
      // The output gradient is made before timing (its shape is known from a dry run).
      rg::NoGradGuard no_grad;
      grad_out = rg::randn(c.forward().shape(), rg::DType::Float32, &gen);
    }
    const int64_t before = rg::memory_stats().current_bytes;
    rg::reset_peak_memory();
    const auto t0 = Clock::now();
    rg::Tensor y = c.forward();
    const double f = ms_since(t0);
    const int64_t after_fwd = rg::memory_stats().current_bytes;
    rg::backward(y, grad_out);
    const double total = ms_since(t0);
    if (it >= warmup) {
      fwd_ms.push_back(f);
      total_ms.push_back(total);
      held = after_fwd - before;
      saved = held - tensor_bytes(y);
      peak = rg::memory_stats().peak_bytes - before;
    }
  }
  fmt::print(
      "{{\"impl\": \"ropegrad\", \"mode\": \"module\", \"module\": \"{}\", \"D\": {}, \"H\": {}, \"T\": {}, "
      "\"B\": {}, \"shape\": \"{}\", \"params\": {}, \"iters\": {}, \"warmup\": {}, {}, "
      "\"attention\": \"{}\", \"fwd_ms\": {:.4f}, \"fwd_bwd_ms\": {:.4f}, \"fwd_bwd_ms_min\": {:.4f}, "
      "\"held_bytes\": {}, \"saved_bytes\": {}, \"peak_bytes\": {}}}\n",
      name, D, H, T, B, c.shape, n_params, iters, warmup, threads_json(), attention, median(fwd_ms), median(total_ms),
      *std::min_element(total_ms.begin(), total_ms.end()), held, saved, peak);
  return 0;
}

// ---- train mode ---------------------------------------------------------------------------------

// One training step, in a function of its own so that a profiler can count it
// alone: valgrind --tool=callgrind --toggle-collect='*train_step*' leaves out
// model construction and start-up (docs/appendix-c-performance.md).
[[gnu::noinline]] rg::Tensor train_step(nn::TransformerLM& model, nn::AdamW& opt, const rg::Tensor& ids,
                                        const rg::Tensor& targets) {
  opt.zero_grad();
  rg::Tensor l = nn::cross_entropy(model.forward(ids), targets);
  rg::backward(l);
  opt.step();
  return l;
}

// The model of train and gemm-floor: --D --H --L --T --V --d_ff --variant.
nn::TransformerConfig train_config(const Args& args) {
  nn::TransformerConfig cfg;
  cfg.d_model = args.whole("D");
  cfg.num_heads = args.whole("H");
  cfg.num_layers = args.whole("L");
  cfg.context_length = args.whole("T");
  cfg.vocab_size = args.whole("V");
  cfg.d_ff = args.whole("d_ff");
  cfg.attention = nn::parse_attention_kind(args.text("variant"));
  return cfg;
}

int run_train(const Args& args) {
  const nn::TransformerConfig cfg = train_config(args);
  const int64_t T = cfg.context_length, B = args.whole("B");
  const int64_t iters = args.whole("iters"), warmup = args.whole("warmup");
  rg::Generator gen(static_cast<uint64_t>(args.whole("seed")));
  const std::string attention = set_attention(args);

  const int64_t rss_before = proc_status_bytes("VmRSS");
  const bool hwm_reset = reset_peak_rss();
  const int64_t rss_base = proc_status_bytes("VmRSS");
  const int64_t tensors_before = rg::memory_stats().current_bytes;
  rg::reset_peak_memory();

  nn::TransformerLM model(cfg, &gen);
  model.train();
  nn::AdamW opt(model.parameters(), {.lr = 1e-3});
  const int64_t rss_model = proc_status_bytes("VmRSS");
  // Random tokens; targets are a second draw (the loss value does not matter here).
  const rg::Tensor ids = rg::randint(0, cfg.vocab_size, {B, T}, &gen);
  const rg::Tensor targets = rg::randint(0, cfg.vocab_size, {B, T}, &gen);

  std::vector<double> step_ms;
  double loss = 0;
  for (int64_t it = 0; it < warmup + iters; ++it) {
    const auto t0 = Clock::now();
    rg::Tensor l = train_step(model, opt, ids, targets);
    const double ms = ms_since(t0);
    loss = l.item<double>();
    if (it >= warmup) step_ms.push_back(ms);
  }
  const double med = median(step_ms);
  const int64_t hwm = proc_status_bytes("VmHWM");
  fmt::print(
      "{{\"impl\": \"ropegrad\", \"mode\": \"train\", \"variant\": \"{}\", \"D\": {}, \"H\": {}, \"L\": {}, "
      "\"T\": {}, \"B\": {}, \"V\": {}, \"d_ff\": {}, \"params\": {}, \"iters\": {}, \"warmup\": {}, {}, "
      "\"attention\": \"{}\", \"step_ms\": {:.3f}, \"step_ms_min\": {:.3f}, \"tokens_per_s\": {:.1f}, \"loss\": {:.5f}, "
      "\"tensor_peak_bytes\": {}, \"rss_before_bytes\": {}, \"rss_base_bytes\": {}, \"rss_model_bytes\": {}, "
      "\"rss_peak_bytes\": {}, \"rss_peak_growth_bytes\": {}, \"hwm_reset\": {}}}\n",
      nn::attention_kind_name(cfg.attention), cfg.d_model, cfg.num_heads, cfg.num_layers, T, B, cfg.vocab_size,
      cfg.d_ff, model.num_parameters(), iters, warmup, threads_json(), attention, med,
      *std::min_element(step_ms.begin(), step_ms.end()), static_cast<double>(B * T) / (med / 1000.0), loss,
      rg::memory_stats().peak_bytes - tensors_before, rss_before, rss_base, rss_model, hwm, hwm - rss_base,
      hwm_reset ? "true" : "false");
  return 0;
}

// ---- gemm-floor mode -----------------------------------------------------------------------------

// What a training step's matrix products alone cost: one step of the train
// model runs under a GemmTrace (tensor/kernels.h), which lists every product
// it handed to BLAS; the list is then replayed on raw cblas_sgemm, with the
// same shapes, transposes and batch counts, on buffers of random numbers, and
// nothing else. No step of this model, in this framework or any other calling
// the same BLAS for the same products, can take less time than that: the
// floor under a step's time, and the time left above it is everything else.
// With P threads (ropegrad's pool) the list is cut into P runs of about
// equal FLOPs, replayed at once, each on one thread: the best a P-core step
// could do with perfect parallelism. Reports the fastest of --rounds replays.
struct ReplayBuffers {
  std::vector<float> a, b, c;
};

void replay(const std::vector<rg::kernels::GemmCall>& calls, size_t lo, size_t hi, ReplayBuffers& buf) {
  for (size_t i = lo; i < hi; ++i) {
    const rg::kernels::GemmCall& g = calls[i];
    const int64_t lda = g.trans_a ? g.m : g.k, ldb = g.trans_b ? g.k : g.n;
    for (int64_t j = 0; j < g.count; ++j) {  // each batch on its own operands, as in the step
      cblas_sgemm(CblasRowMajor, g.trans_a ? CblasTrans : CblasNoTrans, g.trans_b ? CblasTrans : CblasNoTrans,
                  g.m, g.n, g.k, 1.0f, buf.a.data() + j * g.m * g.k, lda, buf.b.data() + j * g.k * g.n, ldb,
                  g.accumulate ? 1.0f : 0.0f, buf.c.data() + j * g.m * g.n, g.n);
    }
  }
}

double gemm_flops(const rg::kernels::GemmCall& g) {
  return 2.0 * static_cast<double>(g.m) * static_cast<double>(g.n) * static_cast<double>(g.k) *
         static_cast<double>(g.count);
}

int run_gemm_floor(const Args& args) {
  const nn::TransformerConfig cfg = train_config(args);
  const int64_t T = cfg.context_length, B = args.whole("B");
  const int64_t rounds = args.whole("rounds"), warmup = args.whole("warmup");
  if (rounds < 1 || warmup < 0) {
    throw std::runtime_error(fmt::format("gemm-floor: --rounds must be >= 1 and --warmup >= 0, got {} and {}",
                                         rounds, warmup));
  }
  rg::Generator gen(static_cast<uint64_t>(args.whole("seed")));
  const std::string attention = set_attention(args);
  nn::TransformerLM model(cfg, &gen);
  model.train();
  nn::AdamW opt(model.parameters(), {.lr = 1e-3});
  const rg::Tensor ids = rg::randint(0, cfg.vocab_size, {B, T}, &gen);
  const rg::Tensor targets = rg::randint(0, cfg.vocab_size, {B, T}, &gen);
  for (int64_t it = 0; it < warmup; ++it) train_step(model, opt, ids, targets);
  std::vector<rg::kernels::GemmCall> calls;
  {
    const rg::kernels::GemmTrace trace;
    train_step(model, opt, ids, targets);
    calls = trace.calls();
  }
  double flops = 0;
  int64_t products = 0, accumulating = 0;
  for (const auto& g : calls) {
    if (g.dtype != rg::DType::Float32) throw std::runtime_error("gemm-floor replays float32 products only");
    flops += gemm_flops(g);
    products += g.count;
    accumulating += g.accumulate ? g.count : 0;
  }
  if (flops <= 0) throw std::runtime_error("gemm-floor: the step made no matrix product to replay");
  // Cut the list into one run per thread, of about equal FLOPs.
  const int parts = std::max(1, rg::num_threads());
  std::vector<size_t> cut{0};
  double done = 0;
  for (size_t i = 0; i < calls.size() && static_cast<int>(cut.size()) < parts; ++i) {
    done += gemm_flops(calls[i]);
    if (done >= flops * static_cast<double>(cut.size()) / parts) cut.push_back(i + 1);
  }
  while (static_cast<int>(cut.size()) <= parts) cut.push_back(calls.size());
  // Buffers big enough for the largest batch of operands; small random values
  // (no denormals, no overflow when a product accumulates).
  size_t max_a = 1, max_b = 1, max_c = 1;
  for (const auto& g : calls) {
    max_a = std::max<size_t>(max_a, g.count * g.m * g.k);
    max_b = std::max<size_t>(max_b, g.count * g.k * g.n);
    max_c = std::max<size_t>(max_c, g.count * g.m * g.n);
  }
  std::vector<ReplayBuffers> buffers(parts);
  for (auto& buf : buffers) {
    const rg::Tensor noise = rg::rand({static_cast<int64_t>(std::max({max_a, max_b, max_c}))}, rg::DType::Float32, &gen);
    const float* r = noise.data_ptr<float>();
    buf.a.assign(r, r + max_a);
    buf.b.assign(r, r + max_b);
    buf.c.assign(r, r + max_c);
  }
  rg::kernels::use_single_threaded_blas();
  std::vector<double> ms;
  for (int64_t round = 0; round < rounds + 1; ++round) {  // the first round warms the buffers up
    const auto t0 = Clock::now();
    rg::parallel_for(0, parts, 1, [&](int64_t lo, int64_t hi) {
      for (int64_t p = lo; p < hi; ++p) replay(calls, cut[p], cut[p + 1], buffers[p]);
    });
    if (round > 0) ms.push_back(ms_since(t0));
  }
  const double best = *std::min_element(ms.begin(), ms.end());
  fmt::print(
      "{{\"impl\": \"ropegrad\", \"mode\": \"gemm-floor\", \"variant\": \"{}\", \"D\": {}, \"H\": {}, "
      "\"L\": {}, \"T\": {}, \"B\": {}, \"V\": {}, \"d_ff\": {}, {}, \"attention\": \"{}\", "
      "\"gemm_calls\": {}, \"gemm_products\": {}, \"accumulating_products\": {}, \"gemm_gflop\": {:.4f}, "
      "\"rounds\": {}, \"floor_ms\": {:.3f}, \"floor_ms_median\": {:.3f}, \"gflops\": {:.2f}}}\n",
      nn::attention_kind_name(cfg.attention), cfg.d_model, cfg.num_heads, cfg.num_layers, T, B, cfg.vocab_size,
      cfg.d_ff, threads_json(), attention, calls.size(), products, accumulating, flops / 1e9, rounds, best,
      median(ms), flops / best / 1e6);
  return 0;
}

// ---- sgemm mode ---------------------------------------------------------------------------------

// The GEMM speed a training step is set against: rg::matmul of (M, K) by
// (K, N) float32 tensors that do not require grad, i.e. OpenBLAS's sgemm
// split over ropegrad's thread pool (parallel_gemm in tensor/matmul.cpp), the
// path every large product of a step takes. FLOPs = 2*M*N*K per product;
// reports the best and the median GFLOP/s over the iterations.
int run_sgemm(const Args& args) {
  const int64_t M = args.whole("M"), N = args.whole("N"), K = args.whole("K");
  const int64_t iters = args.whole("iters"), warmup = args.whole("warmup");
  rg::Generator gen(static_cast<uint64_t>(args.whole("seed")));
  const rg::Tensor a = rg::randn({M, K}, rg::DType::Float32, &gen), b = rg::randn({K, N}, rg::DType::Float32, &gen);
  std::vector<double> ms;
  for (int64_t it = 0; it < warmup + iters; ++it) {
    const auto t0 = Clock::now();
    rg::Tensor c = rg::matmul(a, b);
    const double t = ms_since(t0);
    if (it >= warmup) ms.push_back(t);
  }
  const double flops = 2.0 * static_cast<double>(M) * static_cast<double>(N) * static_cast<double>(K);
  const double med = median(ms), best = *std::min_element(ms.begin(), ms.end());
  fmt::print("{{\"impl\": \"ropegrad\", \"mode\": \"sgemm\", \"M\": {}, \"N\": {}, \"K\": {}, \"iters\": {}, "
             "{}, \"ms\": {:.4f}, \"ms_min\": {:.4f}, \"gflops\": {:.2f}, \"gflops_best\": {:.2f}}}\n",
             M, N, K, iters, threads_json(), med, best, flops / med / 1e6, flops / best / 1e6);
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  try {
    const std::string mode = argc >= 2 ? argv[1] : "";
    const std::optional<Args> args = ropegrad::flags::read(mode_command(mode), std::vector<std::string>(argv + 2, argv + std::max(argc, 2)));
    if (!args) return 0;  // --help
    if (mode == "module") return run_module(*args);
    if (mode == "train") return run_train(*args);
    if (mode == "sgemm") return run_sgemm(*args);
    return run_gemm_floor(*args);  // mode_command refused every other mode
  } catch (const ropegrad::Error& e) {
    std::fprintf(stderr, "%s\n", e.what());  // the flag reader's, naming the mode
    return 2;
  } catch (const std::invalid_argument& e) {
    std::fprintf(stderr, "ropegrad-models-bench: %s\n", e.what());  // no such mode
    return 2;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "ropegrad-models-bench: %s\n", e.what());
    return 1;
  }
}
