// The one JSON reader: a strict parser into a small value type, for the
// files ropegrad reads (a safetensors header, a tokenizer's vocab.json).
// It holds objects, arrays, strings and integers: no reals, true, false or
// null, which none of those files has. Hostile input is an error, never a
// crash: nesting and size are limited, strings must be valid UTF-8, and an
// object may not repeat a key.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "tensor/error.h"

namespace ropegrad {

struct JsonMember;

struct JsonValue {
  enum class Kind { Object, Array, String, Integer };
  Kind kind = Kind::Integer;
  size_t offset = 0;  // byte offset of the value's first character in the text
  int64_t integer = 0;
  std::string str;
  std::vector<JsonMember> members;  // Object: in file order
  std::vector<JsonValue> items;     // Array
};

struct JsonMember {
  std::string key;
  size_t key_offset = 0;  // byte offset of the key's opening quote
  JsonValue value;
};

struct JsonLimits {
  // What the text is, in messages: "unexpected end of header".
  std::string_view document = "text";
  int max_depth = 64;             // "[[[[..." stays off the stack
  size_t max_bytes = 100'000'000;  // a larger text is refused before it is read
};

// A syntax error: where (a byte offset into the text) and what. The caller
// says in which file, as a byte offset or a line and column.
class JsonError : public Error {
 public:
  JsonError(size_t offset, const std::string& reason);
  size_t offset() const { return offset_; }
  const std::string& reason() const { return reason_; }

 private:
  size_t offset_;
  std::string reason_;
};

// Parses all of `text` (white space around the value allowed); throws JsonError.
JsonValue parse_json(std::string_view text, const JsonLimits& limits = {});

// The 1-based line and column of a byte offset, for messages.
struct TextPlace {
  int line = 1, column = 1;
};
TextPlace place_of(std::string_view text, size_t offset);

}  // namespace ropegrad
