// What the attention exercises' checks share (ex12 .. ex18): float32 parity
// against PyTorch with the error bound, each failure one line that names the
// result, the worst element and both values.
#pragma once

#include <cmath>
#include <functional>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "autograd/engine.h"
#include "course/checks/check_util.h"
#include "nn/attention.h"
#include "nn/transformer.h"

namespace ropegrad::course {

// Every result of run on `leaves` in float32 is within the float32 bound (K,
// stages; see tests/support/test_util.h) of expected(name), PyTorch's value;
// the condition numbers c_i come from the same run in float64.
inline void expect_f32_results(const ParityRun& run, const std::vector<Tensor>& leaves,
                               const std::function<Tensor(const std::string&)>& expected, F32Bound bound,
                               const std::string& label) {
  const NamedTensors results = run(testing::detail::fresh(leaves, DType::Float32));
  const NamedTensors cond = condition_numbers(run, leaves);
  for (size_t i = 0; i < results.size(); ++i) {
    const auto& [name, t] = results[i];
    if (!t.defined()) {
      ADD_FAILURE() << label << " " << name << ": no tensor (a missing gradient?)";
      continue;
    }
    if (t.dtype() != DType::Float32) {
      ADD_FAILURE() << label << " " << name << ": dtype " << dtype_name(t.dtype()) << ", expected float32";
      continue;
    }
    const ::testing::AssertionResult r = within_f32_bound(t, expected(name), cond[i].second, bound);
    if (!r) ADD_FAILURE() << label << " " << name << ": " << r.message();
  }
}

// A forward run for float32 parity: from fresh float leaves, the output and,
// leaf by leaf, the tensor that holds that leaf's values in the graph (the
// leaf itself, or the module parameter it was loaded into), each requiring grad.
using ForwardRun = std::function<std::pair<Tensor, std::vector<Tensor>>(const std::vector<Tensor>& leaves)>;

// Loads leaves[first], leaves[first + 1], ... into m's parameters `params`
// (state_dict names, in that order).
inline void load_leaves(nn::Module& m, const std::vector<std::string>& params, const std::vector<Tensor>& leaves,
                        size_t first) {
  nn::StateDict weights;
  for (size_t i = 0; i < params.size(); ++i) weights[params[i]] = leaves[first + i];
  m.load_state_dict(weights);
}

// m's parameters named in `params`, in that order.
inline std::vector<Tensor> parameters_named(const nn::Module& m, const std::vector<std::string>& params) {
  std::vector<Tensor> out;
  for (const std::string& want : params)
    for (const auto& [name, p] : m.named_parameters())
      if (name == want) out.push_back(p);
  return out;
}

// The ParityRun of an attention layer: leaves are x, w, then the parameters
// named in `params`; `call` says the masking. Returns "out" and the gradients
// of sum(out * w) w.r.t. x and each named parameter ("grad_<name>"); without
// `with_backward` only "out" (a forward check never runs the backward).
inline ParityRun layer_parity_run(std::function<std::unique_ptr<nn::AttentionLayer>(DType)> make,
                                  std::vector<std::string> params, nn::AttentionCall call, bool with_backward = true) {
  return [make = std::move(make), params = std::move(params), call, with_backward](const std::vector<Tensor>& ls) {
    std::unique_ptr<nn::AttentionLayer> m = make(ls[0].dtype());
    load_leaves(*m, params, ls, 2);
    Tensor x = ls[0];
    x.requires_grad_(true);
    const Tensor out = m->forward(x, call);
    if (!with_backward) return NamedTensors{{"out", out.detach()}};
    backward(out, clone(ls[1]));  // d sum(out * w)
    NamedTensors r = {{"out", out.detach()}, {"grad_x", x.grad()}};
    for (const auto& [name, p] : m->named_parameters())
      for (const std::string& want : params)
        if (name == want) r.emplace_back("grad_" + name, p.grad());
    return r;
  };
}

// The call of a parity case: "causal", "padding" (the given mask) or none.
inline nn::AttentionCall parity_call(const std::string& mask, const std::function<Tensor()>& padding_mask) {
  nn::AttentionCall call = mask == "causal" ? nn::AttentionCall::causal() : nn::AttentionCall::bidirectional();
  if (mask == "padding") call.mask = padding_mask();
  return call;
}

// The ForwardRun of a layer (anything with forward(x, call): an attention
// layer, a transformer block) with causal masking: leaves are x, then the
// parameters named in `params` (state_dict names, in that order); `make`
// builds the layer in a dtype and returns an owning pointer.
template <typename Make>
ForwardRun causal_layer_run(Make make, std::vector<std::string> params) {
  return [make = std::move(make), params = std::move(params)](const std::vector<Tensor>& ls) {
    const auto m = make(ls[0].dtype());
    load_leaves(*m, params, ls, 1);
    Tensor x = ls[0];
    x.requires_grad_(true);
    std::vector<Tensor> held = {x};
    for (const Tensor& p : parameters_named(*m, params)) held.push_back(p);
    nn::AttentionCall call = nn::AttentionCall::causal();
    return std::make_pair(m->forward(x, call), held);
  };
}

// The output of run in float32 is within the float32 bound (K, stages; see
// tests/support/test_util.h) of `expected`, PyTorch's value. The condition
// numbers c_i = sum_j |d out_i / d x_j| |x_j| come from the float64 run by
// reverse mode: one backward per output element (exact, and far cheaper than
// finite differences over every weight).
inline void expect_f32_forward(const ForwardRun& run, const std::vector<Tensor>& leaves, const Tensor& expected,
                               F32Bound bound, const std::string& label) {
  const Tensor out32 = run(testing::detail::fresh(leaves, DType::Float32)).first;
  if (!out32.defined() || out32.dtype() != DType::Float32) {
    ADD_FAILURE() << label << ": no float32 output";
    return;
  }
  auto [out, held] = run(testing::detail::fresh(leaves, DType::Float64));
  const int64_t n = out.numel();
  std::vector<std::vector<double>> values;
  for (const Tensor& t : held) values.push_back(t.to_vector<double>());
  std::vector<double> cond(static_cast<size_t>(n), 0.0), seed(static_cast<size_t>(n), 0.0);
  for (int64_t i = 0; i < n; ++i) {
    for (const Tensor& t : held) t.set_grad(Tensor());
    seed[static_cast<size_t>(i)] = 1;
    backward(out, tensor(seed, out.shape(), DType::Float64), /*retain_graph=*/true);
    seed[static_cast<size_t>(i)] = 0;
    double c = 0;
    for (size_t k = 0; k < held.size(); ++k) {
      const Tensor g = held[k].grad();
      if (!g.defined()) continue;
      const std::vector<double> gv = g.to_vector<double>();
      for (size_t j = 0; j < gv.size(); ++j) c += std::abs(gv[j] * values[k][j]);
    }
    cond[static_cast<size_t>(i)] = c;
  }
  const ::testing::AssertionResult r =
      within_f32_bound(out32, expected, tensor(cond, out.shape(), DType::Float64), bound);
  if (!r) ADD_FAILURE() << label << ": " << r.message();
}

// Every result of run on `leaves` (float64) in `part` equals expected(name) within f64_tol().
inline void expect_f64_results(const ParityRun& run, const std::vector<Tensor>& leaves,
                               const std::function<Tensor(const std::string&)>& expected, const std::string& label,
                               Part part = Part::All) {
  for (const auto& [name, t] : run(testing::detail::fresh(leaves, DType::Float64)))
    if (in_part(name, part)) expect_values(t, expected(name), f64_tol(), label + " " + name);
}

// The transformer block of the ex17 checks (CS336's adapter shape): D = 16,
// H = 4, d_ff = 32, with `norm` placing its RMSNorms; kBlockWeights are its
// parameters in the fixtures' order.
inline const std::vector<std::string> kBlockWeights = {
    "attn.q_proj.weight", "attn.k_proj.weight", "attn.v_proj.weight", "attn.output_proj.weight", "ln1.weight",
    "ln2.weight",         "ffn.w1.weight",      "ffn.w2.weight",      "ffn.w3.weight"};

inline nn::TransformerConfig small_block_config(nn::NormPlacement norm) {
  nn::TransformerConfig c;
  c.vocab_size = 1;
  c.context_length = 16;
  c.d_model = 16;
  c.num_layers = 1;
  c.num_heads = 4;
  c.d_ff = 32;
  c.norm = norm;
  return c;
}

// That block, built with its own RoPE table (head dim 4, up to 16 positions).
inline std::unique_ptr<nn::TransformerBlock> make_small_block(nn::NormPlacement norm, DType dtype,
                                                              Generator* gen = nullptr) {
  nn::RopeConfig rc;
  rc.head_dim = 4;
  rc.max_seq_len = 16;
  return std::make_unique<nn::TransformerBlock>(small_block_config(norm), std::make_shared<nn::RotaryEmbedding>(rc, dtype),
                                                gen, dtype);
}

}  // namespace ropegrad::course
