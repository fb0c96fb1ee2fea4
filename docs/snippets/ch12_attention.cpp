// The outputs chapter 12 (softmax, masks and attention) shows, printed by the
// library itself; the docs test compares them with the chapter. One mode per block:
//   snippet_ch12_attention softmax | causal-offset | masked-row | split-heads | kv-cache
#include <iostream>
#include <memory>
#include <string>

#include <fmt/format.h>

#include "autograd/ops.h"
#include "nn/attention.h"
#include "nn/functional.h"

using namespace ropegrad;

int main(int argc, char** argv) {
  const std::string what = argc > 1 ? argv[1] : "";
  if (what == "softmax") {
    // logits of 1000 in float32: the max is subtracted first
    std::cout << "softmax([1000, 1001, 1002]) = " << softmax(tensor({1000.0, 1001.0, 1002.0}), 0) << "\n";
  } else if (what == "causal-offset") {
    // 2 queries continuing 3 cached keys: query i sees keys 0 .. 3 + i
    Generator gen(0);
    Tensor q = randn({1, 1, 2, 4}, DType::Float64, &gen);
    Tensor k = randn({1, 1, 5, 4}, DType::Float64, &gen);
    Tensor v = randn({1, 1, 5, 4}, DType::Float64, &gen);
    nn::AttentionOptions options;
    options.causal = true;
    options.causal_offset = 3;
    Tensor weights;
    (void)nn::scaled_dot_product_attention(q, k, v, options, &weights);
    std::cout << "causal, Nq=2, Nk=5, causal_offset=3: weights =\n" << weights << "\n";
  } else if (what == "masked-row") {
    // row 0 may attend keys 0 and 1, row 1 no key at all: zeros, not NaN
    Generator gen(1);
    Tensor q = randn({1, 1, 2, 3}, DType::Float64, &gen);
    Tensor k = randn({1, 1, 5, 3}, DType::Float64, &gen);
    Tensor v = randn({1, 1, 5, 3}, DType::Float64, &gen);
    nn::AttentionOptions options;
    options.mask = tensor_bool({true, true, false, false, false,  //
                                false, false, false, false, false},
                               {2, 5});
    Tensor weights;
    Tensor out = nn::scaled_dot_product_attention(q, k, v, options, &weights);
    std::cout << "bool mask, row 1 fully masked: weights =\n" << weights << "\nout =\n" << out << "\n";
  } else if (what == "split-heads") {
    // (B, T, D) = (2, 7, 32) into 4 heads: a view
    Tensor x = zeros({2, 7, 32});
    Tensor heads = nn::split_heads(x, 4);
    std::cout << "split_heads " << shape_str(heads.shape()) << " strides " << shape_str(heads.strides())
              << " shares storage " << heads.shares_storage_with(x) << "\n";
  } else if (what == "kv-cache") {
    // a 7-token sequence in chunks of 4, 1 and 2 with a KVCache, against one causal pass
    Generator gen(0);
    nn::RopeConfig config;
    config.head_dim = 8;
    config.max_seq_len = 4;
    auto rope = std::make_shared<nn::RotaryEmbedding>(config, DType::Float64);
    nn::MultiHeadAttention mha(32, 4, rope, &gen, DType::Float64);
    Tensor x = randn({2, 7, 32}, DType::Float64, &gen);
    nn::KVCache cache;
    nn::AttentionCall call = nn::AttentionCall::causal();
    call.cache = &cache;
    std::vector<Tensor> outs;
    int64_t start = 0;
    for (int64_t chunk : {4, 1, 2}) {
      outs.push_back(mha.forward(narrow(x, 1, start, chunk), call));
      start += chunk;
      std::cout << "after a chunk of " << chunk << ": cache length " << cache.length() << ", k "
                << shape_str(cache.k.shape()) << "\n";
    }
    std::cout << "RoPE table rows: " << rope->cached_length() << "\n";
    nn::AttentionCall full_call = nn::AttentionCall::causal();
    Tensor weights;
    full_call.weights = &weights;
    Tensor full = mha.forward(x, full_call);
    // the two differ in the last bits only (how BLAS sums depends on the GEMM shapes)
    const double diff = max(abs(cat(outs, 1) - full)).item();
    std::cout << "max |cached - full| " << (diff < 1e-14 ? std::string("< 1e-14") : fmt::format("= {:.2e}", diff))
              << "\n";
    std::cout << "weights shape " << shape_str(weights.shape()) << "\n";
  } else {
    std::cerr << "usage: snippet_ch12_attention softmax | causal-offset | masked-row | split-heads | kv-cache\n";
    return 2;
  }
  return 0;
}
