// A training loop written by hand with the library: no trainer, no CLI.
//
// A small transformer LM learns to continue a repeating sequence of token ids
// (0 1 2 ... 15 0 1 2 ...): each next token is determined by the current one,
// so the loss falls from about ln 16 = 2.77 (higher at initialisation) towards 0. Every part is the
// library's own: TransformerLM, get_batch, cross_entropy, AdamW, the cosine
// schedule and gradient clipping — the loop is the one of chapter 18.
//
// Exits 1 if the loss did not fall below a tenth of where it started.
#include <cmath>
#include <vector>

#include "autograd/ops.h"
#include "tasks/batch.h"
#include "nn/functional.h"
#include "optim/optim.h"
#include "optim/schedule.h"
#include "nn/transformer.h"

using namespace ropegrad;

int main() {
  const int64_t vocab = 16, context = 16, batch = 8, steps = 60;
  nn::TransformerConfig config;
  config.vocab_size = vocab;
  config.context_length = context;
  config.d_model = 32;
  config.num_layers = 1;
  config.num_heads = 2;
  Generator gen(0);
  nn::TransformerLM model(config, &gen, DType::Float32);

  // The data: one long 1-D int64 array of token ids, (n).
  std::vector<double> ids(1024);
  for (size_t i = 0; i < ids.size(); ++i) ids[i] = static_cast<double>(i % vocab);
  const Tensor tokens = tensor(ids, {static_cast<int64_t>(ids.size())}, DType::Int64);

  nn::AdamW opt(model.parameters(), {.lr = 1e-2, .betas = {0.9, 0.95}, .eps = 1e-8, .weight_decay = 0.01});
  double first = 0, last = 0;
  for (int64_t step = 0; step < steps; ++step) {
    opt.set_lr(nn::cosine_lr(step, 1e-2, 1e-3, /*warmup_iters=*/5, /*cosine_cycle_iters=*/steps));
    auto [x, y] = nn::get_batch(tokens, batch, context, gen);  // (B, T), (B, T)
    const Tensor logits = model.forward(x);                      // (B, T, V)
    const Tensor loss = nn::cross_entropy(reshape(logits, {-1, vocab}), reshape(y, {-1}));
    opt.zero_grad();
    backward(loss);
    nn::clip_grad_norm_(model.parameters(), 1.0);
    opt.step();
    last = loss.item<double>();
    if (step == 0) first = last;
    if (step % 10 == 0 || step == steps - 1) fmt::print("step {:3d}  loss {:.4f}\n", step, last);
  }
  const bool learned = std::isfinite(last) && last < first / 10;
  fmt::print("loss {:.4f} -> {:.4f}: {}\n", first, last, learned ? "learned" : "did NOT learn");
  return learned ? 0 : 1;
}
