#include "course/adapters.h"
#include "io/read_file.h"

#include <filesystem>
#include <fstream>
#include <memory>
#include <sstream>

#include "autograd/ops.h"
#include "nn/attention.h"
#include "io/checkpoint.h"
#include "tasks/batch.h"
#include "nn/functional.h"
#include "nn/layers.h"
#include "nn/rope.h"
#include "optim/schedule.h"
#include "nn/transformer.h"
#include "tokenizer/bpe_train.h"

namespace ropegrad::adapters {

namespace {

// The float dtype the weights come in: every module is built in it.
DType float_dtype(const Tensor& t, const char* op) {
  RG_CHECK(t.defined() && t.is_floating_point(), op, "weights must be a float tensor, got {}",
           t.defined() ? dtype_name(t.dtype()) : "an undefined tensor");
  return t.dtype();
}

// The tensor stored under `name`, or an Error naming the function and the key.
const Tensor& weight(const Weights& w, const std::string& name, const char* op) {
  auto it = w.find(name);
  RG_CHECK(it != w.end(), op, "no weight named '{}' ({} given)", name, w.size());
  return it->second;
}

// Loads `names` (module state_dict names) from w[prefix + name], strictly.
void load(nn::Module& m, const Weights& w, const std::string& prefix, const char* op) {
  nn::StateDict state;
  for (const auto& [name, p] : m.named_parameters()) state[name] = weight(w, prefix + name, op);
  m.load_state_dict(state);
}

std::shared_ptr<nn::RotaryEmbedding> make_rope(int64_t head_dim, double theta, int64_t max_seq_len, DType dtype) {
  nn::RopeConfig c;
  c.head_dim = head_dim;
  c.base = theta;
  c.max_seq_len = max_seq_len;
  return std::make_shared<nn::RotaryEmbedding>(c, dtype);  // interleaved pairs, as the course
}

// Self-attention on x (..., T, D): the leading dims are flattened into one
// batch dim for the module and restored after; positions follow them.
Tensor causal_self_attention(nn::MultiHeadAttention& mha, const Tensor& x, const Tensor& positions) {
  RG_CHECK(x.dim() >= 2, "run_multihead_self_attention", "in_features must be (..., T, d_model), got {}",
           shape_str(x.shape()));
  const Shape shape = x.shape();
  const int64_t t = x.size(-2), d = x.size(-1);
  const Tensor x3 = reshape(x, {-1, t, d});  // (N, T, D)
  nn::AttentionCall call = nn::AttentionCall::causal();
  if (positions.defined() && positions.dim() > 1 && x.dim() > 3) {
    // (..., T) positions for (..., T, D) inputs: broadcast, then flatten like x.
    Shape lead(shape.begin(), shape.end() - 1);
    call.positions = reshape(contiguous(expand(positions, lead)), {-1, t});
  } else {
    call.positions = positions;
  }
  return reshape(mha.forward(x3, call), shape);
}

nn::TransformerConfig lm_config(int64_t vocab_size, int64_t context_length, int64_t d_model, int64_t num_layers,
                                int64_t num_heads, int64_t d_ff, double theta) {
  nn::TransformerConfig c;
  c.vocab_size = vocab_size;
  c.context_length = context_length;
  c.d_model = d_model;
  c.num_layers = num_layers;
  c.num_heads = num_heads;
  c.d_ff = d_ff;
  c.rope_theta = theta;
  return c;
}

}  // namespace

Tensor run_linear(int64_t d_in, int64_t d_out, const Tensor& weights, const Tensor& in_features) {
  nn::Linear m(d_in, d_out, nullptr, float_dtype(weights, "run_linear"));
  m.load_state_dict({{"weight", weights}});
  return m.forward(in_features);
}

Tensor run_embedding(int64_t vocab_size, int64_t d_model, const Tensor& weights, const Tensor& token_ids) {
  nn::Embedding m(vocab_size, d_model, nullptr, float_dtype(weights, "run_embedding"));
  m.load_state_dict({{"weight", weights}});
  return m.forward(token_ids);
}

Tensor run_swiglu(int64_t d_model, int64_t d_ff, const Tensor& w1_weight, const Tensor& w2_weight,
                  const Tensor& w3_weight, const Tensor& in_features) {
  nn::SwiGLU m(d_model, d_ff, nullptr, float_dtype(w1_weight, "run_swiglu"));
  m.load_state_dict({{"w1.weight", w1_weight}, {"w2.weight", w2_weight}, {"w3.weight", w3_weight}});
  return m.forward(in_features);
}

Tensor run_scaled_dot_product_attention(const Tensor& Q, const Tensor& K, const Tensor& V, const Tensor& mask) {
  nn::AttentionOptions o;
  o.mask = mask;
  return nn::scaled_dot_product_attention(Q, K, V, o);
}

Tensor run_multihead_self_attention(int64_t d_model, int64_t num_heads, const Tensor& q_proj_weight,
                                    const Tensor& k_proj_weight, const Tensor& v_proj_weight,
                                    const Tensor& o_proj_weight, const Tensor& in_features) {
  nn::MultiHeadAttention mha(d_model, num_heads, nullptr, nullptr, float_dtype(q_proj_weight, "run_multihead_self_attention"));
  mha.load_state_dict({{"q_proj.weight", q_proj_weight},
                       {"k_proj.weight", k_proj_weight},
                       {"v_proj.weight", v_proj_weight},
                       {"output_proj.weight", o_proj_weight}});
  return causal_self_attention(mha, in_features, Tensor());
}

Tensor run_multihead_self_attention_with_rope(int64_t d_model, int64_t num_heads, int64_t max_seq_len, double theta,
                                              const Tensor& q_proj_weight, const Tensor& k_proj_weight,
                                              const Tensor& v_proj_weight, const Tensor& o_proj_weight,
                                              const Tensor& in_features, const Tensor& token_positions) {
  const DType dtype = float_dtype(q_proj_weight, "run_multihead_self_attention_with_rope");
  const int64_t head_dim = nn::attention_head_dim(d_model, num_heads, nullptr, "run_multihead_self_attention_with_rope");
  nn::MultiHeadAttention mha(d_model, num_heads, make_rope(head_dim, theta, max_seq_len, dtype), nullptr, dtype);
  mha.load_state_dict({{"q_proj.weight", q_proj_weight},
                       {"k_proj.weight", k_proj_weight},
                       {"v_proj.weight", v_proj_weight},
                       {"output_proj.weight", o_proj_weight}});
  return causal_self_attention(mha, in_features, token_positions);
}

Tensor run_rope(int64_t d_k, double theta, int64_t max_seq_len, const Tensor& in_query_or_key,
                const Tensor& token_positions) {
  RG_CHECK(in_query_or_key.defined() && in_query_or_key.is_floating_point(), "run_rope",
           "in_query_or_key must be a float tensor");
  auto rope = make_rope(d_k, theta, max_seq_len, in_query_or_key.dtype());
  return rope->forward(in_query_or_key, token_positions);
}

Tensor run_transformer_block(int64_t d_model, int64_t num_heads, int64_t d_ff, int64_t max_seq_len, double theta,
                             const Weights& weights, const Tensor& in_features) {
  const DType dtype = float_dtype(weight(weights, "ln1.weight", "run_transformer_block"), "run_transformer_block");
  const nn::TransformerConfig c = lm_config(1, max_seq_len, d_model, 1, num_heads, d_ff, theta);
  const int64_t head_dim = nn::attention_head_dim(d_model, num_heads, nullptr, "run_transformer_block");
  nn::TransformerBlock block(c, make_rope(head_dim, theta, max_seq_len, dtype), nullptr, dtype);
  load(block, weights, "", "run_transformer_block");
  nn::AttentionCall call = nn::AttentionCall::causal();
  return block.forward(in_features, call);
}

Tensor run_transformer_lm(int64_t vocab_size, int64_t context_length, int64_t d_model, int64_t num_layers,
                          int64_t num_heads, int64_t d_ff, double rope_theta, const Weights& weights,
                          const Tensor& in_indices) {
  const DType dtype =
      float_dtype(weight(weights, "token_embeddings.weight", "run_transformer_lm"), "run_transformer_lm");
  nn::TransformerLM lm(lm_config(vocab_size, context_length, d_model, num_layers, num_heads, d_ff, rope_theta),
                       nullptr, dtype);
  load(lm, weights, "", "run_transformer_lm");
  return lm.forward(in_indices);
}

Tensor run_rmsnorm(int64_t d_model, double eps, const Tensor& weights, const Tensor& in_features) {
  nn::RMSNorm m(d_model, eps, float_dtype(weights, "run_rmsnorm"));
  m.load_state_dict({{"weight", weights}});
  return m.forward(in_features);
}

Tensor run_silu(const Tensor& in_features) { return silu(in_features); }

std::pair<Tensor, Tensor> run_get_batch(const Tensor& dataset, int64_t batch_size, int64_t context_length,
                                        Generator& generator) {
  return nn::get_batch(dataset, batch_size, context_length, generator);
}

std::pair<Tensor, Tensor> run_get_batch(const nn::TokenMemmap& dataset, int64_t batch_size, int64_t context_length,
                                        Generator& generator) {
  return nn::get_batch(dataset, batch_size, context_length, generator);
}

Tensor run_softmax(const Tensor& in_features, int64_t dim) { return softmax(in_features, dim); }

Tensor run_cross_entropy(const Tensor& inputs, const Tensor& targets) { return nn::cross_entropy(inputs, targets); }

void run_gradient_clipping(const std::vector<Tensor>& parameters, double max_l2_norm) {
  nn::clip_grad_norm_(parameters, max_l2_norm);
}

double run_get_lr_cosine_schedule(int64_t it, double max_learning_rate, double min_learning_rate,
                                  int64_t warmup_iters, int64_t cosine_cycle_iters) {
  return nn::cosine_lr(it, max_learning_rate, min_learning_rate, warmup_iters, cosine_cycle_iters);
}

void run_save_checkpoint(const nn::Module& model, const nn::Optimizer& optimizer, int64_t iteration,
                         const std::string& out) {
  nn::save_checkpoint(out, model, optimizer.state_dict(), iteration);
}

int64_t run_load_checkpoint(const std::string& src, nn::Module& model, nn::Optimizer& optimizer,
                            nn::OptimizerSettingsOnLoad on_settings) {
  nn::StateDict state;
  const int64_t iteration = nn::load_checkpoint(src, model, &state);
  optimizer.load_state_dict(state, on_settings);
  return iteration;
}

std::pair<Vocab, Merges> run_train_bpe(const std::string& input_path, int64_t vocab_size,
                                       const std::vector<std::string>& special_tokens) {
  std::error_code error;
  RG_CHECK(std::filesystem::is_regular_file(input_path, error), "run_train_bpe", "cannot read '{}': not a file",
           input_path);
  const tok::BpeModel model = tok::train_bpe(io::read_file(input_path, "run_train_bpe"), vocab_size, special_tokens);
  Vocab vocab;
  for (size_t id = 0; id < model.vocab.size(); ++id) vocab.emplace(static_cast<int32_t>(id), model.vocab[id]);
  Merges merges;
  for (const auto& [a, b] : model.merges) merges.emplace_back(model.vocab[a], model.vocab[b]);
  return {vocab, merges};
}

tok::Tokenizer get_tokenizer(const Vocab& vocab, const Merges& merges, const std::vector<std::string>& special_tokens) {
  std::vector<std::string> by_id;
  for (const auto& [id, bytes] : vocab) {
    // The map is sorted: the first id that is not its position is a gap (or negative).
    RG_CHECK(id == static_cast<int32_t>(by_id.size()), "get_tokenizer",
             "vocab ids must be 0..{} without gaps, but id {} comes {}", vocab.size() - 1, id,
             by_id.empty() ? std::string("first") : "after " + std::to_string(by_id.size() - 1));
    by_id.push_back(bytes);
  }
  return tok::Tokenizer(tok::bpe_model_from_bytes(std::move(by_id), merges, special_tokens, "get_tokenizer"));
}

}  // namespace ropegrad::adapters

namespace ropegrad::adapters {

void encode_iterable(const tok::Tokenizer& tokenizer, std::istream& in, const std::function<void(int32_t)>& emit) {
  tokenizer.encode_stream(in, [&](const std::vector<int32_t>& ids) {
    for (int32_t id : ids) emit(id);
  });
}

std::vector<int32_t> encode_iterable(const tok::Tokenizer& tokenizer, std::istream& in) {
  std::vector<int32_t> ids;
  encode_iterable(tokenizer, in, [&](int32_t id) { ids.push_back(id); });
  return ids;
}

}  // namespace ropegrad::adapters
