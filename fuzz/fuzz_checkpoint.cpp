// libFuzzer target: nn::load_checkpoint of arbitrary bytes into a small
// TransformerLM and its optimizer state (the shape checks, the metadata).
#include "fuzz/fuzz_util.h"
#include "io/checkpoint.h"
#include "nn/transformer.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string& path = ropegrad::fuzz::write_input(data, size, ".ckpt.safetensors");
  static ropegrad::nn::TransformerLM* model = [] {
    ropegrad::nn::TransformerConfig c;  // the corpus's model (fuzz/make_corpus.cpp)
    c.vocab_size = 11, c.context_length = 8, c.d_model = 16, c.num_layers = 1, c.num_heads = 2;
    return new ropegrad::nn::TransformerLM(c);
  }();
  try {
    ropegrad::nn::StateDict optimizer;
    (void)ropegrad::nn::load_checkpoint(path, *model, &optimizer);
  } catch (const ropegrad::Error&) {
  }
  return 0;
}
