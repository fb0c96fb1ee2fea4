#include "catalog/module_catalog.h"

#include "nn/attention_variants.h"
#include "nn/transformer.h"
#include "tensor/kernels.h"

namespace ropegrad::nn {

namespace {

constexpr DType F64 = DType::Float64;

Tensor leaf(const Shape& shape, Generator& gen) { return randn(shape, F64, &gen).requires_grad_(); }

// The module's input(s) followed by all its parameters.
std::vector<Tensor> with_params(std::vector<Tensor> inputs, const Module& m) {
  for (const Tensor& p : m.parameters()) inputs.push_back(p);
  return inputs;
}

// A case whose function is `forward` applied to a freshly built module.
template <typename M, typename Build, typename Forward>
ModuleCase module_case(std::string name, std::string shapes, std::vector<Shape> input_shapes, Build build,
                       Forward forward) {
  return {std::move(name), std::move(shapes), [input_shapes, build, forward] {
            Generator gen(17);
            std::shared_ptr<M> m = build(gen);
            std::vector<Tensor> inputs;
            for (const Shape& s : input_shapes) inputs.push_back(leaf(s, gen));
            const size_t n_inputs = inputs.size();
            return ModuleCheck{[m, forward, n_inputs](const std::vector<Tensor>& in) {
                                 return forward(*m, std::vector<Tensor>(in.begin(), in.begin() + n_inputs));
                               },
                               with_params(inputs, *m)};
          }};
}

std::shared_ptr<RotaryEmbedding> make_rope(int64_t dh, RopePairing pairing, RopeScaling scaling, int64_t max_len = 8) {
  RopeConfig rc;
  rc.head_dim = dh;
  rc.max_seq_len = max_len;
  rc.pairing = pairing;
  rc.scaling = scaling;
  rc.factor = 4.0;
  rc.original_max_seq_len = 4;
  rc.xpos_scale_base = 8;
  return std::make_shared<RotaryEmbedding>(rc, F64);
}

using V = const std::vector<Tensor>&;

// Linear, Embedding, RMSNorm, the feed-forwards, RoPE (every scaling) and the fused elementwise ops.
void add_layers(std::vector<ModuleCase>& c) {
  c.push_back(module_case<Linear>("linear", "[2, 3, 6] -> 4", {{2, 3, 6}},
                                  [](Generator& g) { return std::make_shared<Linear>(6, 4, &g, F64); },
                                  [](Linear& m, V x) { return m.forward(x[0]); }));
  c.push_back({"embedding", "ids [2, 3] into [7, 4]", [] {
                 Generator gen(17);
                 auto m = std::make_shared<Embedding>(7, 4, &gen, F64);
                 const Tensor ids = tensor_i64({0, 6, 3, 3, 1, 0}, {2, 3});
                 return ModuleCheck{[m, ids](V) { return m->forward(ids); }, with_params({}, *m)};
               }});
  c.push_back(module_case<RMSNorm>("rmsnorm", "[2, 3, 8]", {{2, 3, 8}},
                                   [](Generator&) { return std::make_shared<RMSNorm>(8, 1e-5, F64); },
                                   [](RMSNorm& m, V x) { return m.forward(x[0]); }));
  c.push_back(module_case<SwiGLU>("swiglu", "[2, 3, 8], d_ff 16", {{2, 3, 8}},
                                  [](Generator& g) { return std::make_shared<SwiGLU>(8, 16, &g, F64); },
                                  [](SwiGLU& m, V x) { return m.forward(x[0]); }));
  c.push_back(module_case<SiLUFeedForward>("silu_ffn", "[2, 3, 8], d_ff 16", {{2, 3, 8}},
                                           [](Generator& g) { return std::make_shared<SiLUFeedForward>(8, 16, &g, F64); },
                                           [](SiLUFeedForward& m, V x) { return m.forward(x[0]); }));
  const std::vector<std::pair<const char*, RopeScaling>> scalings = {
      {"none", RopeScaling::None}, {"position interpolation", RopeScaling::PositionInterpolation},
      {"NTK", RopeScaling::NTK},   {"YaRN", RopeScaling::YaRN},
      {"xPos (keys)", RopeScaling::XPos}};
  for (const auto& [label, scaling] : scalings) {
    c.push_back(module_case<RotaryEmbedding>(
        "rope", fmt::format("[2, 2, 5, 8] interleaved, {}", label), {{2, 2, 5, 8}},
        [scaling = scaling](Generator&) { return make_rope(8, RopePairing::Interleaved, scaling); },
        [](RotaryEmbedding& m, V x) { return m.forward(x[0], Tensor(), true); }));
  }
  c.push_back(module_case<RotaryEmbedding>(
      "rope", "[2, 5, 8] half-split, positions (2, 5) past the table", {{2, 5, 8}},
      [](Generator&) { return make_rope(8, RopePairing::HalfSplit, RopeScaling::None, 4); },
      [](RotaryEmbedding& m, V x) { return m.forward(x[0], tensor_i64({0, 1, 2, 3, 4, 9, 7, 5, 3, 1}, {2, 5})); }));
  c.push_back(module_case<RotaryEmbedding>(
      "rope", "[2, 5, 8] complex form", {{2, 5, 8}},
      [](Generator&) { return make_rope(8, RopePairing::Interleaved, RopeScaling::None); },
      [](RotaryEmbedding& m, V x) { return m.forward_complex(x[0]); }));
  c.push_back({"silu_mul", "[3, 4] * [4] (broadcast)", [] {
                 Generator gen(17);
                 return ModuleCheck{[](V x) { return silu_mul(x[0], x[1]); }, {leaf({3, 4}, gen), leaf({4}, gen)}};
               }});
  c.push_back({"complex_mul", "[3, 4, 2] * [4, 2] (broadcast)", [] {
                 Generator gen(17);
                 return ModuleCheck{[](V x) { return complex_mul(x[0], x[1]); }, {leaf({3, 4, 2}, gen), leaf({4, 2}, gen)}};
               }});
}

// Scaled dot-product attention (every mask kind), multi-head, W2 and triple-product attention.
void add_attention(std::vector<ModuleCase>& c) {
  const auto sdpa = [](const char* label, int kind) {
    return ModuleCase{"attention", fmt::format("sdpa [2, 2, 4, 4] x [2, 2, 5, 4], {}", label), [kind] {
                        Generator gen(17);
                        AttentionOptions o;
                        if (kind == 1) o.causal = true, o.causal_offset = 1;
                        if (kind == 2) o.mask = tensor_bool({true, true, false, true, false}, {1, 1, 1, 5});
                        if (kind == 3) o.mask = randn({4, 5}, F64, &gen);
                        return ModuleCheck{[o](V x) { return scaled_dot_product_attention(x[0], x[1], x[2], o); },
                                           {leaf({2, 2, 4, 4}, gen), leaf({2, 2, 5, 4}, gen), leaf({2, 2, 5, 3}, gen)}};
                      }};
  };
  c.push_back(sdpa("no mask", 0));
  c.push_back(sdpa("causal", 1));
  c.push_back(sdpa("bool padding mask", 2));
  c.push_back(sdpa("additive mask", 3));
  c.push_back(module_case<MultiHeadAttention>(
      "multihead_attention", "self, causal, RoPE: [2, 5, 8], H 2", {{2, 5, 8}},
      [](Generator& g) { return std::make_shared<MultiHeadAttention>(8, 2, make_rope(4, RopePairing::Interleaved, RopeScaling::None), &g, F64); },
      [](MultiHeadAttention& m, V x) {
        return m.forward(x[0], AttentionCall::causal());
      }));
  c.push_back(module_case<MultiHeadAttention>(
      "multihead_attention", "cross, RoPE: [2, 3, 8] to [2, 5, 8]", {{2, 3, 8}, {2, 5, 8}},
      [](Generator& g) { return std::make_shared<MultiHeadAttention>(8, 2, make_rope(4, RopePairing::Interleaved, RopeScaling::None), &g, F64); },
      [](MultiHeadAttention& m, V x) { return m.forward(x[0], x[1], x[1], AttentionCall::bidirectional()); }));
  for (const auto sigma : {SigmaMode::Scalar, SigmaMode::Vector}) {
    c.push_back(module_case<W2Attention>(
        "w2_attention", fmt::format("causal, RoPE, {} sigma: [2, 5, 8], H 2", sigma == SigmaMode::Scalar ? "scalar" : "vector"),
        {{2, 5, 8}},
        [sigma](Generator& g) {
          return std::make_shared<W2Attention>(8, 2, make_rope(4, RopePairing::Interleaved, RopeScaling::None), sigma, &g, F64);
        },
        [](W2Attention& m, V x) {
          AttentionCall call = AttentionCall::causal();
          return m.forward(x[0], call);
        }));
  }
  c.push_back(module_case<TripleAttention>(
      "triple_attention", "causal, RoPE: [2, 5, 8], H 2", {{2, 5, 8}},
      [](Generator& g) { return std::make_shared<TripleAttention>(8, 2, make_rope(4, RopePairing::Interleaved, RopeScaling::None), &g, F64); },
      [](TripleAttention& m, V x) {
        return m.forward(x[0], AttentionCall::causal());
      }));
}

// Transformer blocks (each norm placement, NoPE) and the language model with every attention variant.
void add_blocks_and_models(std::vector<ModuleCase>& c) {
  // One block per norm placement, and NoPE with the SiLU feed-forward; the
  // RMSNorm gains set away from 1, so a norm's gain gradient is exercised.
  const auto block = [](NormPlacement norm, PositionEncoding position, FeedForwardKind ffn) {
    return [norm, position, ffn](Generator& g) {
      TransformerConfig tc;
      tc.d_model = 8, tc.num_heads = 2, tc.d_ff = 16, tc.norm = norm, tc.position = position, tc.ffn = ffn;
      auto rope = position == PositionEncoding::Rope
                      ? make_rope(4, RopePairing::Interleaved, RopeScaling::None)
                      : nullptr;
      auto m = std::make_shared<TransformerBlock>(tc, rope, &g, F64);
      for (const Tensor& p : m->parameters())
        if (p.dim() == 1) kernels::copy_into(p, add(mul(randn(p.shape(), F64, &g), 0.25), 1.0));
      return m;
    };
  };
  const auto causal_block = [](TransformerBlock& m, V x) { return m.forward(x[0], AttentionCall::causal()); };
  c.push_back(module_case<TransformerBlock>("transformer_block", "pre-norm, causal: [2, 5, 8], H 2", {{2, 5, 8}},
                                            block(NormPlacement::Pre, PositionEncoding::Rope, FeedForwardKind::SwiGLU),
                                            causal_block));
  c.push_back(module_case<TransformerBlock>("transformer_block", "post-norm, causal: [2, 5, 8], H 2", {{2, 5, 8}},
                                            block(NormPlacement::Post, PositionEncoding::Rope, FeedForwardKind::SwiGLU),
                                            causal_block));
  c.push_back(module_case<TransformerBlock>("transformer_block", "no norm, causal: [2, 5, 8], H 2", {{2, 5, 8}},
                                            block(NormPlacement::None, PositionEncoding::Rope, FeedForwardKind::SwiGLU),
                                            causal_block));
  c.push_back(module_case<TransformerBlock>("transformer_block", "NoPE, SiLU FFN, causal: [2, 5, 8], H 2", {{2, 5, 8}},
                                            block(NormPlacement::Pre, PositionEncoding::None, FeedForwardKind::SiLU),
                                            causal_block));
  for (const auto kind : attention_kinds()) {
    c.push_back({"transformer_lm", fmt::format("{}: V 7, D 8, H 2, L 2, ids [2, 4] -> loss", attention_kind_name(kind)),
                 [kind] {
                   Generator gen(17);
                   TransformerConfig tc;
                   tc.vocab_size = 7, tc.context_length = 4, tc.d_model = 8, tc.num_heads = 2, tc.num_layers = 2;
                   tc.d_ff = 16, tc.attention = kind;
                   auto m = std::make_shared<TransformerLM>(tc, &gen, F64);
                   const Tensor ids = tensor_i64({1, 4, 6, 0, 2, 2, 5, 3}, {2, 4});
                   const Tensor targets = tensor_i64({4, 6, 0, 1, 2, 5, 3, 3}, {2, 4});
                   return ModuleCheck{[m, ids, targets](V) { return cross_entropy(m->forward(ids), targets); },
                                      with_params({}, *m)};
                 }});
  }
}

std::vector<ModuleCase> build() {
  std::vector<ModuleCase> c;
  add_layers(c);
  add_attention(c);
  add_blocks_and_models(c);
  return c;
}

}  // namespace

const std::vector<ModuleCase>& module_catalog() {
  static const std::vector<ModuleCase> cases = build();
  return cases;
}

}  // namespace ropegrad::nn
