// The one place that chooses the form of Tokenizer::encode_pretoken
// (tensor/fast_forms.h): the plain form (ex19-encode, tokenizer/encode.cpp)
// or the heap form (tokenizer/fast/encode_heap.cpp): the same ids, in
// O(n log n) for a long pre-token.
#include "tensor/fast_forms.h"
#include "tokenizer/tokenizer.h"
#include "fast_forms_present.h"  // ROPEGRAD_HAS_<Name>, generated from tensor/fast_forms.def

namespace ropegrad::tok {

#if ROPEGRAD_HAS_EncodeHeap
namespace {
// Pre-tokens at least this long take the heap form. The plain form scans the
// pre-token once per merge rank it applies (up to n times n pair lookups for
// n bytes), but builds no heap and no linked list: below about 8 bytes it is
// the faster one, from 16 on the heap form is at every table size measured
// (1,000 to 50,000 merges, pre-tokens of random letters:
// `ropegrad-encode-bench --crossover`, bench/encode_bench.cpp). Most English
// pre-tokens are shorter than 16 bytes, so prose still runs mostly the
// plain form.
constexpr size_t kHeapFrom = 16;
}  // namespace
#endif

std::vector<int32_t> Tokenizer::encode_pretoken(std::string_view piece) const {
#if ROPEGRAD_HAS_EncodeHeap
  if (piece.size() >= kHeapFrom && fast_forms_enabled()) {
    note_fast_form(FastForm::EncodeHeap);
    return encode_pretoken_heap(piece);
  }
#endif
  return encode_pretoken_plain(piece);
}

}  // namespace ropegrad::tok
