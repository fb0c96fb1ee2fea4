// CS336's adapters from your own program, written as tests/adapters.py calls
// them: train a BPE, get_tokenizer(vocab, merges) without special tokens,
// encode_iterable over a file, and AdamW with its settings in CS336's order.
// Links ropegrad::adapters alone. Exits 0 only when each result is right.
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>

#include "course/adapters.h"

using namespace ropegrad;

int main() {
  // A directory of its own (mkdtemp): the program removes only what it wrote.
  std::string dir_template = (std::filesystem::temp_directory_path() / "ropegrad_cs336_XXXXXX").string();
  if (::mkdtemp(dir_template.data()) == nullptr) return 1;
  const std::filesystem::path dir = dir_template, path = dir / "corpus.txt";
  {
    std::ofstream out(path, std::ios::binary);
    for (int i = 0; i < 200; ++i) out << "the cat sat on the mat, the dog sat on the log.\n";
  }
  const auto [vocab, merges] = adapters::run_train_bpe(path.string(), 300, {});
  const tok::Tokenizer tokenizer = adapters::get_tokenizer(vocab, merges);
  std::ifstream f(path, std::ios::binary);
  const std::vector<int32_t> ids = adapters::encode_iterable(tokenizer, f);
  std::ifstream whole(path, std::ios::binary);
  const std::string text((std::istreambuf_iterator<char>(whole)), std::istreambuf_iterator<char>());
  const bool same_ids = ids == tokenizer.encode(text) && tokenizer.decode(ids) == text;
  std::printf("%zu bytes -> %zu tokens (vocab %lld): %s\n", text.size(), ids.size(),
              static_cast<long long>(tokenizer.vocab_size()), same_ids ? "the ids of the whole text" : "WRONG");

  Tensor w = full({3}, 1.0).requires_grad_();
  adapters::AdamW opt({w}, nn::AdamWOptions::chain(0.1).weight_decay(0.0).betas(0.9, 0.999).eps(1e-8));
  w.set_grad(full({3}, 2.0));
  opt.step();
  // The first AdamW step moves each weight by lr (m^ / sqrt(v^) = 1): 1 - 0.1.
  const double moved = w.to_vector<float>()[0];
  std::printf("AdamW's first step: w = %.6f (expected 0.900000)\n", moved);
  std::filesystem::remove(path);
  std::filesystem::remove(dir);
  return same_ids && std::abs(moved - 0.9) < 1e-6 ? 0 : 1;
}
