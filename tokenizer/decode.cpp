// decode: token ids back to bytes and text.
#include "tensor/error.h"
#include "tensor/exercise.h"
#include "tokenizer/tokenizer.h"
#include "tokenizer/utf8.h"

namespace ropegrad::tok {

std::string Tokenizer::decode_bytes(const std::vector<int32_t>& ids) const {
  // BEGIN EXERCISE ex19-decode
  std::string out;
  const int64_t n = vocab_size();
  for (size_t i = 0; i < ids.size(); ++i) {
    RG_CHECK(ids[i] >= 0 && ids[i] < n, "decode", "token id {} at position {} is outside the vocabulary [0, {})",
             ids[i], i, n);
    out += model_.vocab[ids[i]];
  }
  return out;
  // END EXERCISE ex19-decode
}

std::string Tokenizer::decode(const std::vector<int32_t>& ids) const {
  // BEGIN EXERCISE ex19-decode
  return replace_invalid_utf8(decode_bytes(ids));
  // END EXERCISE ex19-decode
}

}  // namespace ropegrad::tok
