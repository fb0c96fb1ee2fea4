// Pre-tokenization: the GPT-2 pattern
//   '(?:[sdmt]|ll|ve|re)| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+
// matched by hand, and the split of a text at special tokens.
#pragma once

#include <functional>
#include <string>
#include <string_view>
#include <vector>

namespace ropegrad::tok {

// End of the pre-token that starts at text[pos] (pos < text.size()).
// A byte that is not valid UTF-8 counts as one character outside \s, \p{L}
// and \p{N}, so any byte string pre-tokenizes without error.
size_t pretoken_end(std::string_view text, size_t pos);

// Calls fn(piece) for each pre-token of text, left to right.
void for_each_pretoken(std::string_view text, const std::function<void(std::string_view)>& fn);

// A piece of a text: either plain text or one special token (its index).
struct Piece {
  std::string_view text;
  int special = -1;
};

// Splits text at occurrences of the special tokens; where two start at the
// same place the longest wins. Empty plain pieces are left out.
std::vector<Piece> split_at_specials(std::string_view text, const std::vector<std::string>& specials);

// The pieces of split_at_specials, found in time linear in the text for any
// mix of specials and text: the next occurrence of each special token is
// remembered and searched for again only once the split has passed it, so
// each special scans each byte about once (split_at_specials searches every
// special from every cut: a run of one special token made it quadratic, 177 s
// for 1 MB in issue 20). encode_linear, encode_stream and count_pretokens
// split with it.
std::vector<Piece> split_at_specials_linear(std::string_view text, const std::vector<std::string>& specials);

// True when pre-tokenizing text[0, pos) and text[pos, end) separately gives
// the same pre-tokens as the whole: the character before pos (ASCII or a
// UTF-8 sequence; an invalid byte counts as a character of its own) is not
// \s and text[pos] is an ASCII space or newline. No pre-token of the pattern
// contains a non-space followed by a space, and no lookahead reaches back
// across such a place.
bool is_safe_cut(std::string_view text, size_t pos);

}  // namespace ropegrad::tok
