// libFuzzer target: a tokenizer's files (vocab.json, merges.txt,
// special_tokens.txt) read by tok::load_tokenizer, then, when they load, an
// encode/decode round trip of a piece of the input. The input holds the three
// files separated by the byte 0x00.
#include <sys/stat.h>

#include <unistd.h>

#include <algorithm>
#include <fstream>
#include <string>


#include "tensor/error.h"
#include "tokenizer/tokenizer.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static const std::string dir = "/tmp/ropegrad-fuzz-tok-" + std::to_string(::getpid());
  ::mkdir(dir.c_str(), 0755);
  const std::string bytes(reinterpret_cast<const char*>(data), size);
  size_t start = 0;
  for (const char* name : {"/vocab.json", "/merges.txt", "/special_tokens.txt"}) {
    const size_t end = std::min(bytes.find('\0', start), bytes.size());
    std::ofstream(dir + name, std::ios::binary) << bytes.substr(std::min(start, bytes.size()), end - std::min(start, end));
    start = end + 1;
  }
  try {
    const ropegrad::tok::Tokenizer tokenizer(ropegrad::tok::load_tokenizer(dir));
    const std::string text = bytes.substr(0, std::min<size_t>(size, 256));
    if (tokenizer.decode_bytes(tokenizer.encode(text)) != text) std::abort();  // the round trip is exact in bytes
  } catch (const ropegrad::Error&) {
  }
  return 0;
}
