// train_bpe: the merge loop with incrementally maintained pair counts.
//
// Counting every pair of every pre-token again after each merge costs
// O(corpus) per merge. Instead we keep
//   pair_count[pair]  summed over pre-tokens (times their counts), and
//   where[pair]       the pre-tokens that contain (or once contained) it,
// and after merging (a, b) touch only the pre-tokens listed in where[(a, b)]:
// subtract their old pairs, merge, add their new pairs. A max-heap of
// (count, pair) entries, re-pushed whenever a count changes and skipped when
// stale, finds the next pair in O(log n).
#include "tokenizer/bpe_train.h"

#include <algorithm>
#include <queue>

#include "tensor/error.h"
#include "tokenizer/utf8.h"

namespace ropegrad::tok {

namespace {

using PairKey = uint64_t;
PairKey key(int32_t a, int32_t b) { return (static_cast<uint64_t>(a) << 32) | static_cast<uint32_t>(b); }
int32_t left_of(PairKey k) { return static_cast<int32_t>(k >> 32); }
int32_t right_of(PairKey k) { return static_cast<int32_t>(k & 0xFFFFFFFFu); }

struct Entry {
  int64_t count;
  PairKey pair;
};

}  // namespace

BpeModel train_bpe(std::string_view corpus, int64_t vocab_size, const std::vector<std::string>& specials) {
  const int64_t base = 256 + static_cast<int64_t>(specials.size());
  RG_CHECK(vocab_size >= base, "train_bpe", "vocab size {} is smaller than 256 bytes + {} special tokens = {}",
           vocab_size, specials.size(), base);
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

  BpeModel model;
  model.specials = specials;
  for (int b = 0; b < 256; ++b) model.vocab.emplace_back(1, static_cast<char>(b));
  for (const std::string& s : specials) model.vocab.push_back(s);

  // Pre-tokens as byte-id sequences.
  std::vector<Word> words;
  for (auto& [text, count] : count_pretokens(corpus, specials)) {
    Word w;
    w.count = count;
    for (char c : text) w.ids.push_back(static_cast<uint8_t>(c));
    words.push_back(std::move(w));
  }
  // A fixed order (the hash map's is not), so where[] lists come out the same on every run.
  std::sort(words.begin(), words.end(), [](const Word& x, const Word& y) { return x.ids < y.ids; });

  std::unordered_map<PairKey, int64_t> pair_count;
  std::unordered_map<PairKey, std::vector<int32_t>> where;
  for (int32_t w = 0; w < static_cast<int32_t>(words.size()); ++w) {
    const auto& ids = words[w].ids;
    for (size_t i = 0; i + 1 < ids.size(); ++i) {
      const PairKey k = key(ids[i], ids[i + 1]);
      pair_count[k] += words[w].count;
      auto& list = where[k];
      if (list.empty() || list.back() != w) list.push_back(w);
    }
  }

  // Higher count first; on a tie the greater (left bytes, right bytes).
  const auto& vocab = model.vocab;
  auto lower = [&vocab](const Entry& x, const Entry& y) {
    if (x.count != y.count) return x.count < y.count;
    const std::string& xl = vocab[left_of(x.pair)];
    const std::string& yl = vocab[left_of(y.pair)];
    if (xl != yl) return xl < yl;
    return vocab[right_of(x.pair)] < vocab[right_of(y.pair)];
  };
  std::priority_queue<Entry, std::vector<Entry>, decltype(lower)> heap(lower);
  for (const auto& [k, n] : pair_count) heap.push({n, k});

  std::unordered_map<PairKey, int64_t> delta;
  while (static_cast<int64_t>(model.vocab.size()) < vocab_size) {
    // The best pair whose heap entry is current.
    while (!heap.empty()) {
      auto it = pair_count.find(heap.top().pair);
      if (it != pair_count.end() && it->second == heap.top().count) break;
      heap.pop();
    }
    if (heap.empty()) break;  // every pre-token is a single token
    const PairKey best = heap.top().pair;
    heap.pop();
    const int32_t a = left_of(best), b = right_of(best);
    const int32_t merged = static_cast<int32_t>(model.vocab.size());
    model.vocab.push_back(model.vocab[a] + model.vocab[b]);
    model.merges.emplace_back(a, b);

    // Only the pre-tokens that contain (a, b) change.
    delta.clear();
    std::vector<int32_t> touched = std::move(where[best]);
    where.erase(best);
    for (int32_t w : touched) {
      Word& word = words[w];
      std::vector<int32_t> before = word.ids;
      if (!merge_pair_in_word(word.ids, a, b, merged)) continue;  // a stale entry
      for (size_t i = 0; i + 1 < before.size(); ++i) delta[key(before[i], before[i + 1])] -= word.count;
      for (size_t i = 0; i + 1 < word.ids.size(); ++i) {
        const PairKey k = key(word.ids[i], word.ids[i + 1]);
        delta[k] += word.count;
        if (word.ids[i] == merged || word.ids[i + 1] == merged) {
          auto& list = where[k];
          if (list.empty() || list.back() != w) list.push_back(w);
        }
      }
    }
    for (const auto& [k, d] : delta) {
      if (d == 0) continue;
      const int64_t n = (pair_count[k] += d);
      if (n <= 0) {
        pair_count.erase(k);
      } else {
        heap.push({n, k});
      }
    }
  }
  return model;
}

}  // namespace ropegrad::tok
