#include "cli/model_flags.h"

#include "nn/accounting.h"
#include "nn/attention_variants.h"
#include "tensor/error.h"

namespace ropegrad::tasks {

std::vector<flags::Flag> shape_flags() {
  using namespace flags;
  return {
      choice("preset", {"small", "medium", "large", "xl"}, "", "GPT-2's shape (vocab 50257, context 1024, d_ff 4 D)"),
      whole("vocab", 1, kMaxVocab, "256", "vocabulary size V"),
      whole("d-model", 1, kMaxDModel, "64", "model width D"),
      whole("layers", 1, kMaxLayers, "2", "transformer blocks L"),
      whole("heads", 1, kMaxHeads, "4", "attention heads H"),
      whole("d-ff", 0, kMaxDff, "0", "SwiGLU width (0: 8/3 D rounded up to 64)"),
      choice("attention", nn::attention_variant_names(), nn::attention_variants().front().name, ""),
      choice("sigma", {"scalar", "vector"}, "scalar", "W2's sigma"),
      on_off("tie", "tie the output head to the embedding"),
  };
}

nn::TransformerConfig model_from_flags(const flags::Values& v, std::string* title) {
  nn::TransformerConfig c;
  c.vocab_size = 256;
  c.d_model = 64;
  c.num_layers = 2;
  c.num_heads = 4;
  c.context_length = 128;
  if (v.given("preset")) {
    const std::string& preset = v.text("preset");
    c = nn::gpt2_config(preset);
    if (title != nullptr) *title = "GPT-2 " + std::string(preset == "xl" ? "XL" : preset) + " shape";
  } else if (title != nullptr) {
    *title = "model";
  }
  // A flag given changes the preset's value; one not given keeps it.
  const auto whole = [&](const char* name, int64_t fallback) { return v.given(name) ? v.whole(name) : fallback; };
  c.vocab_size = whole("vocab", c.vocab_size);
  c.d_model = whole("d-model", c.d_model);
  c.num_layers = whole("layers", c.num_layers);
  c.num_heads = whole("heads", c.num_heads);
  c.d_ff = whole("d-ff", c.d_ff);
  RG_CHECK(c.d_model % c.num_heads == 0, v.command(), "--d-model {} must be a multiple of --heads {}", c.d_model,
           c.num_heads);
  c.attention = nn::parse_attention_kind(v.text("attention"));
  c.sigma = v.text("sigma") == "vector" ? nn::SigmaMode::Vector : nn::SigmaMode::Scalar;
  if (v.on("tie")) c.tie_embeddings = true;
  return c;
}

}  // namespace ropegrad::tasks
