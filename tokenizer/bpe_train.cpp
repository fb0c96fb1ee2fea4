// train_bpe: the argument checks, the pre-tokens as words, and the merge loop
// (one merge is merge_step, tokenizer/merge_step.cpp).
#include "tokenizer/bpe_train.h"

#include <algorithm>

#include "tensor/error.h"
#include "tensor/exercise.h"
#include "tokenizer/merge_step.h"
#include "tokenizer/utf8.h"

namespace ropegrad::tok {

std::vector<Word> pretoken_words(std::string_view corpus, const std::vector<std::string>& specials) {
  std::vector<Word> words;
  for (auto& [text, count] : count_pretokens(corpus, specials)) {
    Word w;
    w.count = count;
    for (char c : text) w.ids.push_back(static_cast<uint8_t>(c));
    words.push_back(std::move(w));
  }
  // A fixed order (the hash map's is not), so where[] lists come out the same on every run.
  std::sort(words.begin(), words.end(), [](const Word& x, const Word& y) { return x.ids < y.ids; });
  return words;
}

BpeModel train_bpe(std::string_view corpus, int64_t vocab_size, const std::vector<std::string>& specials) {
  RG_CHECK(!corpus.empty(), "train_bpe", "the corpus is empty");
  for (size_t i = 0; i < specials.size(); ++i) {
    const std::string& s = specials[i];
    RG_CHECK(!s.empty(), "train_bpe", "a special token is empty");
    // A one-byte special would be a second token with the same bytes as that byte's.
    RG_CHECK(s.size() > 1, "train_bpe", "special token '{}' is a single byte, already token {}",
             replace_invalid_utf8(s), static_cast<uint8_t>(s[0]));
    RG_CHECK(std::find(specials.begin(), specials.begin() + i, s) == specials.begin() + i, "train_bpe",
             "special token '{}' is given twice", s);
    const int64_t bad = first_invalid_utf8(s);
    RG_CHECK(bad < 0, "train_bpe", "special token '{}' is not valid UTF-8 (byte offset {})", replace_invalid_utf8(s), bad);
  }

  // BEGIN EXERCISE ex19-train-bpe
  const int64_t base = 256 + static_cast<int64_t>(specials.size());
  RG_CHECK(vocab_size >= base, "train_bpe", "vocab size {} is smaller than 256 bytes + {} special tokens = {}",
           vocab_size, specials.size(), base);
  BpeModel model;
  model.specials = specials;
  for (int b = 0; b < 256; ++b) model.vocab.emplace_back(1, static_cast<char>(b));
  for (const std::string& s : specials) model.vocab.push_back(s);
  MergeState state(pretoken_words(corpus, specials), model.vocab);
  while (static_cast<int64_t>(model.vocab.size()) < vocab_size) {
    if (!merge_step(state, model)) break;  // every pre-token is a single token
  }
  return model;
  // END EXERCISE ex19-train-bpe
}

}  // namespace ropegrad::tok
