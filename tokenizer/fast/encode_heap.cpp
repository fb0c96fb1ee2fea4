// One pre-token's merges by a min-heap of adjacent pairs over a linked list
// of symbols, in O(n log n) (tokenizer/fast/encode_heap.h).
#include "tokenizer/fast/encode_heap.h"

#include <algorithm>
#include <limits>

#include "tensor/error.h"
#include "tokenizer/merge_step.h"
#include "tokenizer/tokenizer.h"

namespace ropegrad::tok {

namespace {

// A pair of adjacent symbols that has a rank: the left symbol starts at byte
// pos. Current while sym[pos] == left and the next live symbol is right.
struct Entry {
  int32_t rank;
  int32_t pos;
  int32_t left;
  int32_t right;
  int32_t merged;
};

}  // namespace

std::vector<int32_t> Tokenizer::encode_pretoken_heap(std::string_view piece, fast::HeapEncodeWork* work) const {
  RG_CHECK(piece.size() < static_cast<size_t>(std::numeric_limits<int32_t>::max()), "encode_pretoken_heap",
           "a pre-token of {} bytes is too long (at most 2^31 - 2)", piece.size());
  fast::HeapEncodeWork local;
  fast::HeapEncodeWork& w = work != nullptr ? *work : local;
  w = fast::HeapEncodeWork{};
  const int32_t n = static_cast<int32_t>(piece.size());
  // The symbols: sym[i] is the token that starts at byte i (-1 once merged
  // into the symbol on its left), prev/next link the live ones (-1, n: none).
  std::vector<int32_t> sym(n), prev(n), next(n);
  for (int32_t i = 0; i < n; ++i) {
    sym[i] = byte_id_[static_cast<uint8_t>(piece[i])];
    prev[i] = i - 1;
    next[i] = i + 1;
  }
  // The heap's order: the lowest rank on top, on a tie the leftmost.
  auto later = [&w](const Entry& x, const Entry& y) {
    ++w.heap_comparisons;
    return x.rank != y.rank ? x.rank > y.rank : x.pos > y.pos;
  };
  std::vector<Entry> heap, deferred;
  // The entry of the pair that starts at pos, if it has a rank.
  auto entry_at = [&](int32_t pos, Entry* e) {
    const int32_t r = next[pos];
    if (r >= n) return false;
    ++w.pair_lookups;
    auto it = rank_.find(pair_key(sym[pos], sym[r]));
    if (it == rank_.end()) return false;
    *e = Entry{it->second.first, pos, sym[pos], sym[r], it->second.second};
    return true;
  };
  heap.reserve(n);
  for (int32_t i = 0; i + 1 < n; ++i) {
    Entry e;
    if (entry_at(i, &e)) heap.push_back(e);
  }
  w.heap_pushes += static_cast<int64_t>(heap.size());
  std::make_heap(heap.begin(), heap.end(), later);
  auto push = [&](const Entry& e) {
    heap.push_back(e);
    std::push_heap(heap.begin(), heap.end(), later);
    ++w.heap_pushes;
  };
  auto current = [&](const Entry& e) {
    const int32_t r = next[e.pos];
    return sym[e.pos] == e.left && r < n && sym[r] == e.right;
  };
  int32_t sweep = -1;  // the rank whose occurrences are being merged, left to right
  while (true) {
    while (!heap.empty() && !current(heap.front())) {
      std::pop_heap(heap.begin(), heap.end(), later);
      heap.pop_back();
      ++w.heap_pops;
    }
    if (heap.empty() || heap.front().rank != sweep) {
      // The sweep of `sweep` is over: the pairs it formed with a lower rank
      // compete now, as in the plain form's next scan.
      if (!deferred.empty()) {
        for (const Entry& e : deferred) push(e);
        deferred.clear();
        continue;
      }
      if (heap.empty()) break;
      sweep = heap.front().rank;
    }
    const Entry e = heap.front();
    std::pop_heap(heap.begin(), heap.end(), later);
    heap.pop_back();
    ++w.heap_pops;
    // Merge: the symbol at e.pos absorbs the one after it.
    const int32_t r = next[e.pos];
    sym[e.pos] = e.merged;
    sym[r] = -1;
    next[e.pos] = next[r];
    if (next[r] < n) prev[next[r]] = e.pos;
    ++w.merges;
    // The two pairs the new symbol forms with its neighbours.
    for (const int32_t pos : {prev[e.pos], e.pos}) {
      Entry f;
      if (pos < 0 || !entry_at(pos, &f)) continue;
      if (f.rank < sweep) {
        deferred.push_back(f);
        ++w.deferred;
      } else {
        push(f);
      }
    }
  }
  std::vector<int32_t> ids;
  ids.reserve(static_cast<size_t>(n - w.merges));
  for (int32_t i = 0; i < n; i = next[i]) ids.push_back(sym[i]);
  return ids;
}

}  // namespace ropegrad::tok
