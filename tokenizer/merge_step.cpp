// One merge step: merge_pair_in_word (one merge applied to one pre-token),
// the order of pairs, and merge_step with its incremental pair counts.
#include "tokenizer/merge_step.h"

#include "tensor/exercise.h"

namespace ropegrad::tok {

bool merge_pair_in_word(std::vector<int32_t>& ids, int32_t left, int32_t right, int32_t merged) {
  // BEGIN EXERCISE ex19-merge-step
  size_t out = 0;
  bool changed = false;
  for (size_t i = 0; i < ids.size();) {
    if (i + 1 < ids.size() && ids[i] == left && ids[i + 1] == right) {
      ids[out++] = merged;
      i += 2;
      changed = true;
    } else {
      ids[out++] = ids[i++];
    }
  }
  ids.resize(out);
  return changed;
  // END EXERCISE ex19-merge-step
}

bool PairOrder::operator()(const PairEntry& x, const PairEntry& y) const {
  // BEGIN EXERCISE ex19-merge-step
  // A lower count first; on a tie the smaller (left bytes, right bytes).
  if (x.count != y.count) return x.count < y.count;
  const std::string& xl = (*vocab)[left_of(x.pair)];
  const std::string& yl = (*vocab)[left_of(y.pair)];
  if (xl != yl) return xl < yl;
  return (*vocab)[right_of(x.pair)] < (*vocab)[right_of(y.pair)];
  // END EXERCISE ex19-merge-step
}

MergeState::MergeState(std::vector<Word> words_in, const std::vector<std::string>& vocab)
    : words(std::move(words_in)), heap(PairOrder{&vocab}) {
  for (int32_t w = 0; w < static_cast<int32_t>(words.size()); ++w) {
    const auto& ids = words[w].ids;
    for (size_t i = 0; i + 1 < ids.size(); ++i) {
      const PairKey k = pair_key(ids[i], ids[i + 1]);
      pair_count[k] += words[w].count;
      auto& list = where[k];
      if (list.empty() || list.back() != w) list.push_back(w);
    }
  }
  for (const auto& [k, n] : pair_count) heap.push({n, k});
}

bool merge_step(MergeState& state, BpeModel& model) {
  // BEGIN EXERCISE ex19-merge-step
  auto& [words, pair_count, where, heap, delta] = state;
  // The best pair whose heap entry is current.
  while (!heap.empty()) {
    auto it = pair_count.find(heap.top().pair);
    if (it != pair_count.end() && it->second == heap.top().count) break;
    heap.pop();
  }
  if (heap.empty()) return false;  // every pre-token is a single token
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
    for (size_t i = 0; i + 1 < before.size(); ++i) delta[pair_key(before[i], before[i + 1])] -= word.count;
    for (size_t i = 0; i + 1 < word.ids.size(); ++i) {
      const PairKey k = pair_key(word.ids[i], word.ids[i + 1]);
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
  return true;
  // END EXERCISE ex19-merge-step
}

}  // namespace ropegrad::tok
