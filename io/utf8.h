// UTF-8 written and checked: the encoder of one code point and the validator
// that JSON strings, safetensors names and the tokenizer's files share.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

namespace ropegrad {

// Appends the UTF-8 encoding of cp (1 to 4 bytes; cp at most U+10FFFF).
void append_utf8(std::string& out, char32_t cp);

// Offset of the first byte that breaks UTF-8 (overlong forms, surrogates,
// code points above U+10FFFF and a truncated last character included), or
// std::string_view::npos when `text` is valid.
size_t invalid_utf8_at(std::string_view text);

}  // namespace ropegrad
