// One pre-token's merges by a min-heap of adjacent pairs over a linked list
// of symbols, in O(n log n) (tokenizer/fast/encode_heap.h).
#include "tokenizer/fast/encode_heap.h"

#include <algorithm>
#include <limits>
#include <unordered_map>
#include <utility>
#include <vector>

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

using RankTable = std::unordered_map<uint64_t, std::pair<int32_t, int32_t>>;  // pair -> (rank, merged id)

// The merges of one pre-token, in named steps: the symbols as a linked list,
// the heap of their ranked pairs, and the sweep of one rank at a time.
class HeapEncoder {
 public:
  HeapEncoder(std::string_view piece, const int32_t (&byte_id)[256], const RankTable& rank, fast::HeapEncodeWork& w)
      : n_(static_cast<int32_t>(piece.size())), rank_(rank), w_(w), sym_(n_), prev_(n_), next_(n_) {
    // sym_[i] is the token that starts at byte i (-1 once merged into the
    // symbol on its left), prev_/next_ link the live ones (-1, n: none).
    for (int32_t i = 0; i < n_; ++i) {
      sym_[i] = byte_id[static_cast<uint8_t>(piece[i])];
      prev_[i] = i - 1;
      next_[i] = i + 1;
    }
    heap_.reserve(n_);
    for (int32_t i = 0; i + 1 < n_; ++i) {
      Entry e;
      if (entry_at(i, &e)) heap_.push_back(e);
    }
    w_.heap_pushes += static_cast<int64_t>(heap_.size());
    std::make_heap(heap_.begin(), heap_.end(), Later{&w_});
  }

  // Every merge, lowest rank first and on a tie the leftmost; the ids left.
  std::vector<int32_t> run() {
    while (next_merge()) merge(pop());
    std::vector<int32_t> ids;
    ids.reserve(static_cast<size_t>(n_ - w_.merges));
    for (int32_t i = 0; i < n_; i = next_[i]) ids.push_back(sym_[i]);
    return ids;
  }

 private:
  // The heap's order: the lowest rank on top, on a tie the leftmost.
  struct Later {
    fast::HeapEncodeWork* w;
    bool operator()(const Entry& x, const Entry& y) const {
      ++w->heap_comparisons;
      return x.rank != y.rank ? x.rank > y.rank : x.pos > y.pos;
    }
  };

  // The entry of the pair that starts at pos, if it has a rank.
  bool entry_at(int32_t pos, Entry* e) {
    const int32_t r = next_[pos];
    if (r >= n_) return false;
    ++w_.pair_lookups;
    const auto it = rank_.find(pair_key(sym_[pos], sym_[r]));
    if (it == rank_.end()) return false;
    *e = Entry{it->second.first, pos, sym_[pos], sym_[r], it->second.second};
    return true;
  }

  bool current(const Entry& e) const {
    const int32_t r = next_[e.pos];
    return sym_[e.pos] == e.left && r < n_ && sym_[r] == e.right;
  }

  void push(const Entry& e) {
    heap_.push_back(e);
    std::push_heap(heap_.begin(), heap_.end(), Later{&w_});
    ++w_.heap_pushes;
  }

  Entry pop() {
    const Entry e = heap_.front();
    std::pop_heap(heap_.begin(), heap_.end(), Later{&w_});
    heap_.pop_back();
    ++w_.heap_pops;
    return e;
  }

  // Drops stale entries; when the sweep of one rank is over, the pairs it
  // formed with a lower rank compete, as in the plain form's next scan.
  // False when nothing is left to merge.
  bool next_merge() {
    while (true) {
      while (!heap_.empty() && !current(heap_.front())) pop();
      if (!heap_.empty() && heap_.front().rank == sweep_) return true;
      if (deferred_.empty()) break;
      for (const Entry& e : deferred_) push(e);
      deferred_.clear();
    }
    if (heap_.empty()) return false;
    sweep_ = heap_.front().rank;
    return true;
  }

  // The symbol at e.pos absorbs the one after it; the two pairs the new
  // symbol forms with its neighbours join the heap, or wait for the end of
  // the sweep when their rank is lower than the sweep's.
  void merge(const Entry& e) {
    const int32_t r = next_[e.pos];
    sym_[e.pos] = e.merged;
    sym_[r] = -1;
    next_[e.pos] = next_[r];
    if (next_[r] < n_) prev_[next_[r]] = e.pos;
    ++w_.merges;
    for (const int32_t pos : {prev_[e.pos], e.pos}) {
      Entry f;
      if (pos < 0 || !entry_at(pos, &f)) continue;
      if (f.rank < sweep_) {
        deferred_.push_back(f);
        ++w_.deferred;
      } else {
        push(f);
      }
    }
  }

  int32_t n_;
  const RankTable& rank_;
  fast::HeapEncodeWork& w_;
  std::vector<int32_t> sym_, prev_, next_;
  std::vector<Entry> heap_, deferred_;
  int32_t sweep_ = -1;  // the rank whose occurrences are being merged, left to right
};

}  // namespace

std::vector<int32_t> Tokenizer::encode_pretoken_heap(std::string_view piece, fast::HeapEncodeWork* work) const {
  RG_CHECK(piece.size() < static_cast<size_t>(std::numeric_limits<int32_t>::max()), "encode_pretoken_heap",
           "a pre-token of {} bytes is too long (at most 2^31 - 2)", piece.size());
  fast::HeapEncodeWork local;
  fast::HeapEncodeWork& w = work != nullptr ? *work : local;
  w = fast::HeapEncodeWork{};
  return HeapEncoder(piece, byte_id_, rank_, w).run();
}

}  // namespace ropegrad::tok
