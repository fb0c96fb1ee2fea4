// The attention variants' registry: one entry per variant (docs/adding-an-attention-variant.md).
#include "nn/attention_variants.h"

#include "tensor/error.h"

namespace ropegrad::nn {

namespace {

std::shared_ptr<AttentionLayer> make_standard(const TransformerConfig& c, std::shared_ptr<RotaryEmbedding> rope,
                                              Generator* gen, DType dtype) {
  return std::make_shared<MultiHeadAttention>(c.d_model, c.num_heads, std::move(rope), gen, dtype, c.dropout);
}

std::shared_ptr<AttentionLayer> make_w2(const TransformerConfig& c, std::shared_ptr<RotaryEmbedding> rope,
                                        Generator* gen, DType dtype) {
  return std::make_shared<W2Attention>(c.d_model, c.num_heads, std::move(rope), c.sigma, gen, dtype, c.dropout);
}

std::shared_ptr<AttentionLayer> make_triple(const TransformerConfig& c, std::shared_ptr<RotaryEmbedding> rope,
                                            Generator* gen, DType dtype) {
  return std::make_shared<TripleAttention>(c.d_model, c.num_heads, std::move(rope), gen, dtype, c.dropout);
}

}  // namespace

const std::vector<AttentionVariant>& attention_variants() {
  static const std::vector<AttentionVariant> variants = {
      {AttentionKind::Standard, "standard", "dot-product attention with RoPE on q and k", "multihead_attention",
       "docs/12-attention.md", "attention/mha_causal", make_standard, standard_accounting},
      {AttentionKind::W2, "w2", "Wasserstein-2 distance between Gaussian tokens (RoPE on the means)", "w2_attention",
       "docs/15-w2-attention.md", "variants/w2_scalar", make_w2, w2_accounting},
      {AttentionKind::Triple, "triple", "triple product: the Gram determinant of q, k and a reference r",
       "triple_attention", "docs/16-triple-product-attention.md", "variants/triple", make_triple, triple_accounting},
  };
  return variants;
}

const AttentionVariant& attention_variant(AttentionKind kind) {
  for (const AttentionVariant& v : attention_variants()) {
    if (v.kind == kind) return v;
  }
  fail("attention", "attention kind {} has no entry in nn/attention_variants.cpp", static_cast<int>(kind));
}

const AttentionVariant* find_attention_variant(std::string_view name) {
  for (const AttentionVariant& v : attention_variants()) {
    if (name == v.name) return &v;
  }
  return nullptr;
}

std::vector<std::string> attention_variant_names() {
  std::vector<std::string> names;
  for (const AttentionVariant& v : attention_variants()) names.emplace_back(v.name);
  return names;
}

std::vector<AttentionKind> attention_kinds() {
  std::vector<AttentionKind> kinds;
  for (const AttentionVariant& v : attention_variants()) kinds.push_back(v.kind);
  return kinds;
}

std::string attention_variant_list(std::string_view separator, std::string_view last_separator) {
  const std::vector<std::string> names = attention_variant_names();
  std::string list;
  for (size_t i = 0; i < names.size(); ++i) {
    if (i > 0) list += i + 1 == names.size() ? last_separator : separator;
    list += names[i];
  }
  return list;
}

}  // namespace ropegrad::nn
