#include "tokenizer/utf8.h"

#include <algorithm>
#include <array>

namespace ropegrad::tok {

namespace {

struct CodeRange {
  char32_t first, last;
};
#include "tokenizer/unicode_tables.inc"

template <size_t N>
bool in_ranges(const CodeRange (&ranges)[N], char32_t cp) {
  // First range whose last >= cp; cp is inside when first <= cp.
  const CodeRange* it = std::lower_bound(std::begin(ranges), std::end(ranges), cp,
                                         [](const CodeRange& r, char32_t c) { return r.last < c; });
  return it != std::end(ranges) && it->first <= cp;
}

// Length of the longest valid prefix of a UTF-8 sequence at text[pos], and
// the sequence's full length (0 for a byte that can never start one).
// The second-byte ranges exclude overlong forms, surrogates and > U+10FFFF.
int valid_prefix(std::string_view text, size_t pos, int* full) {
  const uint8_t b = static_cast<uint8_t>(text[pos]);
  uint8_t lo = 0x80, hi = 0xBF;
  if (b < 0x80) { *full = 1; return 1; }
  if (b >= 0xC2 && b <= 0xDF) *full = 2;
  else if (b >= 0xE0 && b <= 0xEF) {
    *full = 3;
    if (b == 0xE0) lo = 0xA0;
    if (b == 0xED) hi = 0x9F;
  } else if (b >= 0xF0 && b <= 0xF4) {
    *full = 4;
    if (b == 0xF0) lo = 0x90;
    if (b == 0xF4) hi = 0x8F;
  } else {
    *full = 0;
    return 0;
  }
  int n = 1;
  for (; n < *full && pos + n < text.size(); ++n) {
    const uint8_t c = static_cast<uint8_t>(text[pos + n]);
    if (c < lo || c > hi) break;
    lo = 0x80, hi = 0xBF;  // only the second byte has a narrower range
  }
  return n;
}

}  // namespace

int decode_code_point(std::string_view text, size_t pos, char32_t* cp) {
  int full = 0;
  const int n = valid_prefix(text, pos, &full);
  if (full == 0 || n != full) return 0;
  const uint8_t b = static_cast<uint8_t>(text[pos]);
  char32_t value = full == 1 ? b : full == 2 ? (b & 0x1F) : full == 3 ? (b & 0x0F) : (b & 0x07);
  for (int i = 1; i < full; ++i) value = (value << 6) | (static_cast<uint8_t>(text[pos + i]) & 0x3F);
  *cp = value;
  return full;
}

bool is_letter(char32_t cp) { return in_ranges(kLetterRanges, cp); }
bool is_number(char32_t cp) { return in_ranges(kNumberRanges, cp); }
bool is_space(char32_t cp) { return in_ranges(kSpaceRanges, cp); }

std::string replace_invalid_utf8(std::string_view bytes) {
  std::string out;
  out.reserve(bytes.size());
  size_t pos = 0;
  while (pos < bytes.size()) {
    int full = 0;
    const int n = valid_prefix(bytes, pos, &full);
    if (full != 0 && n == full) {
      out.append(bytes.substr(pos, n));
      pos += n;
    } else {
      append_utf8(out, 0xFFFD);
      pos += std::max(n, 1);  // the valid prefix is one maximal subpart
    }
  }
  return out;
}

size_t incomplete_utf8_tail(std::string_view bytes) {
  for (size_t k = std::min<size_t>(3, bytes.size()); k > 0; --k) {
    int full = 0;
    const size_t start = bytes.size() - k;
    if (valid_prefix(bytes, start, &full) == static_cast<int>(k) && full > static_cast<int>(k)) return k;
  }
  return 0;
}

int64_t first_invalid_utf8(std::string_view bytes) {
  const size_t bad = invalid_utf8_at(bytes);
  return bad == std::string_view::npos ? -1 : static_cast<int64_t>(bad);
}

namespace {
// Printable bytes keep their code point; the other 68 go to 256, 257, ...
const std::array<char32_t, 256>& byte_table() {
  static const std::array<char32_t, 256> table = [] {
    std::array<char32_t, 256> t{};
    char32_t next = 256;
    for (int b = 0; b < 256; ++b) {
      const bool printable = (b >= 0x21 && b <= 0x7E) || (b >= 0xA1 && b <= 0xAC) || (b >= 0xAE);
      t[b] = printable ? static_cast<char32_t>(b) : next++;
    }
    return t;
  }();
  return table;
}
}  // namespace

char32_t byte_to_unicode(uint8_t byte) { return byte_table()[byte]; }

std::string bytes_to_printable(std::string_view bytes) {
  std::string out;
  for (char c : bytes) append_utf8(out, byte_to_unicode(static_cast<uint8_t>(c)));
  return out;
}

bool printable_to_bytes(std::string_view printable, std::string* bytes) {
  static const std::array<int, 324> inverse = [] {
    std::array<int, 324> inv;
    inv.fill(-1);
    for (int b = 0; b < 256; ++b) inv[byte_table()[b]] = b;
    return inv;
  }();
  bytes->clear();
  for (size_t pos = 0; pos < printable.size();) {
    char32_t cp = 0;
    const int n = decode_code_point(printable, pos, &cp);
    if (n == 0 || cp >= inverse.size() || inverse[cp] < 0) return false;
    *bytes += static_cast<char>(inverse[cp]);
    pos += n;
  }
  return true;
}

}  // namespace ropegrad::tok
