// One merge step of BPE training, with incrementally maintained pair counts.
//
// Counting every pair of every pre-token again after each merge costs
// O(corpus) per merge. Instead MergeState keeps
//   pair_count[pair]  summed over pre-tokens (times their counts), and
//   where[pair]       the pre-tokens that contain (or once contained) it,
// and merge_step, after merging (a, b), touches only the pre-tokens listed in
// where[(a, b)]: subtract their old pairs, merge, add their new pairs. A
// max-heap of (count, pair) entries, re-pushed whenever a count changes and
// skipped when stale, finds the next pair in O(log n).
#pragma once

#include <cstdint>
#include <queue>
#include <string>
#include <unordered_map>
#include <vector>

#include "tokenizer/bpe_train.h"

namespace ropegrad::tok {

// A pair of token ids as one key: left in the high 32 bits.
using PairKey = uint64_t;
inline PairKey pair_key(int32_t a, int32_t b) { return (static_cast<uint64_t>(a) << 32) | static_cast<uint32_t>(b); }
inline int32_t left_of(PairKey k) { return static_cast<int32_t>(k >> 32); }
inline int32_t right_of(PairKey k) { return static_cast<int32_t>(k & 0xFFFFFFFFu); }

// A heap entry: a pair with its count when it was pushed (stale once
// pair_count says otherwise).
struct PairEntry {
  int64_t count;
  PairKey pair;
};

// The heap's order: x before y when x should be merged later than y.
struct PairOrder {
  const std::vector<std::string>* vocab;  // id -> bytes (grows as merges are added)
  bool operator()(const PairEntry& x, const PairEntry& y) const;
};

struct MergeState {
  // Counts every adjacent pair of every word and fills the heap; vocab is the
  // model's (it must outlive the state).
  MergeState(std::vector<Word> words, const std::vector<std::string>& vocab);

  std::vector<Word> words;                                // the distinct pre-tokens
  std::unordered_map<PairKey, int64_t> pair_count;        // pair -> weighted count (> 0)
  std::unordered_map<PairKey, std::vector<int32_t>> where;  // pair -> indices into words
  std::priority_queue<PairEntry, std::vector<PairEntry>, PairOrder> heap;
  std::unordered_map<PairKey, int64_t> delta;             // scratch for merge_step
};

// Picks the most frequent pair (ties: the greater (bytes(left), bytes(right))),
// appends its token to model.vocab and the merge to model.merges, merges it in
// every word that contains it and updates pair_count, where and the heap.
// Returns false, changing nothing, when no pair is left.
bool merge_step(MergeState& state, BpeModel& model);

}  // namespace ropegrad::tok
