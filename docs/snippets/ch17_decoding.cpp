// The experiments chapter 17 (the language model and decoding) shows, lettered as in the chapter.
//   snippet_ch17_decoding sampling  C. sample_token's frequencies for temperature and top-p
//   snippet_ch17_decoding kv-cache  B. feeding a sequence in chunks through the KV cache
// (The parameter table is snippet_parameter_counts.)
#include <cstdint>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "autograd/ops.h"
#include "nn/transformer.h"

using namespace ropegrad;
using namespace ropegrad::nn;

namespace {

std::string three_decimals(const std::vector<double>& values) {
  std::string out;
  for (double v : values) out += fmt::format(" {:.3f}", v);
  return out;
}

void sampling() {
  const Tensor logits = tensor({2.0, 1.0, 0.5, 0.0, -1.0}, DType::Float64);
  const int draws = 100000;
  for (double temperature : {1.0, 0.5}) {
    for (double top_p : {1.0, 0.9, 0.5}) {
      Generator gen(0);
      std::vector<double> freq(5, 0.0);
      for (int n = 0; n < draws; ++n) freq[sample_token(logits, temperature, top_p, gen)] += 1.0 / draws;
      fmt::print("C. temperature {:.1f} top_p {:.1f}: frequencies{}\n", temperature, top_p, three_decimals(freq));
    }
  }
  for (double temperature : {1.0, 0.5}) {
    fmt::print("C. softmax(logits / {:.1f}) ={}\n", temperature,
               three_decimals(softmax(logits / temperature, 0).to_vector()));
  }
}

void kv_cache() {
  TransformerConfig config;
  config.vocab_size = 16;
  config.context_length = 16;
  config.d_model = 32;
  config.num_heads = 4;
  config.num_layers = 2;
  Generator gen(0);
  TransformerLM model(config, &gen, DType::Float64);
  const std::vector<int64_t> tokens{3, 1, 4, 1, 5, 9, 2, 6, 5, 3};
  NoGradGuard no_grad;
  const Tensor full_logits = model.forward(tensor_i64(tokens, {1, 10}));

  std::vector<KVCache> caches(config.num_layers);
  std::vector<Tensor> pieces;
  int64_t fed = 0;
  for (int64_t chunk : {6, 1, 3}) {
    const std::vector<int64_t> fresh(tokens.begin() + fed, tokens.begin() + fed + chunk);
    pieces.push_back(model.forward(tensor_i64(fresh, {1, chunk}), &caches, arange(fed, fed + chunk)));
    fed += chunk;
    fmt::print("B. fed {} tokens: cache length {} (layer 0 k [{}])\n", chunk, caches[0].length(),
               fmt::join(caches[0].k.shape(), ", "));
  }
  fmt::print("B. max |cached logits - full logits| = {:.2e}\n", max(abs(cat(pieces, 1) - full_logits)).item());
}

}  // namespace

int main(int argc, char** argv) {
  const std::string what = argc > 1 ? argv[1] : "";
  if (what == "sampling") {
    sampling();
  } else if (what == "kv-cache") {
    kv_cache();
  } else {
    fmt::print(stderr, "usage: snippet_ch17_decoding sampling | kv-cache\n");
    return 2;
  }
  return 0;
}
