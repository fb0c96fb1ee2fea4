// One pre-token's merges as the library runs them for long pre-tokens
// (tensor/fast_forms.h): Tokenizer::encode_pretoken_heap, defined in
// tokenizer/fast/encode_heap.cpp, gives the ids of the plain form
// (encode_pretoken's exercise region) in O(n log n) for n bytes.
//
// The plain form scans the whole pre-token once per merge rank it applies,
// up to n pair lookups per rank for n bytes, and the ranks applied grow with
// the table (1 MB of letters with no space, one pre-token, took 88 s at
// 10,000 merges, this form 0.45 s; chapter 19 has the table). Here:
//   * the symbols are a doubly linked list over their starting byte positions
//     (sym, prev, next; a merged-away symbol is dead, sym = -1);
//   * a min-heap holds one entry per adjacent pair that has a rank, keyed by
//     (rank, position): the lowest rank first and, among equal ranks, the
//     leftmost, as the plain form's left-to-right sweep;
//   * popping an entry merges its pair in place and looks up only the two
//     pairs the new symbol forms with its neighbours; an entry whose pair is
//     gone (a symbol dead or changed) is skipped when popped.
// Each merge removes a symbol, so there are at most n - 1 merges, 3n pushes,
// 3n pair lookups and O(n log n) heap comparisons.
//
// One case needs care to give exactly the plain form's ids: the plain form
// merges every occurrence of the lowest-rank pair in one sweep before it
// looks again, so a pair that a merge of rank r forms with a *lower* rank
// waits until the sweep of r is over. A table trained by train_bpe never
// makes one (a token is learned before any merge that uses it), but a loaded
// table may: such entries wait in a list and join the heap when the sweep of
// r ends.
#pragma once

#include <cstdint>

namespace ropegrad::tok::fast {

// What one call of encode_pretoken_heap did (for the tests' bound on work).
struct HeapEncodeWork {
  int64_t pair_lookups = 0;      // lookups in the merge table
  int64_t heap_pushes = 0;       // entries pushed (the initial ones included)
  int64_t heap_pops = 0;         // entries popped, stale ones included
  int64_t heap_comparisons = 0;  // comparisons of two entries in the heap's sifts
  int64_t merges = 0;            // pairs merged
  int64_t deferred = 0;          // entries that waited for the end of a sweep (see above)
};

}  // namespace ropegrad::tok::fast
