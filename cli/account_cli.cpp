// `ropegrad account`: parameters, matmul FLOPs and training memory of a model shape
// (nn/accounting.h), as a table or as JSON.
#include <cstdio>
#include <optional>
#include <string>
#include <vector>

#include "nn/accounting.h"
#include "cli/commands.h"
#include "cli/model_flags.h"
#include "tensor/error.h"

namespace ropegrad::tasks {

namespace {

const flags::Command& command() {
  static const flags::Command c = [] {
    using namespace flags;
    Command c{"ropegrad account", "",
              "Parameters, matmul FLOPs of a forward and a backward pass by component, and the memory of a\n"
              "training step with AdamW, counted from the shapes (nn/accounting.h). Model flags given with\n"
              "--preset change its shape.",
              shape_flags()};
    c.flags.insert(c.flags.end(), {
        whole("batch", 1, kMaxBatch, "1", "sequences B"),
        whole("context", 1, kMaxContext, "128", "tokens per sequence T (a preset: 1024)"),
        choice("dtype", {"float32", "float64"}, "float32", "bytes per value of the memory rows"),
        on_off("json", "print JSON instead of the table"),
    });
    return c;
  }();
  return c;
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

// The accounting the flags ask for; `title`: the table's title.
nn::Accounting account_of(const flags::Values& v, std::string* title) {
  nn::TransformerConfig c = model_from_flags(v, title);
  const int64_t context = v.given("context") || !v.given("preset") ? v.whole("context") : c.context_length;
  c.context_length = context;  // the accounting's T; a model's longer context changes nothing counted here
  return nn::account(c, v.whole("batch"), context, v.text("dtype") == "float64" ? DType::Float64 : DType::Float32);
}

}  // namespace

const flags::Command& account_command() { return command(); }

void check_account(const std::vector<std::string>& words) {
  if (const std::optional<flags::Values> v = flags::read(command(), words)) account_of(*v, nullptr);
}

int run_account(int argc, char** argv) {
  const std::optional<flags::Values> v = flags::read(command(), argc, argv);
  if (!v) return 0;  // --help
  std::string title;
  const nn::Accounting a = account_of(*v, &title);
  if (v->on("json")) {
    print_json(a);
  } else {
    print_table(a, title);
  }
  return 0;
}

}  // namespace ropegrad::tasks
