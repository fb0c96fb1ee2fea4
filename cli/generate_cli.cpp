// `ropegrad generate` (samples from a trained run) and `ropegrad gradcheck`
// (the gradient check of every op and module): their flag tables and runs.
#include <algorithm>
#include <chrono>
#include <cstdint>
#include <limits>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "catalog/op_catalog.h"
#include "io/checkpoint.h"
#include "catalog/module_catalog.h"
#include "cli/commands.h"
#include "cli/model_flags.h"
#include "train/run_files.h"
#include "tasks/token_text_task.h"

namespace ropegrad::tasks {

namespace {

constexpr int64_t kMaxNewTokens = 1000000;

const flags::Command& generate_flags() {
  static const flags::Command c = [] {
    using namespace flags;
    return Command{
        "ropegrad generate", "", "Samples tokens from a checkpoint written by `ropegrad train --out DIR`.",
        {required(path("checkpoint", "DIR", "the run's directory (config.txt and checkpoint.safetensors)")),
         whole_list("prompt", 0, kMaxVocab - 1, ' ', "0", "prompt token ids, space separated"),
         text("text", "TEXT", "prompt as text (byte-level models)"),
         whole("max-new-tokens", 0, kMaxNewTokens, "32", "tokens to generate"),
         real("temperature", closed(0, 1e6), "1.0", "sampling temperature (0: greedy)"),
         real("top-p", open_closed(0, 1), "1.0", "nucleus sampling mass"),
         whole("stop-token", -1, kMaxVocab - 1, "-1", "stop after this token (-1: none)"),
         whole("seed", 0, std::numeric_limits<int64_t>::max(), "0", "sampling seed")}};
  }();
  return c;
}

// What the flags ask of the sampler (its generator and progress set by the run).
nn::GenerateOptions generate_options(const flags::Values& v) {
  nn::GenerateOptions o;
  o.max_new_tokens = v.whole("max-new-tokens");
  o.temperature = v.real("temperature");
  o.top_p = v.real("top-p");
  if (v.whole("stop-token") >= 0) o.stop_token = v.whole("stop-token");
  return o;
}

// Long work shows progress (on stderr, so stdout stays the tokens).
void show_progress(nn::GenerateOptions& o) {
  if (o.max_new_tokens < 1000) return;
  const auto start = std::chrono::steady_clock::now();
  o.on_token = [total = o.max_new_tokens, start](int64_t n) {
    if (n % 500 != 0 && n != total) return;
    const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    fmt::print(stderr, "\rgenerate: {}/{} tokens, {:.0f} tokens/s", n, total, n / std::max(s, 1e-9));
    if (n == total) fmt::print(stderr, "\n");
  };
}

// The prompt's ids: --text through the run's tokenizer (or as bytes), else --prompt; each within the vocabulary.
std::vector<int64_t> prompt_of(const flags::Values& v, const tok::Tokenizer* tokenizer, int64_t vocab) {
  std::vector<int64_t> prompt;
  const std::string& text = v.text("text");
  if (tokenizer != nullptr && !text.empty()) {
    for (int32_t id : tokenizer->encode_linear(text)) prompt.push_back(id);
  } else if (!text.empty()) {
    for (unsigned char ch : text) prompt.push_back(ch);
  } else {
    prompt = v.wholes("prompt");
  }
  for (size_t i = 0; i < prompt.size(); ++i) {
    RG_CHECK(prompt[i] >= 0 && prompt[i] < vocab, "ropegrad generate",
             "prompt token {} is id {}, outside the model's vocabulary 0..{}", i + 1, prompt[i], vocab - 1);
  }
  return prompt;
}

void print_sample(const std::string& text, const tok::Tokenizer* tokenizer, const std::vector<int64_t>& out) {
  if (tokenizer != nullptr) {
    fmt::print("{}{}\n", text, tokenizer->decode(std::vector<int32_t>(out.begin(), out.end())));
  } else if (!text.empty()) {
    fmt::print("{}{}\n", text, std::string(out.begin(), out.end()));
  } else {
    fmt::print("{}\n", fmt::join(out, " "));
  }
}

const flags::Command& gradcheck_flags() {
  static const flags::Command c{
      "ropegrad gradcheck", "",
      "Checks the full Jacobian of every op (catalog/op_catalog.cpp) and module (catalog/module_catalog.cpp)\n"
      "in float64 with torch.autograd.gradcheck's defaults (eps=1e-6, atol=1e-5, rtol=1e-3).\n"
      "Exit status: 0 when every case passes, 1 otherwise.",
      {flags::text("op", "NAME", "check only the cases of one op or module (e.g. matmul, rope)")}};
  return c;
}

struct GradcheckTally {
  int passed = 0, failed = 0;
  std::string failures;
};

void report_case(GradcheckTally& t, const std::string& op, const std::string& shapes, const GradcheckFn& fn,
                 const std::vector<Tensor>& inputs) {
  GradcheckResult r;
  try {
    r = gradcheck(fn, inputs);
  } catch (const Error& e) {
    r.report = e.what();
  }
  fmt::print("| {:<22} | {:<50} | {:>9.2e} | {:<4} |\n", op, shapes, r.max_abs_error, r.passed ? "ok" : "FAIL");
  if (r.passed) {
    ++t.passed;
  } else {
    ++t.failed;
    t.failures += fmt::format("\n{} {}:\n{}\n", op, shapes, r.report);
  }
}

}  // namespace

const flags::Command& generate_command() { return generate_flags(); }
const flags::Command& gradcheck_command() { return gradcheck_flags(); }

void check_generate(const std::vector<std::string>& words) {
  if (const std::optional<flags::Values> v = flags::read(generate_flags(), words)) generate_options(*v);
}

void check_gradcheck(const std::vector<std::string>& words) { flags::read(gradcheck_flags(), words); }

int run_generate(int argc, char** argv) {
  const std::optional<flags::Values> v = flags::read(generate_flags(), argc, argv);
  if (!v) return 0;  // --help
  nn::GenerateOptions o = generate_options(*v);
  const std::string& dir = v->text("checkpoint");
  const RunConfigFile run = read_run_config(dir + "/config.txt");
  nn::TransformerLM model(run.model);
  nn::load_checkpoint(dir + "/checkpoint.safetensors", model, nullptr);
  check_finite_weights(model, dir + "/checkpoint.safetensors");
  const int64_t vocab = model.config().vocab_size;
  // A run trained with a BPE tokenizer encodes the prompt and decodes the output with it.
  const std::string tokenizer_dir = tokenizer_of_run(dir);
  std::unique_ptr<tok::Tokenizer> tokenizer;
  if (!tokenizer_dir.empty()) {
    tokenizer = std::make_unique<tok::Tokenizer>(tok::load_tokenizer(tokenizer_dir));
    // The one it was trained with, or the output would silently change.
    check_tokenizer_of_run(dir, run.settings, tokenizer_dir, tokenizer->vocab_size(), vocab);
  }
  const std::vector<int64_t> prompt = prompt_of(*v, tokenizer.get(), vocab);
  Generator gen(static_cast<uint64_t>(v->whole("seed")));  // >= 0: the flag's range
  o.generator = &gen;
  show_progress(o);
  print_sample(v->text("text"), tokenizer.get(), model.generate(prompt, o));
  return 0;
}

int run_gradcheck(int argc, char** argv) {
  const std::optional<flags::Values> v = flags::read(gradcheck_flags(), argc, argv);
  if (!v) return 0;  // --help
  const std::string& only = v->text("op");
  const auto start = std::chrono::steady_clock::now();
  GradcheckTally t;
  fmt::print("| {:<22} | {:<50} | {:>9} | {:<4} |\n", "op / module", "shapes", "max error", "");
  fmt::print("|{:-<24}|{:-<52}|{:-<11}|{:-<6}|\n", "", "", "", "");
  for (const OpCase& c : op_catalog()) {
    if (only.empty() || c.op == only) report_case(t, c.op, c.shapes, c.fn, make_inputs(c));
  }
  for (const nn::ModuleCase& c : nn::module_catalog()) {
    if (!only.empty() && c.name != only) continue;
    const nn::ModuleCheck check = c.make();
    report_case(t, c.name, c.shapes, check.fn, check.inputs);
  }
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  if (!t.failures.empty()) fmt::print("{}", t.failures);
  fmt::print("\n{} passed, {} failed ({:.2f} s)\n", t.passed, t.failed, seconds);
  if (t.passed + t.failed == 0) {
    fmt::print(stderr, "ropegrad gradcheck: no op or module named '{}'\n", only);
    return 2;
  }
  return t.failed == 0 ? 0 : 1;
}

}  // namespace ropegrad::tasks
