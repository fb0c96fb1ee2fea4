// Byte-level BPE training: count pre-tokens, then merge the most frequent
// adjacent pair until the vocabulary is full.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

namespace ropegrad::tok {

// A trained (or loaded) byte-level BPE model. Token ids: 0..255 are the
// single bytes, then the special tokens in order, then one per merge.
struct BpeModel {
  std::vector<std::string> vocab;                           // id -> bytes
  std::vector<std::pair<int32_t, int32_t>> merges;          // rank -> (left id, right id)
  std::vector<std::string> specials;                        // special token strings
};

// The pre-tokens of a corpus with their counts. The corpus is split at the
// special tokens first (they are dropped: nothing merges across them), then
// pre-tokenized in parallel over chunks (tensor/parallel.h).
std::unordered_map<std::string, int64_t> count_pretokens(std::string_view corpus,
                                                         const std::vector<std::string>& specials);

// A distinct pre-token as a sequence of token ids, with its count.
struct Word {
  std::vector<int32_t> ids;
  int64_t count = 0;
};

// The distinct pre-tokens of a corpus (count_pretokens) as words of byte ids,
// sorted by their bytes.
std::vector<Word> pretoken_words(std::string_view corpus, const std::vector<std::string>& specials);

// Rewrites ids so that each occurrence of (left, right), scanned left to
// right, becomes merged. Returns true when something changed.
bool merge_pair_in_word(std::vector<int32_t>& ids, int32_t left, int32_t right, int32_t merged);

// Trains a BPE model with vocab_size = 256 + specials.size() + merges:
// merge_step (tokenizer/merge_step.h) until the vocabulary is full. Ties
// between pairs of equal count go to the lexicographically greater pair of
// byte strings. Stops early when no pair is left.
BpeModel train_bpe(std::string_view corpus, int64_t vocab_size, const std::vector<std::string>& specials);

}  // namespace ropegrad::tok
