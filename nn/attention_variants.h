// The attention variants, named in one place. Every reader of the list (the CLI's flags and their
// --help, run files, compare, sweeps, accounting, the gradcheck catalogue, the tests and the
// benchmarks) loops over attention_variants() or looks a name up here; nothing else spells the
// names. docs/adding-an-attention-variant.md says what a new entry needs, and
// tests/test_attention_variants.cpp checks that every entry has it.
#pragma once

#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "nn/accounting.h"
#include "nn/transformer.h"

namespace ropegrad::nn {

struct AttentionVariant {
  AttentionKind kind;       // what TransformerConfig::attention holds
  const char* name;         // as the CLI, run files and reports spell it: "w2"
  const char* description;  // one line
  const char* module;       // its module's cases in the gradcheck catalogue (catalog/): "w2_attention"
  const char* chapter;      // the book's page on it: "docs/15-w2-attention.md"
  const char* fixture;      // a PyTorch parity fixture under tests/fixtures, without ".x.npy": "variants/w2_scalar"
  // One block's attention: config.d_model, num_heads, dropout (and sigma for W2); rope is null for NoPE.
  std::shared_ptr<AttentionLayer> (*make)(const TransformerConfig& config, std::shared_ptr<RotaryEmbedding> rope,
                                          Generator* gen, DType dtype);
  // What it adds to standard attention's resource accounting (nn/accounting.h).
  AttentionAccounting (*accounting)(const TransformerConfig& config);
};

// Every variant, in the order reports list them; the first is the default (standard).
const std::vector<AttentionVariant>& attention_variants();
const AttentionVariant& attention_variant(AttentionKind kind);
const AttentionVariant* find_attention_variant(std::string_view name);  // nullptr for an unknown name
std::vector<std::string> attention_variant_names();                    // {"standard", "w2", "triple"}
std::vector<AttentionKind> attention_kinds();
// The names in a sentence: "standard, w2 or triple" (last_separator " or ") or "standard | w2 | triple".
std::string attention_variant_list(std::string_view separator, std::string_view last_separator);

}  // namespace ropegrad::nn
