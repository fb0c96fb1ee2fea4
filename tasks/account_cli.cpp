// `ropegrad account`: parameters, matmul FLOPs and training memory of a model shape
// (nn/accounting.h), as a table or as JSON.
#include <cstdio>
#include <map>
#include <stdexcept>
#include <string>
#include <vector>

#include "nn/accounting.h"
#include "tasks/command_flags.h"
#include "tensor/error.h"

namespace ropegrad::tasks {

namespace {

constexpr const char* kOp = "ropegrad account";

const std::vector<CommandFlag> kFlags = {
    {"preset", "NAME", "GPT-2 shape: small | medium | large | xl (vocab 50257, context 1024, d_ff 4 D)"},
    {"vocab", "256", "vocabulary size V"},
    {"d-model", "64", "model width D"},
    {"layers", "2", "transformer blocks L"},
    {"heads", "4", "attention heads H"},
    {"d-ff", "0", "SwiGLU width (0: 8/3 D rounded up to 64)"},
    {"attention", "standard", "standard | w2 | triple"},
    {"sigma", "scalar", "W2: scalar | vector sigma"},
    {"tie", "", "tie the output head to the embedding"},
    {"batch", "1", "sequences B"},
    {"context", "128", "tokens per sequence T (a preset: 1024)"},
    {"dtype", "float32", "float32 | float64: bytes per value of the memory rows"},
    {"json", "", "print JSON instead of the table"},
};

void print_help() {
  std::printf(
      "usage: ropegrad account [options]\n\n"
      "Parameters, matmul FLOPs of a forward and a backward pass by component, and the memory of a\n"
      "training step with AdamW, counted from the shapes (nn/accounting.h). Model flags given with\n"
      "--preset change its shape.\n\noptions:\n");
  print_command_flags(kFlags);
}

// The flag's integer in [lo, hi] (hi keeps every count within int64), or `fallback` when not given.
int64_t integer_flag(const std::map<std::string, std::string>& given, const std::string& name, int64_t fallback,
                     int64_t lo, int64_t hi, const char* op = kOp) {
  const auto it = given.find(name);
  if (it == given.end()) return fallback;
  int64_t value = 0;
  size_t used = 0;
  try {
    value = std::stoll(it->second, &used);
  } catch (const std::exception&) {
    used = 0;
  }
  RG_CHECK(used == it->second.size() && used > 0, op, "--{} expects an integer, got '{}'", name, it->second);
  RG_CHECK(value >= lo && value <= hi, op, "--{} must be in {}..{}, got {}", name, lo, hi, value);
  return value;
}

std::string text_flag(const std::map<std::string, std::string>& given, const std::string& name,
                      const std::string& fallback) {
  const auto it = given.find(name);
  return it == given.end() ? fallback : it->second;
}

// 2127057600 -> "2,127,057,600"
std::string grouped(int64_t n) {
  std::string digits = std::to_string(n), out;
  for (size_t i = 0; i < digits.size(); ++i) {
    if (i > 0 && (digits.size() - i) % 3 == 0) out += ',';
    out += digits[i];
  }
  return out;
}

std::string flops_text(double f) { return f == 0 ? "0" : fmt::format("{:.3e}", f); }

void print_table(const nn::Accounting& a, const std::string& title) {
  const nn::TransformerConfig& c = a.config;
  fmt::print("{}: vocab {}, d_model {}, {} layers, {} heads, d_ff {}, {} attention{}, {}\n", title, c.vocab_size,
             c.d_model, c.num_layers, c.num_heads, c.d_ff, nn::attention_kind_name(c.attention),
             c.attention == nn::AttentionKind::W2 ? (c.sigma == nn::SigmaMode::Scalar ? " (scalar sigma)" : " (vector sigma)") : "",
             c.tie_embeddings ? "tied" : "untied");
  fmt::print("batch B = {}, context T = {}: {} tokens\n\n", a.batch, a.context, grouped(a.batch * a.context));
  const double forward = a.forward_flops();
  fmt::print("| {:<17} | {:>6} | {:>13} | {:>13} | {:>6} | {:>13} | {:<21} |\n", "component", "copies", "parameters",
             "forward FLOPs", "share", "backward", "backward counted as");
  fmt::print("|{:-<19}|{:->8}|{:->15}|{:->15}|{:->8}|{:->15}|{:-<23}|\n", "", ":", ":", ":", ":", ":", "");
  for (const nn::AccountingRow& r : a.rows) {
    fmt::print("| {:<17} | {:>6} | {:>13} | {:>13} | {:>5.1f}% | {:>13} | {:<21} |\n", r.name, r.copies,
               grouped(r.parameters), flops_text(r.forward_flops), 100 * r.forward_flops / forward,
               flops_text(r.backward_flops), nn::backward_rule_text(r.backward));
  }
  fmt::print("| {:<17} | {:>6} | {:>13} | {:>13} | {:>5.1f}% | {:>13} | {:<21} |\n", "total", "", grouped(a.parameters()),
             flops_text(forward), 100.0, flops_text(a.backward_flops()), "");
  fmt::print("\nforward FLOPs by part:");
  for (const char* g : {"attention projections", "attention scores", "attention values", "feed-forward", "lm_head"}) {
    fmt::print(" {} {:.1f}%{}", g, 100 * a.group_forward_flops(g) / forward, g[0] == 'l' ? "" : ",");
  }
  fmt::print("\nforward + backward: {} FLOPs ({:.2f} x parameters x tokens)\n\n", flops_text(forward + a.backward_flops()),
             (forward + a.backward_flops()) / (static_cast<double>(a.parameters()) * a.batch * a.context));
  fmt::print("| {:<16} | {:>8} | {}\n", fmt::format("memory ({})", dtype_name(a.dtype)), "GB", "counts");
  fmt::print("|{:-<18}|{:->10}|{:-<60}\n", "", ":", "");
  for (const nn::MemoryRow& m : a.memory) fmt::print("| {:<16} | {:>8.3f} | {}\n", m.name, m.bytes / 1e9, m.counts);
  fmt::print("| {:<16} | {:>8.3f} |\n", "total", a.memory_bytes() / 1e9);
}

std::string json_text(const std::string& s) {
  std::string out = "\"";
  for (char ch : s) out += ch == '"' ? std::string("\\\"") : std::string(1, ch);
  return out + "\"";
}

void print_json(const nn::Accounting& a) {
  const nn::TransformerConfig& c = a.config;
  fmt::print("{{\n  \"config\": {{\"vocab_size\": {}, \"d_model\": {}, \"num_layers\": {}, \"num_heads\": {}, "
             "\"d_ff\": {}, \"attention\": \"{}\", \"sigma\": \"{}\", \"tie_embeddings\": {}}},\n",
             c.vocab_size, c.d_model, c.num_layers, c.num_heads, c.d_ff, nn::attention_kind_name(c.attention),
             c.sigma == nn::SigmaMode::Scalar ? "scalar" : "vector", c.tie_embeddings ? "true" : "false");
  fmt::print("  \"batch\": {}, \"context\": {}, \"dtype\": \"{}\",\n  \"rows\": [\n", a.batch, a.context,
             dtype_name(a.dtype));
  for (size_t i = 0; i < a.rows.size(); ++i) {
    const nn::AccountingRow& r = a.rows[i];
    fmt::print("    {{\"name\": {}, \"group\": {}, \"copies\": {}, \"parameters\": {}, \"forward_flops\": {:.17g}, "
               "\"backward_flops\": {:.17g}, \"backward\": {}}}{}\n",
               json_text(r.name), json_text(r.group), r.copies, r.parameters, r.forward_flops, r.backward_flops,
               json_text(nn::backward_rule_text(r.backward)), i + 1 < a.rows.size() ? "," : "");
  }
  fmt::print("  ],\n  \"parameters\": {}, \"forward_flops\": {:.17g}, \"backward_flops\": {:.17g},\n  \"memory\": [\n",
             a.parameters(), a.forward_flops(), a.backward_flops());
  for (size_t i = 0; i < a.memory.size(); ++i) {
    const nn::MemoryRow& m = a.memory[i];
    fmt::print("    {{\"name\": {}, \"bytes\": {:.17g}, \"counts\": {}}}{}\n", json_text(m.name), m.bytes,
               json_text(m.counts), i + 1 < a.memory.size() ? "," : "");
  }
  fmt::print("  ],\n  \"memory_bytes\": {:.17g}\n}}\n", a.memory_bytes());
}

}  // namespace

// tasks/command_flags.h
nn::TransformerConfig model_from_flags(const std::map<std::string, std::string>& given, const char* op,
                                       std::string* title_out) {
  nn::TransformerConfig c;
  c.vocab_size = 256;
  c.d_model = 64;
  c.num_layers = 2;
  c.num_heads = 4;
  c.context_length = 128;
  std::string title = "model";
  if (given.count("preset") > 0) {
    const std::string preset = given.at("preset");
    RG_CHECK(preset == "small" || preset == "medium" || preset == "large" || preset == "xl", op,
             "--preset must be small, medium, large or xl, got '{}'", preset);
    c = nn::gpt2_config(preset);
    title = "GPT-2 " + std::string(preset == "xl" ? "XL" : preset) + " shape";
  }
  c.vocab_size = integer_flag(given, "vocab", c.vocab_size, 1, 100000000, op);
  c.d_model = integer_flag(given, "d-model", c.d_model, 1, 1000000, op);
  c.num_layers = integer_flag(given, "layers", c.num_layers, 1, 100000, op);
  c.num_heads = integer_flag(given, "heads", c.num_heads, 1, 1000000, op);
  c.d_ff = integer_flag(given, "d-ff", c.d_ff, 0, 10000000, op);
  RG_CHECK(c.d_model % c.num_heads == 0, op, "--d-model {} must be a multiple of --heads {}", c.d_model, c.num_heads);
  const std::string attention = text_flag(given, "attention", "standard");
  RG_CHECK(attention == "standard" || attention == "w2" || attention == "triple", op,
           "--attention must be standard, w2 or triple, got '{}'", attention);
  c.attention = nn::parse_attention_kind(attention);
  const std::string sigma = text_flag(given, "sigma", "scalar");
  RG_CHECK(sigma == "scalar" || sigma == "vector", op, "--sigma must be scalar or vector, got '{}'", sigma);
  c.sigma = sigma == "vector" ? nn::SigmaMode::Vector : nn::SigmaMode::Scalar;
  if (given.count("tie") > 0) c.tie_embeddings = true;
  if (title_out != nullptr) *title_out = title;
  return c;
}

int run_account(int argc, char** argv) {
  for (int i = 0; i < argc; ++i) {
    if (std::string(argv[i]) == "--help" || std::string(argv[i]) == "-h") {
      print_help();
      return 0;
    }
  }
  const std::map<std::string, std::string> given = parse_command_flags(argc, argv, kFlags, kOp);
  std::string title;
  nn::TransformerConfig c = model_from_flags(given, kOp, &title);
  const int64_t batch = integer_flag(given, "batch", 1, 1, 1000000000);
  const int64_t context = integer_flag(given, "context", c.context_length, 1, 100000000);
  c.context_length = context;  // the accounting's T; a model's longer context changes nothing counted here
  const std::string dtype = text_flag(given, "dtype", "float32");
  RG_CHECK(dtype == "float32" || dtype == "float64", kOp, "--dtype must be float32 or float64, got '{}'", dtype);
  const nn::Accounting a = nn::account(c, batch, context, dtype == "float64" ? DType::Float64 : DType::Float32);
  if (given.count("json") > 0) {
    print_json(a);
  } else {
    print_table(a, title);
  }
  return 0;
}

}  // namespace ropegrad::tasks
