// libFuzzer target: encode over text full of special tokens. Each input byte
// below 0x40 becomes one of five special tokens that overlap (one a prefix of
// another, one that ends where another begins); the others are text bytes.
// The ids of encode_linear must equal encode()'s (the exercise's
// split_at_specials, on short texts: it is quadratic in a run of specials)
// and encode_stream's in small chunks, and decode to the text byte for byte.
// Long inputs check that the time stays linear (libFuzzer's -timeout).
#include <cstdlib>
#include <sstream>
#include <string>
#include <vector>

#include "tensor/error.h"
#include "tokenizer/tokenizer.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace ropegrad;
  static const std::vector<std::string> specials = {"<|a|>", "<|b|>", "<|a|><|a|>", "|><|", "<|endoftext|>"};
  static const tok::Tokenizer tokenizer(tok::train_bpe(
      "hello <|a|> world <|b|> the <|a|><|a|> quick |><| brown fox <|endoftext|> a|> <| b", 320, specials));
  std::string text;
  for (size_t i = 0; i < size; ++i) {
    if (data[i] < 0x40) text += specials[data[i] % specials.size()];
    else text += static_cast<char>(data[i]);
  }
  const std::vector<int32_t> ids = tokenizer.encode_linear(text);
  if (tokenizer.decode_bytes(ids) != text) std::abort();
  if (text.size() <= 4096 && tokenizer.encode(text) != ids) std::abort();
  for (const size_t chunk : {size_t{7}, size_t{64}}) {
    std::istringstream in(text);
    std::vector<int32_t> streamed;
    tokenizer.encode_stream(in, [&](const std::vector<int32_t>& part) { streamed.insert(streamed.end(), part.begin(), part.end()); },
                            chunk, size_t{1} << 30);
    if (streamed != ids) std::abort();
  }
  return 0;
}
