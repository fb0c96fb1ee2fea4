// Every fast form (tensor/fast_forms.h) against the plain form it stands in
// for: the same op run with the switch on and off. Where a fast form computes
// the same expressions in the same order it must give the same bits; where it
// sums in another order or uses fast_exp, the two float32 results must lie
// within the float32 error bound of each other (tests/support/test_util.h:
// within_f32_bound, with each result's condition number), and float64 within
// a few units of its roundoff. Each test also checks, from the counters, that
// the fast form ran with the switch on and did not with it off.
// (tensor/fast_forms.def lists this file with the fast forms it tests, so a
// learner's workspace removes it with them.)
#include <gtest/gtest.h>

#include <functional>
#include <string>
#include <vector>

#include "autograd/engine.h"
#include "autograd/ops.h"
#include "nn/attention_path.h"
#include "nn/attention_scores.h"
#include "nn/fast/swiglu_gate_fast.h"
#include "nn/functional.h"
#include "optim/optim.h"
#include "tensor/fast_forms.h"
#include "tensor/random.h"
#include "tests/support/test_util.h"

using namespace ropegrad;
using namespace ropegrad::testing;

namespace {

// Runs `run` with the switch on and then off; checks the counter of `form`
// moved only when on. Returns {fast results, plain results}.
std::pair<NamedTensors, NamedTensors> both_forms(FastForm form, const ParityRun& run, const std::vector<Tensor>& leaves,
                                                 DType dtype) {
  std::pair<NamedTensors, NamedTensors> out;
  {
    const FastFormsScope on(true);
    const int64_t before = fast_form_runs(form);
    out.first = run(ropegrad::testing::detail::fresh(leaves, dtype));
    EXPECT_GT(fast_form_runs(form), before) << fast_form_name(form) << ": the fast form did not run with the switch on";
  }
  {
    const FastFormsScope off(false);
    const int64_t before = fast_form_runs(form);
    out.second = run(ropegrad::testing::detail::fresh(leaves, dtype));
    EXPECT_EQ(fast_form_runs(form), before) << fast_form_name(form) << ": the fast form ran with the switch off";
  }
  return out;
}

// Fast and plain within the float32 bound of each other in float32, and
// within 1e-12 relative in float64.
void expect_forms_agree(FastForm form, const ParityRun& run, const std::vector<Tensor>& leaves, F32Bound bound) {
  const auto [fast32, plain32] = both_forms(form, run, leaves, DType::Float32);
  const NamedTensors cond = condition_numbers(run, leaves);
  ASSERT_EQ(fast32.size(), plain32.size());
  ASSERT_EQ(fast32.size(), cond.size());
  for (size_t i = 0; i < fast32.size(); ++i) {
    EXPECT_TRUE(within_f32_bound(fast32[i].second, plain32[i].second, cond[i].second, bound))
        << fast_form_name(form) << ", float32, " << fast32[i].first;
  }
  const auto [fast64, plain64] = both_forms(form, run, leaves, DType::Float64);
  for (size_t i = 0; i < fast64.size(); ++i) {
    EXPECT_TRUE(all_close(fast64[i].second, plain64[i].second, Tol{1e-12, 1e-13}))
        << fast_form_name(form) << ", float64, " << fast64[i].first;
  }
}

// Fast and plain give the same bits, in float32 and float64.
void expect_forms_identical(FastForm form, const ParityRun& run, const std::vector<Tensor>& leaves) {
  for (DType dtype : {DType::Float32, DType::Float64}) {
    const auto [fast, plain] = both_forms(form, run, leaves, dtype);
    ASSERT_EQ(fast.size(), plain.size());
    for (size_t i = 0; i < fast.size(); ++i) {
      EXPECT_EQ(fast[i].second.to_vector<double>(), plain[i].second.to_vector<double>())
          << fast_form_name(form) << ", " << dtype_name(dtype) << ", " << fast[i].first;
    }
  }
}

// The output and the gradient of sum(out * w) w.r.t. each leaf but the last (w).
NamedTensors value_and_grads(const std::function<Tensor(const std::vector<Tensor>&)>& f, const std::vector<Tensor>& leaves,
                             const std::vector<std::string>& names) {
  std::vector<Tensor> in;
  for (size_t i = 0; i + 1 < leaves.size(); ++i) in.push_back(leaves[i].detach().requires_grad_(true));
  const Tensor out = f(in);
  backward(sum(out * leaves.back()));
  NamedTensors r = {{"output", out.detach()}};
  for (size_t i = 0; i < in.size(); ++i) r.push_back({"d " + names[i], in[i].grad()});
  return r;
}

Tensor rnd(const Shape& shape, Generator& gen, double scale = 1.0) { return randn(shape, DType::Float64, &gen) * scale; }

}  // namespace

TEST(FastForms, EveryOneIsPresentInTheReferenceTree) {
  // A learner's workspace removes those of the exercises it stubs; this tree must have all of them.
  std::vector<std::string> missing;
  for (int f = 0; f < static_cast<int>(FastForm::Count); ++f) {
    const auto form = static_cast<FastForm>(f);
    // The heap encode's own is EncodeHeap.PresentUnlessThisWorkspaceStubbedEncode (tests/test_tokenizer.cpp).
    if (form != FastForm::EncodeHeap && !fast_form_present(form)) missing.push_back(fast_form_name(form));
  }
  EXPECT_TRUE(missing.empty()) << "missing: " << ::testing::PrintToString(missing);
}

TEST(FastForms, OneSwitchRestoredByTheScope) {
  const bool before = fast_forms_enabled();
  {
    const FastFormsScope off(false);
    EXPECT_FALSE(fast_forms_enabled());
    {
      const FastFormsScope on(true);
      EXPECT_TRUE(fast_forms_enabled());
    }
    EXPECT_FALSE(fast_forms_enabled());
  }
  EXPECT_EQ(fast_forms_enabled(), before);
  EXPECT_STREQ(fast_form_name(FastForm::TiledAttention), "tiled_attention");
}

TEST(FastForms, SoftmaxRowsAgreeWithThePlainForm) {
  Generator gen(1);
  const std::vector<Tensor> leaves = {rnd({5, 13}, gen, 3.0), rnd({5, 13}, gen)};
  for (int log_form = 0; log_form < 2; ++log_form) {
    const ParityRun run = [&](const std::vector<Tensor>& l) {
      return value_and_grads(
          [&](const std::vector<Tensor>& in) { return log_form ? log_softmax(in[0], -1) : softmax(in[0], -1); }, l,
          {"x"});
    };
    expect_forms_agree(FastForm::Softmax, run, leaves, F32Bound{13, 4});
  }
}

TEST(FastForms, RmsNormAgreesWithThePlainForm) {
  Generator gen(2);
  // 6 rows of 40: the fast form's four running sums and its tail both used.
  const std::vector<Tensor> leaves = {rnd({6, 41}, gen, 2.0), rnd({41}, gen), rnd({6, 41}, gen)};
  const ParityRun run = [](const std::vector<Tensor>& l) {
    return value_and_grads([](const std::vector<Tensor>& in) { return nn::rms_norm(in[0], in[1], 1e-5); }, l,
                           {"x", "gain"});
  };
  expect_forms_agree(FastForm::RmsNorm, run, leaves, F32Bound{41, 4});
}

TEST(FastForms, SwigluGateAgreesWithThePlainForm) {
  Generator gen(3);
  const std::vector<Tensor> leaves = {rnd({4, 9}, gen, 4.0), rnd({4, 9}, gen), rnd({4, 9}, gen)};
  const ParityRun run = [](const std::vector<Tensor>& l) {
    return value_and_grads([](const std::vector<Tensor>& in) { return nn::silu_mul(in[0], in[1]); }, l, {"a", "b"});
  };
  expect_forms_agree(FastForm::SwigluGate, run, leaves, F32Bound{1, 6});
}

// Within the fast form: the one-pass backward (both gradients wanted, one
// shape, float32) equals its two maps (taken when one gradient is wanted)
// bit for bit, on a size that splits over the pool.
TEST(FastForms, SwigluOnePassBackwardEqualsItsTwoMaps) {
  const FastFormsScope on(true);
  Generator gen(11);
  const Tensor a = randn({3, 40000}, DType::Float32, &gen) * 4.0;
  const Tensor b = randn({3, 40000}, DType::Float32, &gen);
  const Tensor g = randn({3, 40000}, DType::Float32, &gen);
  ASSERT_TRUE(nn::fast::silu_mul_backward_is_one_pass(g, a, b));
  const Tensor a1 = a.detach().requires_grad_(), b1 = b.detach().requires_grad_();
  backward(nn::silu_mul(a1, b1), g);  // both wanted: the one-pass form
  const Tensor a2 = a.detach().requires_grad_();
  backward(nn::silu_mul(a2, b), g);   // da alone: a map
  const Tensor b3 = b.detach().requires_grad_();
  backward(nn::silu_mul(a, b3), g);   // db alone: a map
  EXPECT_EQ(a1.grad().to_vector<double>(), a2.grad().to_vector<double>());
  EXPECT_EQ(b1.grad().to_vector<double>(), b3.grad().to_vector<double>());
  EXPECT_FALSE(nn::fast::silu_mul_backward_is_one_pass(ones({3, 4}), ones({3, 4}), ones({4})));  // b broadcast
  EXPECT_FALSE(nn::fast::silu_mul_backward_is_one_pass(ones({3, 4}, DType::Float64), ones({3, 4}, DType::Float64),
                                                       ones({3, 4}, DType::Float64)));
  expect_error_with([] { nn::fast::silu_mul_grads_one_pass(ones({3, 4}), ones({3, 4}), ones({4})); },
                    {"silu_mul backward", "[3, 4], [3, 4], [4]"});
}

// The one-pass rotation computes the plain form's two maps' expressions:
// the same bits, forward and backward, both pairings, several heads and
// batches (the (T, dh/2) table repeats every T rows).
TEST(FastForms, RopeOnePassEqualsThePlainFormBitForBit) {
  Generator gen(13);
  const Tensor x = randn({2, 3, 9, 16}, DType::Float32, &gen);  // (B, H, T, dh)
  const Tensor angles = randn({9, 8}, DType::Float32, &gen) * 3.0;
  const Tensor c = cos(angles), s = sin(angles);
  const Tensor weights = randn(x.shape(), DType::Float32, &gen);
  for (nn::RopePairing pairing : {nn::RopePairing::Interleaved, nn::RopePairing::HalfSplit}) {
    const auto [fast, plain] = both_forms(
        FastForm::RopeRotation,
        [&](const std::vector<Tensor>& l) {
          const Tensor xl = l[0].detach().requires_grad_(true);
          const Tensor y = nn::rope_rotate(xl, c, s, pairing);
          backward(sum(y * weights));
          return NamedTensors{{"output", y.detach()}, {"d x", xl.grad()}};
        },
        {x}, DType::Float32);
    for (size_t i = 0; i < 2; ++i) {
      EXPECT_EQ(fast[i].second.to_vector<float>(), plain[i].second.to_vector<float>())
          << fast[i].first << ", pairing " << static_cast<int>(pairing);
    }
  }
  // Float64, and tables not of shape (T, dh/2), keep the plain form with the switch on.
  const FastFormsScope on(true);
  const int64_t before = fast_form_runs(FastForm::RopeRotation);
  nn::rope_rotate(to(x, DType::Float64), to(c, DType::Float64), to(s, DType::Float64), nn::RopePairing::Interleaved);
  nn::rope_rotate(x, unsqueeze(c, 0), unsqueeze(s, 0), nn::RopePairing::Interleaved);
  EXPECT_EQ(fast_form_runs(FastForm::RopeRotation), before);
}

TEST(FastForms, CrossEntropyAgreesWithThePlainForm) {
  Generator gen(4);
  const Tensor targets = tensor({3, 0, -100, 6, 2}, {5}, DType::Int64);  // one ignored row
  const std::vector<Tensor> leaves = {rnd({5, 7}, gen, 3.0), rnd({}, gen)};
  const ParityRun run = [&](const std::vector<Tensor>& l) {
    return value_and_grads([&](const std::vector<Tensor>& in) { return nn::cross_entropy(in[0], targets); }, l,
                           {"logits"});
  };
  expect_forms_agree(FastForm::CrossEntropy, run, leaves, F32Bound{7, 5});
}

// The update's fast form runs the plain form's expressions in its order.
TEST(FastForms, AdamWUpdateEqualsThePlainFormBitForBit) {
  Generator gen(5);
  const Tensor start = randn({70000}, DType::Float64, &gen);  // splits over the pool
  const std::vector<Tensor> grads = {randn({70000}, DType::Float64, &gen), randn({70000}, DType::Float64, &gen) * 1e-3};
  expect_forms_identical(
      FastForm::AdamW,
      [&](const std::vector<Tensor>& l) {
        Tensor p = l[0].detach().requires_grad_(true);
        nn::AdamW opt({p}, {.lr = 1e-2, .betas = {0.9, 0.95}, .eps = 1e-8, .weight_decay = 0.1});
        for (const Tensor& g : grads) {
          p.set_grad(to(g, p.dtype()));
          opt.step();
        }
        return NamedTensors{{"parameter after two steps", p.detach()}};
      },
      {start});
}

// The three score kernels and their backward, materialised: the fused rows
// (and the triple backward's two passes) against the plain rows, which call
// the library's softmax. Causal, with a padding mask, one fully masked row.
TEST(FastForms, AttentionScoresAgreeWithThePlainForm) {
  Generator gen(6);
  const int64_t b = 1, h = 2, n = 6, dh = 4;
  const nn::ScoreMask causal{Tensor(), true, 0};
  for (int variant = 0; variant < 3; ++variant) {
    const Tensor q = rnd({b, h, n, dh}, gen), k = rnd({b, h, n, dh}, gen), r = rnd({b, h, n, dh}, gen, 0.5);
    const Tensor w = rnd({b, h, n, n}, gen);  // the weights of sum(P * w)
    const std::vector<Tensor> leaves = variant > 0 ? std::vector<Tensor>{q, k, r, w} : std::vector<Tensor>{q, k, w};
    const ParityRun run = [&](const std::vector<Tensor>& l) {
      return value_and_grads(
          [&](const std::vector<Tensor>& in) {
            if (variant == 0) return nn::dot_attention_probs(in[0], in[1], 0.5, causal);
            if (variant == 1) {
              const Tensor tau = full({h}, 2.0, in[0].dtype());
              return nn::w2_attention_probs(in[0], in[1], in[2] * in[2] + 0.1, in[2] * in[2] + 0.2, tau, causal);
            }
            return nn::triple_attention_probs(in[0], in[1], in[2], 0.25, causal);
          },
          l, {"q", "k", variant == 1 ? "sigma" : "r"});
    };
    const FastForm form = variant == 2 ? FastForm::TripleBackward : FastForm::AttentionScores;
    expect_forms_agree(form, run, leaves, F32Bound{3 * dh + n, 8});
  }
}

// Tiled attention (a fast form) against the plain materialised path.
TEST(FastForms, TiledAttentionAgreesWithThePlainForm) {
  Generator gen(7);
  const int64_t b = 1, h = 2, n = 10, dh = 4;
  const nn::AttentionPath saved = nn::attention_path();
  nn::set_attention_path(nn::AttentionPath::Tiled);
  const std::vector<Tensor> leaves = {rnd({b, h, n, dh}, gen), rnd({b, h, n, dh}, gen), rnd({b, h, n, dh}, gen),
                                      rnd({b, h, n, dh}, gen)};
  const ParityRun run = [&](const std::vector<Tensor>& l) {
    return value_and_grads(
        [&](const std::vector<Tensor>& in) {
          nn::AttentionOptions o;
          o.causal = true;
          return nn::scaled_dot_product_attention(in[0], in[1], in[2], o);
        },
        l, {"q", "k", "v"});
  };
  expect_forms_agree(FastForm::TiledAttention, run, leaves, F32Bound{2 * dh + 2 * n, 8});
  nn::set_attention_path(saved);
}
