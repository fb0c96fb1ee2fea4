// Tokenizer: encode text to token ids with a BPE model, decode ids to text,
// and read/write the model as GPT-2's vocab.json + merges.txt.
#pragma once

#include <cstdint>
#include <functional>
#include <istream>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "tokenizer/bpe_train.h"

namespace ropegrad::tok {

namespace fast {
struct HeapEncodeWork;  // tokenizer/fast/encode_heap.h
}

class Tokenizer {
 public:
  // Checks the model: 256 single bytes present, merges refer to known ids and
  // their concatenation is itself a token, special tokens are in the vocab.
  explicit Tokenizer(BpeModel model);

  const BpeModel& model() const { return model_; }
  int64_t vocab_size() const { return static_cast<int64_t>(model_.vocab.size()); }

  // Special tokens (longest first where they overlap) become their ids; the
  // text between them is pre-tokenized and each pre-token merged by rank.
  // Every encode function is safe to call from several threads at once: the
  // pre-token cache belongs to the call (to the whole stream in encode_stream),
  // and nothing else is written.
  std::vector<int32_t> encode(std::string_view text) const;

  // The ids of encode(text), in time linear in the text for any mix of
  // special tokens and text: the specials are found here, in one pass
  // (split_at_specials_linear), and encode() sees only the plain text between
  // them. A 1 MB run of one special token takes milliseconds, not minutes.
  std::vector<int32_t> encode_linear(std::string_view text) const;

  // Encodes a stream chunk by chunk (chunk_bytes read at a time), cutting
  // only where the pattern would cut and never inside a special token, so
  // the ids equal encode() of the whole text; each part is encode_linear'd. The text held at once stays
  // below about max_buffer_bytes: a run longer than that with no place to cut
  // (no space or newline after a non-space) is cut at a character boundary,
  // the one case where the ids can differ from encode() of the whole.
  void encode_stream(std::istream& in, const std::function<void(const std::vector<int32_t>&)>& emit,
                     size_t chunk_bytes = 1 << 20, size_t max_buffer_bytes = 64 << 20) const;

  // The bytes of the tokens, concatenated; ids must be in range.
  std::string decode_bytes(const std::vector<int32_t>& ids) const;
  // decode_bytes, then invalid UTF-8 replaced with U+FFFD as Python's
  // bytes.decode(errors="replace") does.
  std::string decode(const std::vector<int32_t>& ids) const;

  // The ids of one pre-token (no special tokens inside). A long pre-token
  // goes to encode_pretoken_heap when fast forms are on (the choice and its
  // length threshold are in tokenizer/forms.cpp); any other, to the plain
  // form, encode_pretoken_plain.
  std::vector<int32_t> encode_pretoken(std::string_view piece) const;

  // encode_pretoken's ids by a min-heap of adjacent pairs, in O(n log n) for
  // a pre-token of n bytes (< 2^31): the fast form of ex19-encode, defined in
  // tokenizer/fast/encode_heap.cpp. A learner's workspace that stubs
  // ex19-encode has no definition of it, and nothing there calls it. work,
  // when given, is filled with what the call did.
  std::vector<int32_t> encode_pretoken_heap(std::string_view piece, fast::HeapEncodeWork* work = nullptr) const;

 private:
  // Pre-token -> its ids, filled while one call encodes.
  using PretokenCache = std::unordered_map<std::string, std::vector<int32_t>>;
  std::vector<int32_t> encode(std::string_view text, PretokenCache& cache) const;
  std::vector<int32_t> encode_linear(std::string_view text, PretokenCache& cache) const;
  // encode_pretoken's plain form (ex19-encode, tokenizer/encode.cpp).
  std::vector<int32_t> encode_pretoken_plain(std::string_view piece) const;

  BpeModel model_;
  int32_t byte_id_[256];
  std::unordered_map<uint64_t, std::pair<int32_t, int32_t>> rank_;  // pair -> (rank, merged id)
  std::vector<int32_t> special_id_;
};

// dir/vocab.json, dir/merges.txt and dir/special_tokens.txt (one special
// token per line). Tokens are written with GPT-2's bytes_to_unicode.
// load_tokenizer(dir) reads the three files save_tokenizer wrote: a special
// token that is not in vocab.json is an Error (the files do not belong together).
void save_tokenizer(const BpeModel& model, const std::string& dir);
BpeModel load_tokenizer(const std::string& dir);

// GPT-2's vocab.json and merges.txt at any paths (CS336's
// Tokenizer.from_files), with the special tokens given here: each one absent
// from the vocabulary is added to it, in order, with the next free id.
BpeModel load_tokenizer(const std::string& vocab_path, const std::string& merges_path,
                        const std::vector<std::string>& specials);

// Sets model.specials and appends each special token that is not yet a token
// of model.vocab (CS336's get_tokenizer). Errors, named by op: an empty or
// repeated special token, two tokens with the same bytes.
void add_special_tokens(BpeModel& model, const std::vector<std::string>& specials,
                        const std::string& op = "add_special_tokens");

// A model from a vocabulary (id -> bytes) and merges given as byte pairs, by
// rank, then add_special_tokens. A merge of bytes that are no token is an
// Error naming it; the Tokenizer constructor checks the rest.
BpeModel bpe_model_from_bytes(std::vector<std::string> vocab,
                              const std::vector<std::pair<std::string, std::string>>& merges,
                              const std::vector<std::string>& specials,
                              const std::string& op = "bpe_model_from_bytes");

}  // namespace ropegrad::tok
