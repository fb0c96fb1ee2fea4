// CS336 assignment 1's adapter entry points, in C++.
//
// The course's Python tests call functions such as run_rmsnorm(d_model, eps,
// weights, in_features) in tests/adapters.py, and the learner makes each one
// call their own code. These are the same entry points over ropegrad, with
// the course's argument names, weight names ("attn.q_proj.weight",
// "attn.output_proj.weight", "ln1.weight", "ffn.w1.weight", ...) and
// semantics: multi-head self-attention is causal; token positions of shape
// (T), (1, T), (B, T) or (..., T) broadcast; a boolean mask is true where a
// query may attend. Every tensor keeps the dtype it is given (float32 as the
// course, or float64 for tight checks). course/adapters_test.cpp checks each
// one against tests/fixtures/adapters/, written by
// tests/fixtures/make_adapter_fixtures.py from an independent PyTorch reference.
#pragma once

#include <cstdint>
#include <functional>
#include <istream>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "nn/module.h"
#include "optim/optim.h"
#include "io/token_memmap.h"
#include "tensor/random.h"
#include "tensor/tensor.h"
#include "tokenizer/tokenizer.h"

namespace ropegrad::adapters {

// Weights by the course's names, e.g. "layers.0.attn.q_proj.weight".
using Weights = std::map<std::string, Tensor>;

// weights (d_out, d_in), in_features (..., d_in) -> (..., d_out)
Tensor run_linear(int64_t d_in, int64_t d_out, const Tensor& weights, const Tensor& in_features);

// weights (vocab_size, d_model), token_ids (...) int64 -> (..., d_model)
Tensor run_embedding(int64_t vocab_size, int64_t d_model, const Tensor& weights, const Tensor& token_ids);

// w1_weight (d_ff, d_model), w2_weight (d_model, d_ff), w3_weight (d_ff, d_model); in (..., d_model)
Tensor run_swiglu(int64_t d_model, int64_t d_ff, const Tensor& w1_weight, const Tensor& w2_weight,
                  const Tensor& w3_weight, const Tensor& in_features);

// Q (..., queries, d_k), K (..., keys, d_k), V (..., keys, d_v), mask (..., queries, keys) bool
// (true = may attend) or undefined -> (..., queries, d_v)
Tensor run_scaled_dot_product_attention(const Tensor& Q, const Tensor& K, const Tensor& V,
                                        const Tensor& mask = Tensor());

// Causal multi-head self-attention without RoPE. Projections (d_model, d_model); in (..., T, d_model).
Tensor run_multihead_self_attention(int64_t d_model, int64_t num_heads, const Tensor& q_proj_weight,
                                    const Tensor& k_proj_weight, const Tensor& v_proj_weight,
                                    const Tensor& o_proj_weight, const Tensor& in_features);

// The same with RoPE (theta, tables of max_seq_len) on queries and keys;
// token_positions (..., T) int64, undefined for 0..T-1.
Tensor run_multihead_self_attention_with_rope(int64_t d_model, int64_t num_heads, int64_t max_seq_len, double theta,
                                              const Tensor& q_proj_weight, const Tensor& k_proj_weight,
                                              const Tensor& v_proj_weight, const Tensor& o_proj_weight,
                                              const Tensor& in_features, const Tensor& token_positions = Tensor());

// in_query_or_key (..., T, d_k), token_positions (..., T) -> rotated, same shape
Tensor run_rope(int64_t d_k, double theta, int64_t max_seq_len, const Tensor& in_query_or_key,
                const Tensor& token_positions);

// The pre-norm block; weights "attn.{q,k,v,output}_proj.weight", "ln1.weight",
// "ffn.w{1,2,3}.weight", "ln2.weight". in_features (B, T, d_model).
Tensor run_transformer_block(int64_t d_model, int64_t num_heads, int64_t d_ff, int64_t max_seq_len, double theta,
                             const Weights& weights, const Tensor& in_features);

// The LM; weights "token_embeddings.weight", "layers.{i}.<block names>",
// "ln_final.weight", "lm_head.weight". in_indices (B, T) int64 -> logits (B, T, vocab_size).
Tensor run_transformer_lm(int64_t vocab_size, int64_t context_length, int64_t d_model, int64_t num_layers,
                          int64_t num_heads, int64_t d_ff, double rope_theta, const Weights& weights,
                          const Tensor& in_indices);

// weights (d_model), in (..., d_model)
Tensor run_rmsnorm(int64_t d_model, double eps, const Tensor& weights, const Tensor& in_features);

Tensor run_silu(const Tensor& in_features);

// dataset 1-D int64; returns (x, y), each (batch_size, context_length), y = x shifted by one.
std::pair<Tensor, Tensor> run_get_batch(const Tensor& dataset, int64_t batch_size, int64_t context_length,
                                        Generator& generator);
// The same over a memory-mapped .npy of uint16, int32 or int64 ids (the
// course's np.memmap): the same draws, so the same batch as the int64 tensor
// of the same ids. A negative id in a sampled window is an Error.
std::pair<Tensor, Tensor> run_get_batch(const nn::TokenMemmap& dataset, int64_t batch_size, int64_t context_length,
                                        Generator& generator);

Tensor run_softmax(const Tensor& in_features, int64_t dim);

// inputs (batch, vocab) or (..., vocab) logits, targets (...) int64 -> mean loss (0-d)
Tensor run_cross_entropy(const Tensor& inputs, const Tensor& targets);

// Scales every .grad in place so that their joint L2 norm is at most max_l2_norm.
void run_gradient_clipping(const std::vector<Tensor>& parameters, double max_l2_norm);

// get_adamw_cls(): the optimizer class. Its settings are named:
// AdamW(params, {.lr = 1e-3, .betas = {0.9, 0.95}, .eps = 1e-8, .weight_decay = 0.1}).
using AdamW = nn::AdamW;

double run_get_lr_cosine_schedule(int64_t it, double max_learning_rate, double min_learning_rate,
                                  int64_t warmup_iters, int64_t cosine_cycle_iters);

// The model's and the optimizer's state and the iteration, in one file.
void run_save_checkpoint(const nn::Module& model, const nn::Optimizer& optimizer, int64_t iteration,
                         const std::string& out);
// Restores both and returns the iteration. By default the optimizer's
// settings must be the saved ones (an Error names each that differs);
// OptimizerSettingsOnLoad::take_saved adopts the saved settings, as torch's
// optimizer.load_state_dict does, and keep_mine keeps the optimizer's own. A
// checkpoint without saved settings loads and the optimizer keeps its own.
int64_t run_load_checkpoint(const std::string& src, nn::Module& model, nn::Optimizer& optimizer,
                            nn::OptimizerSettingsOnLoad on_settings = nn::OptimizerSettingsOnLoad::must_match);

// The course's tokenizer types: vocab id -> token bytes, merges as byte pairs by rank.
using Vocab = std::map<int32_t, std::string>;
using Merges = std::vector<std::pair<std::string, std::string>>;

// Trains a byte-level BPE on the file at input_path (tokenizer/bpe_train.h):
// vocab_size = 256 bytes + the special tokens + the merges. Ids: 0..255 the
// bytes, then the specials in order, then one per merge.
std::pair<Vocab, Merges> run_train_bpe(const std::string& input_path, int64_t vocab_size,
                                       const std::vector<std::string>& special_tokens);

// A tokenizer over vocab (ids 0..n-1, each once) and merges; each special
// token that is not yet in vocab is added with the next free id, as the
// course's Tokenizer does. Its encode is safe to call from several threads.
tok::Tokenizer get_tokenizer(const Vocab& vocab, const Merges& merges,
                             const std::vector<std::string>& special_tokens = {});

// CS336's Tokenizer.encode_iterable(f): the ids of everything `in` holds,
// read a chunk at a time and handed to `emit` as they are found, with
// memory bounded by the chunk, not the file (Tokenizer::encode_stream); the
// ids equal encode() of the whole text.
void encode_iterable(const tok::Tokenizer& tokenizer, std::istream& in,
                     const std::function<void(int32_t)>& emit);
// The same, collected.
std::vector<int32_t> encode_iterable(const tok::Tokenizer& tokenizer, std::istream& in);

}  // namespace ropegrad::adapters
