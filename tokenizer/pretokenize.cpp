#include "tokenizer/pretokenize.h"

#include "tensor/exercise.h"
#include "tokenizer/utf8.h"

namespace ropegrad::tok {

namespace {

enum class Class { kLetter, kNumber, kSpace, kOther };

// The class and byte length of the character at text[pos].
// ([[maybe_unused]]: a course workspace stubs pretoken_end, their only user.)
[[maybe_unused]] Class char_at(std::string_view text, size_t pos, int* len) {
  char32_t cp = 0;
  *len = decode_code_point(text, pos, &cp);
  if (*len == 0) {
    *len = 1;
    return Class::kOther;  // an invalid byte
  }
  if (is_letter(cp)) return Class::kLetter;
  if (is_number(cp)) return Class::kNumber;
  if (is_space(cp)) return Class::kSpace;
  return Class::kOther;
}

// End of the run of characters of class c starting at pos.
[[maybe_unused]] size_t run_end(std::string_view text, size_t pos, Class c) {
  while (pos < text.size()) {
    int len = 0;
    if (char_at(text, pos, &len) != c) break;
    pos += len;
  }
  return pos;
}

}  // namespace

size_t pretoken_end(std::string_view text, size_t pos) {
  // BEGIN EXERCISE ex19-pretokenize
  const size_t n = text.size();
  // '(?:[sdmt]|ll|ve|re)
  if (text[pos] == '\'' && pos + 1 < n) {
    const char a = text[pos + 1];
    if (a == 's' || a == 'd' || a == 'm' || a == 't') return pos + 2;
    if (pos + 2 < n) {
      const char b = text[pos + 2];
      if ((a == 'l' && b == 'l') || (a == 'v' && b == 'e') || (a == 'r' && b == 'e')) return pos + 3;
    }
  }
  // ' ?\p{L}+', ' ?\p{N}+', ' ?[^\s\p{L}\p{N}]+': an optional space, then a
  // run of one class.
  size_t start = pos;
  if (text[pos] == ' ' && pos + 1 < n) start = pos + 1;
  int len = 0;
  Class c = char_at(text, start, &len);
  if (c != Class::kSpace) return run_end(text, start, c);
  // The character at pos is whitespace (a lone space before whitespace, or
  // any \s). \s+(?!\S): the whole run when it ends the text or... the run
  // without its last character when a non-space follows and that leaves one.
  // Otherwise \s+: the whole run.
  size_t last = pos;  // start of the run's last character
  size_t end = pos;
  while (end < n) {
    c = char_at(text, end, &len);
    if (c != Class::kSpace) break;
    last = end;
    end += len;
  }
  if (end == n || last == pos) return end;
  return last;
  // END EXERCISE ex19-pretokenize
}

void for_each_pretoken(std::string_view text, const std::function<void(std::string_view)>& fn) {
  for (size_t pos = 0; pos < text.size();) {
    const size_t end = pretoken_end(text, pos);
    fn(text.substr(pos, end - pos));
    pos = end;
  }
}

std::vector<Piece> split_at_specials(std::string_view text, const std::vector<std::string>& specials) {
  // BEGIN EXERCISE ex19-pretokenize
  std::vector<Piece> pieces;
  size_t plain_start = 0;
  size_t pos = 0;
  while (pos < text.size()) {
    // Earliest occurrence of any special token at or after pos; longest on a tie.
    size_t best_pos = std::string_view::npos;
    int best = -1;
    for (int i = 0; i < static_cast<int>(specials.size()); ++i) {
      if (specials[i].empty()) continue;
      const size_t at = text.find(specials[i], pos);
      if (at == std::string_view::npos) continue;
      if (at < best_pos || (at == best_pos && specials[i].size() > specials[best].size())) {
        best_pos = at;
        best = i;
      }
    }
    if (best < 0) break;
    if (best_pos > plain_start) pieces.push_back({text.substr(plain_start, best_pos - plain_start), -1});
    pieces.push_back({text.substr(best_pos, specials[best].size()), best});
    pos = plain_start = best_pos + specials[best].size();
  }
  if (plain_start < text.size()) pieces.push_back({text.substr(plain_start), -1});
  return pieces;
  // END EXERCISE ex19-pretokenize
}

std::vector<Piece> split_at_specials_linear(std::string_view text, const std::vector<std::string>& specials) {
  constexpr size_t kNone = std::string_view::npos;
  // next[i]: where specials[i] next occurs at or after the last search's
  // start; kNone when it occurs nowhere further (then never searched again).
  std::vector<size_t> next(specials.size(), 0);
  std::vector<bool> searched(specials.size(), false);
  std::vector<Piece> pieces;
  size_t pos = 0;
  while (pos < text.size()) {
    size_t best_pos = kNone;
    int best = -1;
    for (size_t i = 0; i < specials.size(); ++i) {
      if (specials[i].empty()) continue;
      if (!searched[i] || (next[i] != kNone && next[i] < pos)) {
        next[i] = text.find(specials[i], pos);
        searched[i] = true;
      }
      const size_t at = next[i];
      if (at == kNone) continue;
      // Earliest wins; where two start at the same place, the longest.
      if (at < best_pos || (at == best_pos && specials[i].size() > specials[best].size())) {
        best_pos = at;
        best = static_cast<int>(i);
      }
    }
    if (best < 0) break;
    if (best_pos > pos) pieces.push_back({text.substr(pos, best_pos - pos), -1});
    pieces.push_back({text.substr(best_pos, specials[best].size()), best});
    pos = best_pos + specials[best].size();
  }
  if (pos < text.size()) pieces.push_back({text.substr(pos), -1});
  return pieces;
}

bool is_safe_cut(std::string_view text, size_t pos) {
  if (pos == 0 || pos >= text.size()) return false;
  if (text[pos] != ' ' && text[pos] != '\n') return false;
  // The character that ends at pos: an ASCII byte, or the UTF-8 sequence of up
  // to 4 bytes ending there (a lead byte is never a continuation byte, so the
  // pattern's left-to-right decoding meets the same sequence).
  for (size_t len = 1; len <= 4 && len <= pos; ++len) {
    char32_t cp = 0;
    if (decode_code_point(text, pos - len, &cp) == static_cast<int>(len)) return !is_space(cp);
    if (static_cast<unsigned char>(text[pos - len]) < 0x80) break;
  }
  return true;  // an invalid byte: a character of its own, never \s
}

}  // namespace ropegrad::tok
