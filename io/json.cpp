#include "io/json.h"

#include <set>

#include "tensor/parse_number.h"
#include "io/utf8.h"
#include "tensor/printable.h"

namespace ropegrad {

JsonError::JsonError(size_t offset, const std::string& reason)
    : Error(fmt::format("invalid JSON at byte {}: {}", offset, reason)), offset_(offset), reason_(reason) {}

TextPlace place_of(std::string_view text, size_t offset) {
  TextPlace p;
  for (size_t i = 0; i < offset && i < text.size(); ++i) {
    if (text[i] == '\n') ++p.line, p.column = 1;
    else ++p.column;
  }
  return p;
}

namespace {

bool is_digit(char c) { return c >= '0' && c <= '9'; }

class JsonParser {
 public:
  JsonParser(std::string_view text, const JsonLimits& limits) : text_(text), limits_(limits) {}

  JsonValue parse_document() {
    if (text_.size() > limits_.max_bytes) {
      error(fmt::format("the {} is {} bytes long, over the {}-byte limit", limits_.document, text_.size(),
                        limits_.max_bytes));
    }
    skip_whitespace();
    JsonValue value = parse_value(0);
    skip_whitespace();
    if (pos_ != text_.size()) error(fmt::format("unexpected {} after the top-level value", describe()));
    return value;
  }

 private:
  [[noreturn]] void error(const std::string& what) const { throw JsonError(pos_, what); }

  // The character at pos_, for error messages.
  std::string describe() const {
    if (pos_ >= text_.size()) return fmt::format("end of {}", limits_.document);
    const auto c = static_cast<unsigned char>(text_[pos_]);
    if (c >= 0x20 && c < 0x7F) return fmt::format("'{}'", static_cast<char>(c));
    return fmt::format("byte 0x{:02x}", c);
  }

  bool at(char c) const { return pos_ < text_.size() && text_[pos_] == c; }

  void skip_whitespace() {
    while (at(' ') || at('\n') || at('\r') || at('\t')) ++pos_;
  }

  void expect(char c) {
    if (!at(c)) error(fmt::format("expected '{}', found {}", c, describe()));
    ++pos_;
  }

  JsonValue parse_value(int depth) {
    if (depth > limits_.max_depth) error(fmt::format("nested deeper than {} levels", limits_.max_depth));
    if (pos_ >= text_.size()) error(fmt::format("unexpected end of {}", limits_.document));
    JsonValue v;
    v.offset = pos_;
    const char c = text_[pos_];
    if (c == '{') {
      v.kind = JsonValue::Kind::Object;
      parse_object(v, depth);
    } else if (c == '[') {
      v.kind = JsonValue::Kind::Array;
      parse_array(v, depth);
    } else if (c == '"') {
      v.kind = JsonValue::Kind::String;
      v.str = parse_string();
    } else if (c == '-' || is_digit(c)) {
      v.kind = JsonValue::Kind::Integer;
      v.integer = parse_integer();
    } else {
      error(fmt::format("unexpected {} (a {} holds only objects, arrays, strings and integers)", describe(),
                        limits_.document));
    }
    return v;
  }

  void parse_object(JsonValue& v, int depth) {
    std::set<std::string> seen;
    expect('{');
    skip_whitespace();
    if (at('}')) {
      ++pos_;
      return;
    }
    while (true) {
      skip_whitespace();
      if (!at('"')) error(fmt::format("expected a key string, found {}", describe()));
      JsonMember m;
      m.key_offset = pos_;
      m.key = parse_string();
      if (!seen.insert(m.key).second) error(fmt::format("duplicate key '{}'", m.key));
      skip_whitespace();
      expect(':');
      skip_whitespace();
      m.value = parse_value(depth + 1);
      v.members.push_back(std::move(m));
      skip_whitespace();
      if (at(',')) {
        ++pos_;
        continue;
      }
      if (at('}')) {
        ++pos_;
        return;
      }
      error(fmt::format("expected ',' or '}}' in an object, found {}", describe()));
    }
  }

  void parse_array(JsonValue& v, int depth) {
    expect('[');
    skip_whitespace();
    if (at(']')) {
      ++pos_;
      return;
    }
    while (true) {
      skip_whitespace();
      v.items.push_back(parse_value(depth + 1));
      skip_whitespace();
      if (at(',')) {
        ++pos_;
        continue;
      }
      if (at(']')) {
        ++pos_;
        return;
      }
      error(fmt::format("expected ',' or ']' in an array, found {}", describe()));
    }
  }

  char32_t parse_hex4() {
    if (text_.size() - pos_ < 4) error("truncated \\u escape");
    for (size_t k = 0; k < 4; ++k) {
      if (!std::isxdigit(static_cast<unsigned char>(text_[pos_ + k]))) {
        pos_ += k;
        error(fmt::format("bad hex digit {} in a \\u escape", describe()));
      }
    }
    const auto cp = parse_int64(text_.substr(pos_, 4), 16);
    pos_ += 4;
    return static_cast<char32_t>(*cp);
  }

  // After the 'u' of "\uXXXX": one code point, a surrogate pair joined.
  char32_t parse_unicode_escape() {
    char32_t cp = parse_hex4();
    if (cp >= 0xDC00 && cp <= 0xDFFF) error("lone low surrogate in a \\u escape");
    if (cp >= 0xD800 && cp <= 0xDBFF) {
      if (text_.size() - pos_ < 2 || text_[pos_] != '\\' || text_[pos_ + 1] != 'u') {
        error("high surrogate in a \\u escape is not followed by a low surrogate");
      }
      pos_ += 2;
      const char32_t low = parse_hex4();
      if (low < 0xDC00 || low > 0xDFFF) error("high surrogate in a \\u escape is not followed by a low surrogate");
      cp = 0x10000 + ((cp - 0xD800) << 10) + (low - 0xDC00);
    }
    return cp;
  }

  std::string parse_string() {
    const size_t start = pos_;
    expect('"');
    std::string out;
    while (true) {
      if (pos_ >= text_.size()) {
        pos_ = start;
        error("unterminated string");
      }
      const auto c = static_cast<unsigned char>(text_[pos_]);
      if (c == '"') {
        ++pos_;
        break;
      }
      if (c < 0x20) {
        const std::string byte(1, static_cast<char>(c));
        error(fmt::format("raw control byte {} in the string {} (a raw control character 0x{:02x} must be escaped)",
                          quote_bytes(byte), quote_bytes(out + byte), c));
      }
      ++pos_;
      if (c != '\\') {
        out += static_cast<char>(c);
        continue;
      }
      if (pos_ >= text_.size()) error("unterminated escape");
      const char e = text_[pos_++];
      switch (e) {
        case '"': out += '"'; break;
        case '\\': out += '\\'; break;
        case '/': out += '/'; break;
        case 'b': out += '\b'; break;
        case 'f': out += '\f'; break;
        case 'n': out += '\n'; break;
        case 'r': out += '\r'; break;
        case 't': out += '\t'; break;
        case 'u': append_utf8(out, parse_unicode_escape()); break;
        default:
          --pos_;
          error(fmt::format("unknown escape '\\{}'", e));
      }
    }
    if (const size_t bad = invalid_utf8_at(out); bad != std::string_view::npos) {
      pos_ = start;
      error(fmt::format("string is not valid UTF-8 (at its byte {})", bad));
    }
    return out;
  }

  int64_t parse_integer() {
    const size_t start = pos_;
    if (at('-')) ++pos_;
    if (pos_ >= text_.size() || !is_digit(text_[pos_])) error(fmt::format("expected a digit, found {}", describe()));
    if (text_[pos_] == '0' && pos_ + 1 < text_.size() && is_digit(text_[pos_ + 1])) {
      error("integer with a leading zero");
    }
    while (pos_ < text_.size() && is_digit(text_[pos_])) ++pos_;
    if (at('.') || at('e') || at('E')) error("only integers are allowed here (found a fraction or exponent)");
    const auto n = parse_int64(text_.substr(start, pos_ - start));
    if (!n) error("integer out of the int64 range");
    return *n;
  }

  std::string_view text_;
  const JsonLimits& limits_;
  size_t pos_ = 0;
};

}  // namespace

JsonValue parse_json(std::string_view text, const JsonLimits& limits) {
  return JsonParser(text, limits).parse_document();
}

}  // namespace ropegrad
