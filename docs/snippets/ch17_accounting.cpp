// Chapter 17's accounting tables (nn/accounting.h).
//   shares: the share of each part in the forward's matmul FLOPs, GPT-2 small to XL (T = 1024) and
//           XL at T = 16384
//   memory: the memory rows of the Base model's training step against the allocator's counters
//           (tensor/storage.h) during a real step, for each variant
#include <cstdio>
#include <iterator>
#include <string>
#include <vector>

#include "autograd/engine.h"
#include "nn/accounting.h"
#include "nn/attention_path.h"
#include "nn/functional.h"
#include "optim/optim.h"
#include "tensor/random.h"
#include "tensor/storage.h"

using namespace ropegrad;
using namespace ropegrad::nn;

namespace {

void shares() {
  std::printf("| shape | T | projections | scores | values | feed-forward | lm_head | forward FLOPs |\n");
  std::printf("|---|---:|---:|---:|---:|---:|---:|---:|\n");
  const auto row = [](const std::string& size, int64_t t) {
    TransformerConfig c = gpt2_config(size);
    c.context_length = t;
    const Accounting a = account(c, 1, t);
    const double f = a.forward_flops();
    std::printf("| GPT-2 %s | %lld |", size.c_str(), static_cast<long long>(t));
    for (const char* g : {"attention projections", "attention scores", "attention values", "feed-forward", "lm_head"}) {
      std::printf(" %.1f %% |", 100 * a.group_forward_flops(g) / f);
    }
    std::printf(" %.3e |\n", f);
  };
  for (const char* size : {"small", "medium", "large", "xl"}) row(size, 1024);
  row("xl", 16384);
}

double mb(double bytes) { return bytes / 1e6; }

// One row per quantity, one column per variant (a table narrow enough to read
// whole): each counted row beside what the allocator held at that point.
void memory() {
  std::vector<std::vector<double>> columns;  // per variant, the rows below in MB
  set_attention_path(AttentionPath::Materialized);  // what the rows count: every (query, key) pair
  for (const AttentionKind kind : {AttentionKind::Standard, AttentionKind::W2, AttentionKind::Triple}) {
    TransformerConfig c;  // the Base model: V 256, T 128, D 128, H 4, L 2, d_ff 384
    c.attention = kind;
    const int64_t b = 16, t = c.context_length;
    Generator gen(0);
    const Tensor ids = randint(0, c.vocab_size, {b, t}, &gen), targets = randint(0, c.vocab_size, {b, t}, &gen);
    const int64_t start = memory_stats().current_bytes;
    reset_peak_memory();
    TransformerLM model(c, &gen);
    AdamW opt(model.parameters());
    const int64_t weights = memory_stats().current_bytes;
    int64_t after_forward = 0, after_backward = 0;
    {
      const Tensor loss = cross_entropy(model.forward(ids), targets);
      after_forward = memory_stats().current_bytes - static_cast<int64_t>(element_size(loss.dtype()));
      backward(loss);
    }
    after_backward = memory_stats().current_bytes;
    opt.step();
    const int64_t after_step = memory_stats().current_bytes;
    const Accounting a = account(c, b, t);
    columns.push_back({mb(a.memory[3].bytes), mb(static_cast<double>(after_forward - weights)), mb(a.memory[1].bytes),
                       mb(static_cast<double>(after_backward - weights)), mb(a.memory[2].bytes),
                       mb(static_cast<double>(after_step - after_backward)), mb(a.memory_bytes()),
                       mb(static_cast<double>(memory_stats().peak_bytes - start))});
  }
  set_attention_path(AttentionPath::Auto);
  std::printf("| Base, B 16, T 128 | standard | w2 | triple |\n|---|---:|---:|---:|\n");
  const char* rows[] = {"activations (counted)",        "held after the forward (measured)",
                        "gradients (counted)",          "held after the backward (measured)",
                        "AdamW state (counted)",        "held after AdamW's step (measured)",
                        "sum of the counted rows",      "peak of the step (measured)"};
  for (size_t r = 0; r < std::size(rows); ++r) {
    std::printf("| %s |", rows[r]);
    for (const std::vector<double>& column : columns) std::printf(" %.3f MB |", column[r]);
    std::printf("\n");
  }
}

}  // namespace

int main(int argc, char** argv) {
  const std::string mode = argc > 1 ? argv[1] : "";
  if (mode == "shares") {
    shares();
  } else if (mode == "memory") {
    memory();
  } else {
    std::fprintf(stderr, "usage: snippet_ch17_accounting shares|memory\n");
    return 2;
  }
  return 0;
}
