// Resource accounting of a transformer LM (docs/17-language-model-and-decoding.md, resource accounting):
// parameters, the matmul FLOPs of a forward and a backward pass by component, and the memory of a
// training step with AdamW, for any TransformerConfig at batch B and context T (GPT-2 small to XL
// included) without building the model.
//
// FLOPs: 2 m n k for each (m, k) x (k, n) product, the products the materialised attention kernels
// hand to BLAS (every (query, key) pair, the masked half too; the tiled kernels of long contexts skip
// masked tiles and recompute scores in the backward: nn/attention_path.h). Element-wise work (norms,
// softmax, RoPE, the SwiGLU gate, AdamW) is not counted.
#pragma once

#include <string>
#include <vector>

#include "nn/transformer.h"

namespace ropegrad::nn {

// The forward matmul FLOPs of one component: for a block's parts ("attn.q_proj", ...) those of one
// layer, for "lm_head" those of the model.
struct ComponentFlops {
  std::string name;
  double flops = 0;
};

// The forward matmul FLOPs of every component on `batch` sequences of `context` tokens, in model
// order: the parts of one block, then "lm_head". Standard attention's parts are the exercise
// ex17-flops; the other variants add their projections and widen or double the score products
// (their AttentionAccounting). Errors name the value that is out of range.
std::vector<ComponentFlops> forward_flops_by_component(const TransformerConfig& config, int64_t batch,
                                                       int64_t context);

// How a row's backward is counted, as a multiple of its forward.
enum class BackwardRule {
  None,         // no product: a lookup (the embedding's gradient is a scatter-add) or element-wise
  InputWeight,  // y = x W^T: dX = dY W and dW = dY^T X, two products the size of the forward's
  TwoOperands,  // an attention product: dA and dB, two products the size of the forward's
  Recompute,    // triple scores: q k^T and r k^T recomputed, then four products of the same size
};
double backward_factor(BackwardRule rule);  // 0, 2, 2 or 3
const char* backward_rule_text(BackwardRule rule);

// What an attention variant adds to standard attention's accounting; each registry entry
// (nn/attention_variants.h) points to its function below.
struct ExtraProjection {
  std::string name;  // "attn.r_proj"
  int64_t outputs;   // (D -> outputs) per layer: D outputs parameters, 2 (B T) D outputs forward FLOPs
};
struct AttentionAccounting {
  std::vector<ExtraProjection> projections;  // beyond q, k, v and output_proj; listed after attn.v_proj
  double score_flops_factor = 1;             // attn.scores' FLOPs over standard's q k^T
  int64_t score_parameters = 0;              // per layer (W2: the temperatures tau)
  BackwardRule score_backward = BackwardRule::TwoOperands;
  // Values saved for the backward beyond what every variant keeps (saved_activation_values):
  double saved_per_token = 0;  // per token and layer
  double saved_per_layer = 0;
  std::string saved;           // what they are
};
AttentionAccounting standard_accounting(const TransformerConfig& config);
AttentionAccounting w2_accounting(const TransformerConfig& config);
AttentionAccounting triple_accounting(const TransformerConfig& config);

// One row of the table: a component of every layer (copies = num_layers) or of the model (copies = 1).
struct AccountingRow {
  std::string name;   // "token_embeddings", "attn.q_proj", ..., "lm_head"
  std::string group;  // "embedding", "attention projections", "attention scores", "attention values",
                      // "feed-forward", "norms", "lm_head"
  int64_t copies = 1;
  int64_t parameters = 0;     // all copies
  double forward_flops = 0;   // all copies
  double backward_flops = 0;  // all copies
  BackwardRule backward = BackwardRule::None;
};

// Bytes of one training step's state, each with what it counts.
struct MemoryRow {
  std::string name;  // "parameters", "gradients", "AdamW state", "activations"
  double bytes = 0;
  std::string counts;
};

struct Accounting {
  TransformerConfig config;  // d_ff resolved
  int64_t batch = 1, context = 1;
  DType dtype = DType::Float32;
  std::vector<AccountingRow> rows;
  std::vector<MemoryRow> memory;

  int64_t parameters() const;
  double forward_flops() const;
  double backward_flops() const;
  double memory_bytes() const;  // the sum of the memory rows
  double group_forward_flops(const std::string& group) const;
};

// The accounting of `config` on `batch` sequences of `context` tokens (context <= the config's
// context_length), memory in `dtype` (float32 or float64).
Accounting account(const TransformerConfig& config, int64_t batch, int64_t context, DType dtype = DType::Float32);

// Values autograd keeps for the backward of one training forward (loss included), at (B, T):
// per token and layer, per layer, and per token after the blocks. Counted from what each op saves
// (nn/accounting.cpp lists them); the test compares it with the bytes really held.
double saved_activation_values(const TransformerConfig& config, int64_t batch, int64_t context);

// The GPT-2 shapes (vocab 50257, context 1024, d_ff = 4 d_model, untied): "small", "medium",
// "large", "xl". Error for another name.
TransformerConfig gpt2_config(const std::string& size);

}  // namespace ropegrad::nn
