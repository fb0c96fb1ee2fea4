// The course's final check: the learner's whole LM, trained on real text with
// the learner's own tokenizer, against the reference at the same seed.
//
//   course-final --corpus FILE --out DIR [--reference TRACE] [--write-reference TRACE] [--steps N]
//
// scripts/dev.sh course final prepares the corpus (Debian's fortunes) and
// runs it in a workspace where every exercise passes. Everything it runs is
// the learner's code: the BPE training and encoding (ex19), the modules, the
// loss, AdamW, the schedule, clipping, get_batch and the training step; the
// fast forms of those exercises are not in a workspace (tensor/fast_forms.h).
//
// At every step it writes a trace: a fingerprint (mean, root mean square and
// a fixed weighted sum, in double) of each module's output on that step's
// batch in forward order, of the loss, of the gradient each module passes
// back to its input from the loss down, of each parameter's gradient, and of
// each parameter after the update. The
// reference's trace, made in the reference tree with the fast forms off, is
// committed (course/final/reference.trace). The loss curves must agree to
// float32 noise; where they do not, the first record that differs names the
// step and the module.
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <map>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

#include "autograd/engine.h"
#include "course/final_options.h"
#include "io/fnv1a.h"
#include "io/read_file.h"
#include "autograd/ops.h"
#include "tasks/batch.h"
#include "nn/functional.h"
#include "optim/optim.h"
#include "nn/transformer.h"
#include "train/plot.h"
#include "train/trainer.h"
#include "tensor/error.h"
#include "tensor/kernels.h"
#include "tensor/random.h"
#include "tokenizer/tokenizer.h"

using namespace ropegrad;
namespace fs = std::filesystem;

namespace {

// ---- settings: fixed, so that the learner's run and the reference's are the same run ----------
constexpr int64_t kVocab = 512;
constexpr int64_t kContext = 64;
constexpr int64_t kBatch = 16;
constexpr uint64_t kSeed = 7;
const char* const kSpecial = "<|endoftext|>";

nn::TransformerConfig model_config(int64_t vocab) {
  nn::TransformerConfig c;
  c.vocab_size = vocab;
  c.context_length = kContext;
  c.d_model = 64;
  c.num_layers = 2;
  c.num_heads = 4;
  c.d_ff = 0;  // 8/3 d_model, rounded up to a multiple of 64
  return c;
}

tasks::TrainConfig train_config(int64_t steps) {
  tasks::TrainConfig t;
  t.steps = steps;
  t.batch_size = kBatch;
  t.lr = 3e-3;
  t.min_lr = 3e-4;
  t.warmup = 10;
  t.clip = 1.0;
  t.weight_decay = 0.01;
  t.beta1 = 0.9;
  t.beta2 = 0.98;
  return t;
}

// ---- fingerprints ------------------------------------------------------------------------------

struct Record {
  int64_t step = 0;
  std::string kind;  // fwd, loss, grad, param, meta
  std::string name;
  int64_t n = 0;
  double mean = 0, rms = 0, wsum = 0;
};

// mean, rms and sum_i w_i x_i with fixed weights in [-0.5, 0.5): a transposed
// or permuted tensor keeps its mean and rms but not its weighted sum.
Record fingerprint(int64_t step, const std::string& kind, const std::string& name, const Tensor& t) {
  const std::vector<double> v = t.to_vector<double>();
  Record r{step, kind, name, static_cast<int64_t>(v.size())};
  double s = 0, s2 = 0, w = 0;
  for (size_t i = 0; i < v.size(); ++i) {
    s += v[i];
    s2 += v[i] * v[i];
    w += v[i] * (static_cast<double>((i * 2654435761u) % 1000) / 1000.0 - 0.5);
  }
  const double n = std::max<double>(1, static_cast<double>(v.size()));
  r.mean = s / n;
  r.rms = std::sqrt(s2 / n);
  r.wsum = w;
  return r;
}

std::string format_record(const Record& r) {
  return fmt::format("{} {} {} {} {:.9e} {:.9e} {:.9e}", r.step, r.kind, r.name, r.n, r.mean, r.rms, r.wsum);
}

std::vector<Record> read_trace(const std::string& path) {
  std::ifstream in(path);
  RG_CHECK(in.good(), "course final", "cannot read the reference trace {}", path);
  std::vector<Record> out;
  std::string line;
  int64_t line_no = 0;
  while (std::getline(in, line)) {
    ++line_no;
    if (line.empty() || line[0] == '#') continue;
    std::istringstream fields(line);
    Record r;
    RG_CHECK(static_cast<bool>(fields >> r.step >> r.kind >> r.name >> r.n >> r.mean >> r.rms >> r.wsum), "course final",
             "{}:{}: not a trace line: '{}'", path, line_no, line);
    out.push_back(r);
  }
  return out;
}

// How far apart two fingerprints of one tensor are, relative to its size.
double distance(const Record& a, const Record& b) {
  const double scale = std::max(std::abs(b.rms), 1e-30);
  const double root_n = std::sqrt(std::max<double>(1, static_cast<double>(b.n)));
  return std::max({std::abs(a.mean - b.mean) / scale, std::abs(a.rms - b.rms) / scale,
                   std::abs(a.wsum - b.wsum) / (scale * root_n)});
}

// Float32 noise: the learner's code and the reference round differently (sums
// in another order, another exp), by about 1e-6 of a value at the first step.
// Training amplifies such differences, roughly doubling them every few dozen
// steps; the allowed distance grows with the step accordingly. A mistake
// moves a value by far more from the step where it first acts.
double allowed(int64_t step) { return 2e-4 * std::pow(2.0, static_cast<double>(step) / 25.0); }

// What a record's name points to, for the learner.
std::string what_is(const std::string& kind, const std::string& name) {
  std::string part = name;
  if (kind == "grad" || kind == "param") part = name.substr(0, name.rfind('.'));
  std::string module = "the module " + part;
  if (part.find("ln") != std::string::npos) module = part + " (RMSNorm, ex07-rmsnorm)";
  else if (part.find("attn") != std::string::npos) module = part + " (attention, ex12)";
  else if (part.find("ffn") != std::string::npos) module = part + " (SwiGLU, ex08-swiglu / ex06-linear)";
  else if (part.find("token_embeddings") != std::string::npos) module = part + " (Embedding, ex06-embedding)";
  else if (part.find("lm_head") != std::string::npos) module = part + " (Linear, ex06-linear / ex17-lm)";
  else if (part.rfind("layers.", 0) == 0) module = part + " (the block, ex17-block)";
  if (kind == "fwd") return "the output of " + module;
  if (kind == "loss") return "the loss (cross-entropy, ex13-cross-entropy)";
  if (kind == "bwd") return "the gradient that " + module + " passes back to its input";
  if (kind == "grad") return "the gradient of " + name + ", in " + module;
  if (kind == "param") return name + " after the update (AdamW, ex13-adamw; the schedule, ex13-cosine-schedule)";
  return name;
}

std::string read_file(const std::string& path) { return io::read_file(path, "course final"); }

// FNV-1a (io/fnv1a.h) from this start value, one digit short of FNV's
// offset basis: the traces hold these numbers, so it stays.
constexpr uint64_t kTraceHashStart = 1469598103934665603ull;

// The gradient each module passes back to its input on this batch, from the
// loss down (lm_head, ln_final, then each block's ffn, ln2, attn, ln1 and the
// block as a whole): each computed from the gradient the module above passed
// back, so the first that differs is the module whose backward is wrong.
// The parameters' .grad are put back as they were: the learner's step must
// see exactly what it would without this.
void trace_backward(nn::TransformerLM& lm, const Tensor& inputs, const Tensor& targets, int64_t step,
                    std::vector<Record>& trace) {
  const auto params = lm.parameters();
  std::vector<Tensor> saved;
  for (const Tensor& p : params) saved.push_back(p.grad().defined() ? kernels::clone(p.grad()) : Tensor());
  const auto leaf = [](const Tensor& t) { return t.detach().requires_grad_(true); };
  nn::AttentionCall call = nn::AttentionCall::causal();
  const size_t layers = lm.layers->size();
  std::vector<Tensor> block_in;  // the input of each block, and ln_final's
  {
    NoGradGuard no_grad;
    Tensor h = lm.token_embeddings->forward(inputs);
    for (size_t i = 0; i < layers; ++i) {
      block_in.push_back(h);
      h = (*lm.layers)[i].forward(h, call);
    }
    block_in.push_back(h);
  }
  Tensor normed;
  {
    NoGradGuard no_grad;
    normed = lm.ln_final->forward(block_in[layers]);
  }
  const Tensor z = leaf(normed);
  const Tensor logits = lm.lm_head ? lm.lm_head->forward(z) : matmul(z, transpose(lm.token_embeddings->weight, 0, 1));
  backward(nn::cross_entropy(logits, targets));
  Tensor g = z.grad();
  trace.push_back(fingerprint(step, "bwd", "lm_head", g));
  const Tensor xf = leaf(block_in[layers]);
  backward(lm.ln_final->forward(xf), g);
  g = xf.grad();
  trace.push_back(fingerprint(step, "bwd", "ln_final", g));
  for (size_t i = layers; i-- > 0;) {
    const nn::TransformerBlock& block = (*lm.layers)[i];
    const std::string at = fmt::format("layers.{}", i);
    const Tensor g_out = g, h = block_in[i];
    Tensor a, h1, b;
    {
      NoGradGuard no_grad;
      a = block.ln1->forward(h);
      h1 = h + block.attn->forward(a, call);
      b = block.ln2->forward(h1);
    }
    const Tensor bl = leaf(b);
    backward(block.ffn->forward(bl), g_out);
    trace.push_back(fingerprint(step, "bwd", at + ".ffn", bl.grad()));
    const Tensor h1l = leaf(h1);
    backward(block.ln2->forward(h1l), bl.grad());
    trace.push_back(fingerprint(step, "bwd", at + ".ln2", h1l.grad()));
    const Tensor g_h1 = g_out + h1l.grad();
    const Tensor al = leaf(a);
    backward(block.attn->forward(al, call), g_h1);
    trace.push_back(fingerprint(step, "bwd", at + ".attn", al.grad()));
    const Tensor hl = leaf(h);
    backward(block.ln1->forward(hl), al.grad());
    trace.push_back(fingerprint(step, "bwd", at + ".ln1", hl.grad()));
    const Tensor hb = leaf(h);  // the learner's block as a whole
    backward(block.forward(hb, call), g_out);
    g = hb.grad();
    trace.push_back(fingerprint(step, "bwd", at, g));
  }
  for (size_t k = 0; k < params.size(); ++k) params[k].set_grad(saved[k]);
}

// 1. The learner's tokenizer on the corpus (ex19), and its ids split: the last tenth validates.
struct Tokens {
  tok::Tokenizer tokenizer;
  Tensor train, valid;
};
Tokens tokenize_corpus(const std::string& corpus_path, std::vector<Record>& trace) {
  const std::string corpus = read_file(corpus_path);
  trace.push_back({0, "meta", "corpus_bytes", static_cast<int64_t>(corpus.size()), 0, 0,
                   static_cast<double>(fnv1a_bytes(corpus.data(), corpus.size(), kTraceHashStart) % 1000000007ull)});
  fmt::print("course final: training a {}-token BPE on {} ({} bytes) with your tokenizer\n", kVocab, corpus_path,
             corpus.size());
  std::cout.flush();
  tok::Tokenizer tokenizer(tok::train_bpe(corpus, kVocab, {kSpecial}));
  const std::vector<int32_t> ids = tokenizer.encode(corpus);
  trace.push_back({0, "meta", "token_ids", static_cast<int64_t>(ids.size()), 0, 0,
                   static_cast<double>(fnv1a_bytes(ids.data(), ids.size() * sizeof(int32_t), kTraceHashStart) % 1000000007ull)});
  const int64_t split = static_cast<int64_t>(ids.size()) * 9 / 10;
  std::vector<double> train_ids(ids.begin(), ids.begin() + split), valid_ids(ids.begin() + split, ids.end());
  Tensor train_tokens = to(tensor(train_ids, {split}, DType::Float64), DType::Int64);
  Tensor valid_tokens = to(tensor(valid_ids, {static_cast<int64_t>(valid_ids.size())}, DType::Float64), DType::Int64);
  fmt::print("course final: {} tokens ({} train, {} validation)\n", ids.size(), split, valid_ids.size());
  return {std::move(tokenizer), train_tokens, valid_tokens};
}

// Each module's output on this batch, before the step (diagnosis only).
void trace_forward(nn::TransformerLM& lm, const Tensor& inputs, int64_t step, std::vector<Record>& trace) {
  NoGradGuard no_grad;
  Tensor h = lm.token_embeddings->forward(inputs);
  trace.push_back(fingerprint(step, "fwd", "token_embeddings", h));
  for (size_t i = 0; i < lm.layers->size(); ++i) {
    const nn::TransformerBlock& block = (*lm.layers)[i];
    const std::string at = fmt::format("layers.{}", i);
    nn::AttentionCall call = nn::AttentionCall::causal();
    const Tensor a = block.ln1->forward(h);
    trace.push_back(fingerprint(step, "fwd", at + ".ln1", a));
    const Tensor att = block.attn->forward(a, call);
    trace.push_back(fingerprint(step, "fwd", at + ".attn", att));
    const Tensor b = block.ln2->forward(h + att);
    trace.push_back(fingerprint(step, "fwd", at + ".ln2", b));
    trace.push_back(fingerprint(step, "fwd", at + ".ffn", block.ffn->forward(b)));
    h = block.forward(h, call);
    trace.push_back(fingerprint(step, "fwd", at, h));
  }
  trace.push_back(fingerprint(step, "fwd", "ln_final", lm.ln_final->forward(h)));
  trace.push_back(fingerprint(step, "fwd", "lm_head", lm.forward(inputs)));
}

// The mean loss of four validation batches (the same four every time).
double validation_loss(nn::TransformerLM& lm, const Tensor& valid_tokens) {
  NoGradGuard no_grad;
  Generator eval(kSeed + 2);
  double total = 0;
  for (int e = 0; e < 4; ++e) {
    auto [vi, vt] = nn::get_batch(valid_tokens, kBatch, kContext, eval);
    total += nn::cross_entropy(lm.forward(vi), vt).item<double>();
  }
  return total / 4;
}

// 2. The learner's LM, trained by the learner's step, every module's output,
// gradient and parameter traced; the training curve.
std::vector<std::pair<double, double>> train_lm(nn::TransformerLM& lm, const Tokens& tokens,
                                                const tasks::TrainConfig& tc, std::vector<Record>& trace) {
  const auto named = lm.named_parameters();
  nn::AdamW opt(lm.parameters(), {.lr = tc.lr, .betas = {tc.beta1, tc.beta2}, .eps = 1e-8, .weight_decay = tc.weight_decay});
  Generator data(kSeed + 1);
  std::vector<std::pair<double, double>> train_curve;
  for (int64_t step = 0; step < tc.steps; ++step) {
    auto [inputs, targets] = nn::get_batch(tokens.train, kBatch, kContext, data);
    trace_forward(lm, inputs, step, trace);
    trace_backward(lm, inputs, targets, step, trace);
    const tasks::Batch batch{inputs, targets, Tensor()};
    const tasks::StepRecord rec = tasks::train_step(lm, opt, batch, step, tc);
    trace.push_back({step, "loss", "loss", 1, rec.loss, std::abs(rec.loss), rec.loss});
    train_curve.push_back({static_cast<double>(step), rec.loss});
    for (auto it = named.rbegin(); it != named.rend(); ++it) {  // the order backward reaches them, roughly
      trace.push_back(fingerprint(step, "grad", it->first, it->second.grad()));
    }
    for (const auto& [name, p] : named) trace.push_back(fingerprint(step, "param", name, p));
    if (step % 25 == 24 || step + 1 == tc.steps) {
      const double valid = validation_loss(lm, tokens.valid);
      trace.push_back({step, "valid", "loss", 1, valid, valid, valid});
      fmt::print("course final: step {:4d}  loss {:.4f}  validation {:.4f}\n", step + 1, rec.loss, valid);
      std::cout.flush();
    }
  }
  return train_curve;
}

// 4. A sample of the learner's model, through the learner's top-p and decode.
void print_sample(nn::TransformerLM& lm, const tok::Tokenizer& tokenizer) {
  Generator sample_gen(kSeed + 3);
  nn::GenerateOptions g;
  g.max_new_tokens = 48;
  g.temperature = 0.8;
  g.top_p = 0.9;
  g.generator = &sample_gen;
  const std::vector<int32_t> prompt32 = tokenizer.encode("The ");
  const std::vector<int64_t> prompt(prompt32.begin(), prompt32.end());
  const std::vector<int64_t> sampled = lm.generate(prompt, g);
  const std::vector<int32_t> sampled32(sampled.begin(), sampled.end());
  fmt::print("\nA sample of your model (temperature 0.8, top-p 0.9):\n  The {}\n\n", tokenizer.decode(sampled32));
}

// The table of both losses every 15 steps, and both curves in OUT/loss_curves.svg.
void show_curves(const std::vector<std::pair<double, double>>& train_curve, const std::vector<Record>& ref,
                 const tasks::TrainConfig& tc, const std::string& out) {
  std::map<int64_t, double> ref_loss;
  for (const Record& r : ref) {
    if (r.kind == "loss") ref_loss[r.step] = r.mean;
  }
  fmt::print("| step | your loss | reference | difference | allowed |\n|---:|---:|---:|---:|---:|\n");
  for (const auto& [x, loss] : train_curve) {
    const int64_t step = static_cast<int64_t>(x);
    if (step % 15 != 0 && step + 1 != tc.steps) continue;
    const auto it = ref_loss.find(step);
    if (it == ref_loss.end()) continue;
    fmt::print("| {} | {:.5f} | {:.5f} | {:.1e} | {:.1e} |\n", step + 1, loss, it->second, std::abs(loss - it->second),
               allowed(step) * std::abs(it->second));
  }
  // Steps counted from 1, as the table; the reference dashed and yours with a
  // dot at every step, so where they coincide neither hides the other.
  tasks::Series mine{"your code", {}}, theirs{"reference (dashed)", {}};
  mine.markers = true;
  theirs.dashed = true;
  for (const auto& [x, loss] : train_curve) mine.points.push_back({x + 1, loss});
  for (const auto& [step, loss] : ref_loss) theirs.points.push_back({static_cast<double>(step + 1), loss});
  const std::string svg = (fs::path(out) / "loss_curves.svg").string();
  tasks::write_svg_plot(svg, {mine, theirs}, "course final: your LM and the reference, same seed and settings", "step",
                        "training loss", INFINITY, /*tick_at_last_x=*/true);
  fmt::print("\ncourse final: the curves are in {}\n", svg);
}

// A record whose meta data differs from the reference's: the corpus or the tokenizer.
void explain_meta(const Record& r, const Record& e) {
  if (r.name == "corpus_bytes") {
    fmt::print("course final: the corpus differs from the reference's ({} bytes, checksum {}; the reference "
               "had {} bytes, checksum {}): another version of Debian's fortunes?\n",
               r.n, r.wsum, e.n, e.wsum);
  } else {
    fmt::print("course final: your tokenizer gives other ids than the reference's on this corpus ({} ids, "
               "checksum {}; the reference: {} ids, checksum {}). Check ex19 first: scripts/dev.sh course "
               "check ex19-train-bpe (and ex19-encode).\n",
               r.n, r.wsum, e.n, e.wsum);
  }
}

// 5. The first record of the learner's run that leaves the reference's, in
// trace order: 0 when none does, else 1.
int first_difference(const std::vector<Record>& trace, const std::vector<Record>& ref, const tasks::TrainConfig& tc) {
  std::map<std::string, const Record*> ref_at;
  for (const Record& r : ref) ref_at[fmt::format("{} {} {}", r.step, r.kind, r.name)] = &r;
  for (const Record& r : trace) {
    const auto it = ref_at.find(fmt::format("{} {} {}", r.step, r.kind, r.name));
    if (it == ref_at.end()) {
      if (r.kind == "meta") continue;
      fmt::print("course final: the reference has no record '{} {} {}' (was it made with other settings?)\n", r.step,
                 r.kind, r.name);
      return 1;
    }
    const Record& e = *it->second;
    if (r.kind == "meta") {
      if (r.n == e.n && r.wsum == e.wsum) continue;
      explain_meta(r, e);
      return 1;
    }
    const double d = distance(r, e);
    if (d > allowed(r.step)) {
      fmt::print("course final: your run leaves the reference's at step {}: {} differs first\n", r.step + 1,
                 what_is(r.kind, r.name));
      fmt::print("  yours:     mean {:.6e}  rms {:.6e}  weighted sum {:.6e}\n", r.mean, r.rms, r.wsum);
      fmt::print("  reference: mean {:.6e}  rms {:.6e}  weighted sum {:.6e}\n", e.mean, e.rms, e.wsum);
      fmt::print("  relative distance {:.2e}, float32 noise allows {:.2e} at this step\n", d, allowed(r.step));
      return 1;
    }
  }
  fmt::print("course final: your LM trains as the reference does: every module's output, every gradient and every "
             "update agree to float32 noise for all {} steps\n",
             tc.steps);
  return 0;
}

}  // namespace

int main(int argc, char** argv) try {
  const std::optional<course::FinalOptions> options =
      course::read_final_options(std::vector<std::string>(argv + 1, argv + argc));
  if (!options) return 0;  // --help
  const course::FinalOptions& args = *options;
  fs::create_directories(args.out);
  std::vector<Record> trace;
  const Tokens tokens = tokenize_corpus(args.corpus, trace);

  const tasks::TrainConfig tc = train_config(args.steps);
  Generator init(kSeed);
  nn::TransformerLM lm(model_config(tokens.tokenizer.vocab_size()), &init);
  const std::vector<std::pair<double, double>> train_curve = train_lm(lm, tokens, tc, trace);

  // 3. The trace, and the reference's when asked to write it.
  const std::string trace_path = (fs::path(args.out) / "final.trace").string();
  {
    std::ofstream out(trace_path);
    out << "# course final trace: step kind name numel mean rms weighted_sum\n";
    for (const Record& r : trace) out << format_record(r) << "\n";
  }
  if (!args.write_reference.empty()) {
    fs::copy_file(trace_path, args.write_reference, fs::copy_options::overwrite_existing);
    fmt::print("course final: wrote the reference trace {}\n", args.write_reference);
    return 0;
  }
  print_sample(lm, tokens.tokenizer);
  if (args.reference.empty()) return 0;
  const std::vector<Record> ref = read_trace(args.reference);
  show_curves(train_curve, ref, tc, args.out);
  return first_difference(trace, ref, tc);
} catch (const Error& e) {  // names what refused: "course final: --steps must be ..."
  std::cerr << "error: " << e.what() << "\n";
  return 2;
} catch (const std::exception& e) {
  std::cerr << "error: course final: " << e.what() << "\n";
  return 2;
}
