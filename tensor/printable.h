// quote_bytes: bytes from a file or the command line, quoted for an error
// message so that the message survives being printed: a NUL does not cut it
// off, a CR does not move the cursor back over it, a binary byte does not
// garble the terminal.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include <fmt/format.h>

namespace ropegrad {

// 'text' in single quotes (in double quotes when it holds a ' and no ", as
// Python's repr does). Printable ASCII and valid UTF-8 sequences stay as they
// are; \ , the quote, \n \r \t are backslash-escaped; every other byte (NUL, other
// control bytes, DEL, a byte that is not part of valid UTF-8) is \xNN. More
// than max_bytes bytes are cut, with "... (N bytes)" after the quote.
inline std::string quote_bytes(std::string_view bytes, size_t max_bytes = 120) {
  const char quote = bytes.find('\'') != std::string_view::npos && bytes.find('"') == std::string_view::npos ? '"' : '\'';
  std::string out(1, quote);
  const size_t n = bytes.size() < max_bytes ? bytes.size() : max_bytes;
  for (size_t i = 0; i < n;) {
    const auto c = static_cast<unsigned char>(bytes[i]);
    if (c == '\\' || c == static_cast<unsigned char>(quote)) {
      out += '\\';
      out += static_cast<char>(c);
    } else if (c == '\n') {
      out += "\\n";
    } else if (c == '\r') {
      out += "\\r";
    } else if (c == '\t') {
      out += "\\t";
    } else if (c >= 0x20 && c < 0x7F) {
      out += static_cast<char>(c);
    } else if (c >= 0xC2 && c <= 0xF4) {
      // A UTF-8 sequence: kept whole when every continuation byte is there
      // (overlong forms and surrogates are rare enough in messages to keep).
      const size_t len = c < 0xE0 ? 2 : c < 0xF0 ? 3 : 4;
      bool ok = i + len <= n;
      for (size_t k = 1; ok && k < len; ++k) ok = (static_cast<unsigned char>(bytes[i + k]) & 0xC0) == 0x80;
      if (ok) {
        out.append(bytes.substr(i, len));
        i += len;
        continue;
      }
      out += fmt::format("\\x{:02x}", c);
    } else {
      out += fmt::format("\\x{:02x}", c);
    }
    ++i;
  }
  out += quote;
  if (n < bytes.size()) out += fmt::format("... ({} bytes)", bytes.size());
  return out;
}

// `text` as a JSON string, quotes included: " and \ backslash-escaped,
// control bytes as \u00XX, valid UTF-8 kept as it is, and each byte that is
// not part of valid UTF-8 (a path may hold any byte) as U+FFFD, so the result
// is always valid JSON. The one JSON string writer of the tree (safetensors
// headers, sweep.json, vocab.json, dp-simulate --json).
inline std::string json_string(std::string_view text) {
  std::string out(1, '"');
  for (size_t i = 0; i < text.size();) {
    const auto c = static_cast<unsigned char>(text[i]);
    if (c == '"' || c == '\\') {
      out += '\\';
      out += static_cast<char>(c);
    } else if (c < 0x20) {
      out += fmt::format("\\u{:04x}", c);
    } else if (c < 0x80) {
      out += static_cast<char>(c);
    } else {
      // A UTF-8 sequence: its lead byte's length, continuation bytes, no
      // overlong form, no surrogate, nothing above U+10FFFF.
      const size_t len = c >= 0xC2 && c <= 0xDF ? 2 : c >= 0xE0 && c <= 0xEF ? 3 : c >= 0xF0 && c <= 0xF4 ? 4 : 0;
      bool ok = len > 0 && i + len <= text.size();
      uint32_t cp = len == 2 ? c & 0x1F : len == 3 ? c & 0x0F : c & 0x07;
      for (size_t k = 1; ok && k < len; ++k) {
        const auto cc = static_cast<unsigned char>(text[i + k]);
        ok = (cc & 0xC0) == 0x80;
        cp = (cp << 6) | (cc & 0x3F);
      }
      ok = ok && !(len == 3 && cp < 0x800) && !(len == 4 && (cp < 0x10000 || cp > 0x10FFFF)) &&
           !(cp >= 0xD800 && cp <= 0xDFFF);
      if (ok) {
        out.append(text.substr(i, len));
        i += len;
        continue;
      }
      out += "\xEF\xBF\xBD";  // U+FFFD, the replacement character, in UTF-8
    }
    ++i;
  }
  out += '"';
  return out;
}

}  // namespace ropegrad
