// ex19-encode: Tokenizer::encode_pretoken and Tokenizer::encode
// (tokenizer/encode.cpp), with the Python reference's model and encodings
// (tests/fixtures/make_bpe_fixtures.py) read from the fixture files.
#include <algorithm>
#include <set>

#include "course/checks/tok_util.h"
#include "tokenizer/pretokenize.h"
#include "tokenizer/tokenizer.h"

namespace ropegrad::course {
namespace {

using tokcheck::id_list;
using tokcheck::literal;
using tok::BpeModel;
using tok::Tokenizer;

std::string tokens_str(const BpeModel& model, const std::vector<int32_t>& ids, size_t from, size_t to) {
  std::string out = "[";
  for (size_t i = from; i < to && i < ids.size(); ++i) {
    const bool known = ids[i] >= 0 && ids[i] < static_cast<int32_t>(model.vocab.size());
    if (i > from) out += ' ';
    if (known) {
      out += literal(model.vocab[ids[i]]);
    } else {
      out += '?';
      out += std::to_string(ids[i]);
    }
  }
  return out + "]";
}

// The rank of the merge that made token id, or -1 for a byte or a special token.
int64_t rank_of(const BpeModel& model, int32_t id) {
  const std::string& bytes = model.vocab[static_cast<size_t>(id)];
  for (size_t r = 0; r < model.merges.size(); ++r)
    if (model.vocab[model.merges[r].first] + model.vocab[model.merges[r].second] == bytes) return static_cast<int64_t>(r);
  return -1;
}

// " (merge ranks: "st" 52, "er" 6)": the rank of the merge that made each
// multi-byte token of ids[from, to), what decides the order merges apply in.
std::string ranks_of(const BpeModel& model, const std::vector<int32_t>& ids, size_t from, size_t to) {
  std::string out;
  for (size_t k = from; k < to && k < ids.size(); ++k)
    if (const int64_t r = rank_of(model, ids[k]); r >= 0)
      out += (out.empty() ? "" : ", ") + literal(model.vocab[ids[k]]) + " " + std::to_string(r);
  return out.empty() ? "" : " (merge ranks: " + out + ")";
}


// "; ...": when the reference's stretch holds a token made by a merge of lower
// rank than one of yours that it does not hold, both (a fact of the two
// stretches, with the rule it breaks); "" otherwise.
std::string rank_order(const BpeModel& model, const std::vector<int32_t>& got, size_t g0, size_t g1,
                       const std::vector<int32_t>& want, size_t w0, size_t w1) {
  const std::set<int32_t> mine(got.begin() + g0, got.begin() + g1), theirs(want.begin() + w0, want.begin() + w1);
  int64_t lowest_theirs = -1, highest_mine = -1;
  int32_t t_id = 0, m_id = 0;
  for (int32_t id : theirs) {
    const int64_t r = mine.count(id) ? -1 : rank_of(model, id);
    if (r >= 0 && (lowest_theirs < 0 || r < lowest_theirs)) lowest_theirs = r, t_id = id;
  }
  for (int32_t id : mine) {
    const int64_t r = theirs.count(id) ? -1 : rank_of(model, id);
    if (r > highest_mine) highest_mine = r, m_id = id;
  }
  if (lowest_theirs < 0 || highest_mine < 0 || lowest_theirs >= highest_mine) return "";
  return "; your " + literal(model.vocab[m_id]) + " (rank " + std::to_string(highest_mine) + ") was merged where the "
         "reference's " + literal(model.vocab[t_id]) + " (rank " + std::to_string(lowest_theirs) +
         ") was not: of the pairs in a pre-token, the merge of lowest rank applies first";
}

// "; token 3 ("e t") spans the end of the pre-token "the": ...": the first
// token of `ids` that crosses a pre-token boundary of text's plain pieces
// (ex19-pretokenize's for_each_pretoken, on the text between special tokens);
// "" when none does.
std::string crossing(const Tokenizer& tok, const std::string& text, const std::vector<int32_t>& ids) {
  const BpeModel& model = tok.model();
  std::set<size_t> ends;  // byte offsets where a pre-token or a special token ends
  for (const tok::Piece& piece : tok::split_at_specials(text, model.specials)) {
    const size_t base = static_cast<size_t>(piece.text.data() - text.data());
    if (piece.special >= 0) {
      ends.insert(base + piece.text.size());
      continue;
    }
    const auto note_end = [&](std::string_view p) {
      ends.insert(static_cast<size_t>(p.data() - text.data()) + p.size());
    };
    tok::for_each_pretoken(piece.text, note_end);
  }
  size_t at = 0;
  for (size_t k = 0; k < ids.size(); ++k) {
    const std::string& bytes = model.vocab[ids[k]];
    const auto inside = ends.upper_bound(at);
    if (inside != ends.end() && *inside < at + bytes.size())
      return "; token " + std::to_string(k) + " (" + literal(bytes) + ") spans the end of a pre-token at byte " +
             std::to_string(*inside) + " of the text (" + literal(text.substr(at, *inside - at)) +
             " | " + literal(text.substr(*inside, at + bytes.size() - *inside)) + "): merges never cross a pre-token's end";
    at += bytes.size();
  }
  return "";
}

// A pre-token or a special token of text: its bytes [begin, end).
struct Span {
  size_t begin, end;
};

// text's pre-tokens and special tokens, in order.
std::vector<Span> pretoken_spans(const Tokenizer& tok, const std::string& text) {
  std::vector<Span> spans;
  for (const tok::Piece& piece : tok::split_at_specials(text, tok.model().specials)) {
    const size_t base = static_cast<size_t>(piece.text.data() - text.data());
    if (piece.special >= 0) {
      spans.push_back({base, base + piece.text.size()});
      continue;
    }
    const auto add_span = [&](std::string_view pretoken) {
      const size_t at = static_cast<size_t>(pretoken.data() - text.data());
      spans.push_back({at, at + pretoken.size()});
    };
    tok::for_each_pretoken(piece.text, add_span);
  }
  return spans;
}

// ": they stop spelling it at token k (byte b), ...": where the tokens first
// differ from the text's bytes, in which pre-token, and, when the ids from
// there are the reference's ids of an earlier pre-token (another text), which.
std::string where_spelling_stops(const Tokenizer& tok, const std::string& text, const std::vector<int32_t>& got,
                                 const std::vector<int32_t>& expected) {
  const BpeModel& model = tok.model();
  size_t at = 0, k = 0;
  for (; k < got.size(); ++k) {
    const std::string& bytes = model.vocab[got[k]];
    if (text.compare(at, bytes.size(), bytes) != 0) break;
    at += bytes.size();
  }
  if (k == got.size()) {
    // The last token a special one: what follows it in the text was never encoded.
    const bool after_special =
        !got.empty() && std::find(model.specials.begin(), model.specials.end(), model.vocab[got.back()]) != model.specials.end();
    return fmt::format(": the {} tokens spell the text's first {} bytes, then end{}", got.size(), at,
                       after_special ? fmt::format(", right after the special token {} (the text goes on after it "
                                                   "for {} more bytes)",
                                                   literal(model.vocab[got.back()]), text.size() - at)
                                     : "");
  }
  const std::vector<Span> spans = pretoken_spans(tok, text);
  // The reference's ids of each span (they never cross one), and the span holding byte `at`.
  std::vector<std::vector<int32_t>> ids_of(spans.size());
  size_t here = spans.size();
  {
    size_t byte = 0, s = 0;
    for (int32_t id : expected) {
      while (s < spans.size() && byte >= spans[s].end) ++s;
      if (s < spans.size()) ids_of[s].push_back(id);
      byte += model.vocab[id].size();
    }
    for (size_t i = 0; i < spans.size(); ++i)
      if (spans[i].begin <= at && at < spans[i].end) here = i;
  }
  const std::string& bytes = model.vocab[got[k]];
  std::string out = fmt::format(": they stop spelling it at token {} (byte {}): {} where the text has {}", k, at,
                                literal(bytes), literal(text.substr(at, bytes.size())));
  if (here == spans.size()) return out;
  const Span& span = spans[here];
  out += fmt::format(", in the pre-token {} (bytes {} to {})", literal(text.substr(span.begin, span.end - span.begin)),
                     span.begin, span.end);
  if (span.begin != at) return out;
  // At a pre-token's start: are the ids from here an earlier pre-token's (of another text)?
  const std::string own = text.substr(span.begin, span.end - span.begin);
  for (size_t i = here; i-- > 0;) {
    const std::vector<int32_t>& e = ids_of[i];
    const std::string other = text.substr(spans[i].begin, spans[i].end - spans[i].begin);
    if (e.empty() || other == own || k + e.size() > got.size()) continue;
    if (!std::equal(e.begin(), e.end(), got.begin() + static_cast<std::ptrdiff_t>(k))) continue;
    return out + fmt::format("; the ids from there, {}, are the reference's ids of the earlier pre-token {} (bytes {} "
                             "to {})",
                             id_list(e), literal(other), spans[i].begin, spans[i].end);
  }
  return out;
}

// "; they spell the text's pre-tokens in reverse order" when they do; "" otherwise.
std::string reversed_pretokens(const std::string& text, const std::string& spelled, const std::vector<Span>& spans) {
  if (spans.size() < 2 || spelled.size() != text.size()) return "";
  std::string reversed;
  for (size_t i = spans.size(); i-- > 0;) reversed += text.substr(spans[i].begin, spans[i].end - spans[i].begin);
  return reversed == spelled ? fmt::format("; they spell the text's {} pre-tokens in reverse order, the last first",
                                           spans.size())
                             : "";
}

// How the spelled bytes relate to the text as a whole, when simply: only its
// last bytes (from a pre-token's start), or the text with some pre-tokens
// written twice in a row. "" otherwise.
std::string spelled_relation(const Tokenizer& tok, const std::string& text, const std::string& spelled) {
  const std::vector<Span> spans = pretoken_spans(tok, text);
  const auto piece = [&](const Span& sp) { return text.substr(sp.begin, sp.end - sp.begin); };
  if (spelled.size() < text.size() && text.compare(text.size() - spelled.size(), spelled.size(), spelled) == 0) {
    const size_t from = text.size() - spelled.size();
    size_t first = spans.size();
    for (size_t i = 0; i < spans.size(); ++i)
      if (spans[i].begin == from) first = i;
    if (first < spans.size()) {
      return fmt::format("; they spell only the text's last {} bytes, its pre-tokens from {} (bytes {} to {}) on: "
                         "what came before them is not in the output",
                         spelled.size(), literal(piece(spans[first])), spans[first].begin, spans[first].end);
    }
  }
  // The text with some pre-tokens twice: each span's bytes, then maybe the same bytes again.
  size_t at = 0;
  std::vector<size_t> doubled;
  for (size_t i = 0; i < spans.size(); ++i) {
    const std::string bytes = piece(spans[i]);
    if (spelled.compare(at, bytes.size(), bytes) != 0) return reversed_pretokens(text, spelled, spans);
    at += bytes.size();
    // Twice only when the text does not go on with the same bytes itself.
    const bool next_same = i + 1 < spans.size() && piece(spans[i + 1]) == bytes;
    if (!next_same && spelled.compare(at, bytes.size(), bytes) == 0) {
      at += bytes.size();
      doubled.push_back(i);
    }
  }
  if (at != spelled.size() || doubled.empty()) return reversed_pretokens(text, spelled, spans);
  // Is each doubled one the first occurrence of its bytes, and is every first occurrence doubled?
  std::set<std::string> seen;
  bool first_occurrences = true;
  size_t d = 0;
  for (size_t i = 0; i < spans.size(); ++i) {
    const bool is_first = seen.insert(piece(spans[i])).second;
    const bool is_doubled = d < doubled.size() && doubled[d] == i;
    if (is_doubled) ++d;
    first_occurrences = first_occurrences && is_first == is_doubled;
  }
  std::string listed;
  for (size_t k = 0; k < std::min<size_t>(3, doubled.size()); ++k)
    listed += fmt::format("{}{} (bytes {} to {})", k ? ", " : "", literal(piece(spans[doubled[k]])),
                          spans[doubled[k]].begin, spans[doubled[k]].end);
  return fmt::format("; they spell the text with {} of its {} pre-tokens written twice in a row: {}{}{}", doubled.size(),
                     spans.size(), listed, doubled.size() > 3 ? ", ..." : "",
                     first_occurrences ? " (each pre-token's first occurrence in the text, and only that one)" : "");
}

// Compares encode(text) with the reference's ids; on a difference shows the
// first stretch that differs (the tokens, their ids and the ranks of the
// merges that made them) and, when a token crosses a pre-token's end, which.
void expect_encoding(const Tokenizer& tok, const std::string& text, const std::vector<int32_t>& expected,
                     const std::string& label) {
  const std::vector<int32_t> got = tok.encode(text);
  if (got == expected) return;
  const BpeModel& model = tok.model();
  const int32_t n = static_cast<int32_t>(model.vocab.size());
  std::string spelled;
  for (int32_t id : got) {
    if (id < 0 || id >= n) {
      ADD_FAILURE() << label << ": id " << id << " is outside the vocabulary [0, " << n << ")";
      return;
    }
    spelled += model.vocab[id];
  }
  if (spelled != text) {
    const std::string relation = spelled_relation(tok, text, spelled);
    ADD_FAILURE() << label << ": the tokens do not spell the text (" << spelled.size() << " bytes for "
                  << text.size() << ")" << (relation.empty() ? where_spelling_stops(tok, text, got, expected) : relation);
    return;
  }
  // The first difference, and the shortest stretch after it where both sides end at the same byte.
  size_t i = 0;
  while (i < got.size() && i < expected.size() && got[i] == expected[i]) ++i;
  size_t g = i, e = i, gb = 0, eb = 0;
  do {
    if (gb <= eb && g < got.size()) gb += model.vocab[got[g++]].size();
    else if (e < expected.size()) eb += model.vocab[expected[e++]].size();
    else break;
  } while (gb != eb);
  ADD_FAILURE() << label << " at token " << i << ": " << tokens_str(model, got, i, g) << " = "
                << id_list(std::vector<int32_t>(got.begin() + i, got.begin() + g)) << ranks_of(model, got, i, g)
                << ", the Python reference has " << tokens_str(model, expected, i, e) << " = "
                << id_list(std::vector<int32_t>(expected.begin() + i, expected.begin() + e))
                << ranks_of(model, expected, i, e) << rank_order(model, got, i, g, expected, i, e)
                << crossing(tok, text, got);
}

TEST(ex19_encode, no_token_crosses_a_pre_token) {
  // A tokenizer whose merges join bytes that pre-tokenization keeps apart
  // (spaces with spaces and with letters, letters with digits, punctuation):
  // encode must still encode each pre-token alone.
  BpeModel model = tokcheck::byte_model();
  const std::vector<std::string> joined = {"  ", "a ", " b", "b1", "1,", ",c", "   ", "\n\n"};
  for (const std::string& t : joined) {
    model.merges.push_back({static_cast<uint8_t>(t[0]), static_cast<int32_t>(t.size() == 2 ? static_cast<uint8_t>(t[1]) : 256)});
    model.vocab.push_back(t);
  }
  const Tokenizer tok(model);
  const std::string text = "a  b1,c   a\n\nb";
  const std::vector<int32_t> got = tok.encode(text);
  // Where a token ends is measured along the text: only tokens that spell it can cross a pre-token's end.
  std::string spelled;
  for (int32_t id : got) spelled += id >= 0 && id < static_cast<int32_t>(model.vocab.size()) ? model.vocab[id] : "?";
  if (spelled != text) {
    const std::string relation = spelled_relation(tok, text, spelled);
    ADD_FAILURE() << "encode(" << literal(text) << ") = " << tokens_str(model, got, 0, got.size())
                  << ": the tokens do not spell the text (" << spelled.size() << " bytes for " << text.size() << ")"
                  << relation;
    return;
  }
  const std::string found = crossing(tok, text, got);
  if (!found.empty()) ADD_FAILURE() << "encode(" << literal(text) << ") = " << tokens_str(model, got, 0, got.size()) << found.substr(1);
}

// The one merge (b, c) in "bcx", "abcx", "aabcx", "aaabcx" (the pair at
// positions 0 to 3, a byte after it) and in "aabc" (the pair last): each
// must hold the token "bc". Whatever the scan, every pair of a pre-token is
// looked at, the last one too.
TEST(ex19_encode, a_pair_is_found_at_every_position) {
  BpeModel model = tokcheck::byte_model();
  model.vocab.push_back("bc");
  model.merges.push_back({'b', 'c'});
  const Tokenizer tok(model);
  const std::vector<std::string> texts = {"bcx", "abcx", "aabcx", "aaabcx", "aabc"};
  std::vector<std::string> merged, missed;
  for (const std::string& text : texts) {
    const std::vector<int32_t> got = tok.encode(text);
    std::string spelled;
    for (int32_t id : got) spelled += id >= 0 && id < static_cast<int32_t>(model.vocab.size()) ? model.vocab[id] : "?";
    std::vector<int32_t> want;
    for (size_t i = 0; i < text.size(); ++i) {
      if (text.compare(i, 2, "bc") == 0) want.push_back(256), ++i;
      else want.push_back(static_cast<uint8_t>(text[i]));
    }
    if (spelled != text) {  // what the tokens spell says more than where the pair is
      expect_encoding(tok, text, want, "\"" + text + "\" with the one merge (b, c)");
      return;
    }
    (std::find(got.begin(), got.end(), 256) != got.end() ? merged : missed).push_back("\"" + text + "\"");
  }
  if (missed.empty()) return;
  const auto list = [](const std::vector<std::string>& v) {
    std::string s;
    for (size_t i = 0; i < v.size(); ++i) s += (i ? ", " : "") + v[i];
    return s.empty() ? std::string("none") : s;
  };
  const bool only_last = missed.size() == 1 && missed[0] == "\"aabc\"";
  ADD_FAILURE() << "with the one merge (b, c): the pair is merged in " << list(merged) << " and left as b, c in "
                << list(missed)
                << (merged.empty() ? ": the merge applies nowhere, at any position"
                    : only_last    ? ": only where it is the pre-token's last pair is it left (the scan stops one pair "
                                     "short of the end)"
                                   : ": the scan for a pair to merge does not look at every position");
}

TEST(ex19_encode, merges_apply_in_rank_order_not_left_to_right) {
  COURSE_REQUIRES("a_pair_is_found_at_every_position");
  // Ranks: 0 (b, c), 1 (a, b), 2 (ab, c). "abc" is a + bc (rank 0 first, and
  // (a, bc) is no merge); taking the leftmost mergeable pair gives ab + c, then abc.
  BpeModel model = tokcheck::byte_model();
  model.vocab.insert(model.vocab.end(), {"bc", "ab", "abc"});
  model.merges = {{'b', 'c'}, {'a', 'b'}, {257, 'c'}};
  const Tokenizer tok(model);
  expect_encoding(tok, "abc", {'a', 256}, "\"abc\"");
  expect_encoding(tok, "abcabc ab", {'a', 256, 'a', 256, ' ', 257}, "\"abcabc ab\"");
}

// Merged tokens numbered otherwise than their ranks (a vocabulary loaded
// from a file numbers them its own way): ranks 0 (c, d) -> id 257,
// 1 (a, b) -> id 258, 2 (b, c) -> id 256. "abcd" is ab + cd; choosing the
// pair whose merged token has the smallest id gives a + bc + d, which no
// rank order and neither leftmost nor rightmost first gives (and the check
// above has ruled out the reverse rank order).
TEST(ex19_encode, ranks_not_token_ids_order_the_merges) {
  COURSE_REQUIRES("merges_apply_in_rank_order_not_left_to_right");
  BpeModel model = tokcheck::byte_model();
  model.vocab.insert(model.vocab.end(), {"bc", "cd", "ab"});  // ids 256, 257, 258
  model.merges = {{'c', 'd'}, {'a', 'b'}, {'b', 'c'}};          // ranks 0, 1, 2
  const Tokenizer tok(model);
  if (tok.encode("abcd") == std::vector<int32_t>{'a', 256, 'd'}) {
    ADD_FAILURE() << "\"abcd\" with ranks 0 (c, d) -> id 257, 1 (a, b) -> id 258, 2 (b, c) -> id 256 encodes as "
                     "a + bc + d, expected ab + cd: (b, c) was merged first, the pair whose merged token has the "
                     "smallest id (256) but the largest rank (2); the rank decides, and a token's id need not "
                     "follow it";
    return;
  }
  expect_encoding(tok, "abcd", {258, 257}, "\"abcd\" with merged ids not in rank order");
}

TEST(ex19_encode, special_tokens_are_single_ids_the_longest_first) {
  BpeModel model = tokcheck::byte_model({"<|a|>", "<|a|><|a|>"});
  const Tokenizer tok(model);
  {
    // The special's id followed by its own text's bytes: it was encoded as text too.
    const std::vector<int32_t> got = tok.encode("x<|a|>y");
    const std::vector<int32_t> both = {'x', 256, '<', '|', 'a', '|', '>', 'y'};
    if (got == both) {
      ADD_FAILURE() << "\"x<|a|>y\" encodes as [x, 256 (<|a|>), <, |, a, |, >, y]: the special token's id, then its "
                       "text again as bytes: a special piece is also encoded as text, where its id alone belongs";
      return;
    }
  }
  expect_encoding(tok, "x<|a|><|a|>y<|a|>", {'x', 257, 'y', 256}, "\"x<|a|><|a|>y<|a|>\"");
  expect_encoding(tok, "<|a|><|a|><|a|>", {257, 256}, "\"<|a|><|a|><|a|>\"");
}

// A vocabulary that holds a merge before its special token (as a GPT-2 file
// does: <|endoftext|> is its last id): the bytes, "ab" at 256, "<|s|>" at 257.
// A special token's id is the one the vocabulary gives its bytes.
TEST(ex19_encode, a_special_token_has_the_id_the_vocabulary_gives_it) {
  BpeModel model = tokcheck::byte_model();
  model.vocab.push_back("ab");
  model.merges.push_back({'a', 'b'});
  model.vocab.push_back("<|s|>");
  model.specials = {"<|s|>"};
  const Tokenizer tok(model);
  const std::vector<int32_t> got = tok.encode("<|s|>ab");
  if (got == std::vector<int32_t>{257, 256}) return;
  // The text after the special encoded right ("ab" as 256) and the special as another id of the vocabulary.
  if (got.size() == 2 && got[1] == 256 && got[0] != 257 && got[0] >= 0 && got[0] < 258) {
    ADD_FAILURE() << "\"<|s|>ab\" with the vocabulary's bytes, \"ab\" at id 256 (the one merge) and the special "
                  << "token \"<|s|>\" at id 257: encodes as " << tokcheck::id_list(got) << ", the special as id " << got[0]
                  << " (" << literal(model.vocab[static_cast<size_t>(got[0])]) << "), where 257, the id the vocabulary "
                  << "gives its bytes, belongs";
    return;
  }
  expect_encoding(tok, "<|s|>ab", {257, 256}, "\"<|s|>ab\" (\"ab\" at 256, \"<|s|>\" at 257)");
}

TEST(ex19_encode, special_tokens_never_merge_with_their_neighbours) {
  // Ids from the Python reference (tests/fixtures/make_bpe_fixtures.py's encode).
  const Tokenizer tok(tokcheck::reference_model());
  expect_encoding(tok, "the<|endoftext|>the", {116, 258, 256, 116, 258}, "\"the<|endoftext|>the\"");
  expect_encoding(tok, "<|endoftext|><|pad|><|endoftext|>", {256, 257, 256}, "\"<|endoftext|><|pad|><|endoftext|>\"");
  expect_encoding(tok, "they're there", {116, 258, 121, 39, 264, 263, 264}, "\"they're there\"");
}

// A pre-token merges round after round until no pair of it has a rank:
// ranks 0 (a, b), 1 (ab, c), 2 (abc, d), so "abcd" takes three rounds, each
// merging the pair the last one made; " abab" and "cab" take one and two.
TEST(ex19_encode, a_pre_token_merges_until_no_pair_has_a_rank) {
  BpeModel model = tokcheck::byte_model();
  model.vocab.insert(model.vocab.end(), {"ab", "abc", "abcd"});
  model.merges = {{'a', 'b'}, {256, 'c'}, {257, 'd'}};
  const Tokenizer tok(model);
  const std::vector<std::pair<std::string, std::vector<int32_t>>> cases = {
      {"abcd", {258}}, {"abc", {257}}, {"abdabc", {256, 'd', 257}}};
  for (const auto& [text, want] : cases) {
    const std::vector<int32_t> got = tok.encode(text);
    if (got == want) continue;
    // How many rounds the ids show: each merged token's rank + 1 (ab 1, abc 2, abcd 3).
    int rounds = 0, want_rounds = 0;
    for (const int32_t id : got) rounds = std::max(rounds, id >= 256 ? id - 255 : 0);
    for (const int32_t id : want) want_rounds = std::max(want_rounds, id >= 256 ? id - 255 : 0);
    std::string spelled;
    for (const int32_t id : got) {
      spelled += (spelled.empty() ? "" : " ") +
                 (id >= 0 && id < static_cast<int32_t>(model.vocab.size()) ? literal(model.vocab[id]) : std::to_string(id));
    }
    if (rounds == 1 && want_rounds > 1) {
      ADD_FAILURE() << "\"" << text << "\" (ranks 0 (a, b), 1 (ab, c), 2 (abc, d)) encodes as [" << spelled
                    << "]: after the first merge no other applies, where the reference merges " << want_rounds
                    << " times, each round the lowest-ranked pair of what the last one left";
      return;
    }
    expect_encoding(tok, text, want, "\"" + text + "\" (ranks 0 (a, b), 1 (ab, c), 2 (abc, d))");
    return;
  }
}

// Overlapping occurrences of the chosen pair merge from the left, each
// token joining one merge: "aaa" with (a, a) -> "aa" is ["aa", "a"], and
// "aaaaa" is ["aa", "aa", "a"] (the reference's merge of a word: scan left to
// right, merge, skip past the merged pair).
TEST(ex19_encode, overlapping_occurrences_merge_from_the_left) {
  BpeModel model = tokcheck::byte_model();
  model.vocab.push_back("aa");
  model.merges = {{'a', 'a'}};
  const Tokenizer tok(model);
  const std::vector<int32_t> got = tok.encode("aaa");
  if (got == std::vector<int32_t>{'a', 256}) {
    ADD_FAILURE() << "\"aaa\" with the one merge (a, a) encodes as [\"a\" \"aa\"]: the rightmost occurrence merged, "
                     "where the reference merges from the left, [\"aa\" \"a\"]";
    return;
  }
  expect_encoding(tok, "aaa", {256, 'a'}, "\"aaa\" with the one merge (a, a)");
  expect_encoding(tok, "aaaaa", {256, 256, 'a'}, "\"aaaaa\" with the one merge (a, a)");
}

// The pair (a, b) has a rank and (b, a) none: "ab" merges, "ba" does not.
TEST(ex19_encode, a_pair_merges_in_its_own_order) {
  BpeModel model = tokcheck::byte_model();
  model.vocab.push_back("ab");
  model.merges = {{'a', 'b'}};
  const Tokenizer tok(model);
  const std::vector<int32_t> ab = tok.encode("ab"), ba = tok.encode("ba");
  if (ab == std::vector<int32_t>{'a', 'b'} && ba == std::vector<int32_t>{256}) {
    ADD_FAILURE() << "with one merge, (a, b) -> \"ab\" (id 256): \"ab\" is not merged and \"ba\" becomes [256] (\"ab\"): "
                     "the pair (b, a) got the rank of (a, b), and (a, b) none: the pair is looked up with its two "
                     "tokens in the other order";
    return;
  }
  expect_encoding(tok, "ab", {256}, "\"ab\" with the one merge (a, b)");
  expect_encoding(tok, "ba", {'b', 'a'}, "\"ba\" with the one merge (a, b)");
}

// Each occurrence of a pre-token encodes as the pre-token alone does (the
// second and third through the call's cache): "the the the".
TEST(ex19_encode, a_repeated_pre_token_encodes_as_its_first) {
  const BpeModel model = tokcheck::reference_model();
  const std::string text = "the the the";
  const std::vector<std::string> pieces = {"the", " the", " the"};
  std::vector<std::vector<int32_t>> alone;
  std::vector<int32_t> want;
  for (const std::string& piece : pieces) {
    alone.push_back(Tokenizer(model).encode(piece));  // a tokenizer of its own: an empty cache
    want.insert(want.end(), alone.back().begin(), alone.back().end());
  }
  const std::vector<int32_t> got = Tokenizer(model).encode(text);
  if (got == want) return;
  // The cache is to blame only when the tokens spell the text, or its start (ids missing after it);
  // otherwise say what they spell.
  std::string spelled;
  for (int32_t id : got) spelled += id >= 0 && id < static_cast<int32_t>(model.vocab.size()) ? model.vocab[id] : "?";
  if (text.compare(0, spelled.size(), spelled) != 0 || spelled.size() > text.size()) {
    expect_encoding(Tokenizer(model), text, want, "\"" + text + "\"");
    return;
  }
  // The pieces in order, as far as the ids follow them.
  size_t at = 0;
  for (size_t k = 0; k < pieces.size(); ++k) {
    const bool follows = at + alone[k].size() <= got.size() &&
                         std::equal(alone[k].begin(), alone[k].end(), got.begin() + static_cast<std::ptrdiff_t>(at));
    if (follows) {
      at += alone[k].size();
      continue;
    }
    if (k > 0 && pieces[k] == pieces[k - 1]) {
      ADD_FAILURE() << "\"" << text << "\": the pre-token \"" << pieces[k - 1] << "\" encodes as its own ids once, but "
                    << "its next occurrence (pre-token " << k << ", the one the cache of this call has seen) does not: "
                    << "from there the ids are " << (at < got.size() ? "" : "none, ")
                    << fmt::format("{} id(s) where {} belong", got.size() - at, want.size() - at);
      return;
    }
    break;
  }
  expect_encoding(Tokenizer(model), text, want, "\"" + text + "\"");
}

// A vocabulary whose single bytes are not ids 0..255 in byte order (as
// GPT-2's vocab.json, where "!" is id 0): here byte b is id 255 - b, then
// the merge (a, b) is id 256. A pre-token starts as each byte's id in it.
TEST(ex19_encode, bytes_start_as_their_ids_in_the_vocabulary) {
  BpeModel model;
  for (int id = 0; id < 256; ++id) model.vocab.push_back(std::string(1, static_cast<char>(255 - id)));
  const auto id_of = [](char c) { return 255 - static_cast<int32_t>(static_cast<uint8_t>(c)); };
  model.vocab.push_back("ab");
  model.merges = {{id_of('a'), id_of('b')}};
  const Tokenizer tok(model);
  const std::vector<int32_t> want = {id_of('x'), id_of('y'), id_of('z')};
  if (tok.encode("xyz") == std::vector<int32_t>{'x', 'y', 'z'}) {
    ADD_FAILURE()
        << "\"xyz\" (no merge applies) with byte b at id 255 - b: the ids are the bytes' values 120 121 122, "
           "expected their ids in the vocabulary "
        << want[0] << " " << want[1] << " " << want[2]
        << ": a pre-token starts as the vocabulary's id of each byte, which is b only in a byte-ordered vocabulary";
    return;
  }
  expect_encoding(tok, "xyz", want, "\"xyz\" with byte b at id 255 - b");
  expect_encoding(tok, "ab xab", {256, id_of(' '), id_of('x'), 256}, "\"ab xab\" with byte b at id 255 - b");
}

TEST(ex19_encode, empty_text_and_invalid_bytes) {
  const Tokenizer tok(tokcheck::reference_model());
  expect_encoding(tok, "", {}, "the empty text");
  // Bytes that are not UTF-8 are still bytes: each its own token here (no merge has them).
  expect_encoding(tok, "\xff\xfe", {0xff, 0xfe}, "\"\\xff\\xfe\"");
  // " \xf0\x9f" is a token of the reference, though half a character.
  expect_encoding(tok, " \xf0\x9f\x99\x82", {340, 153, 130}, "\" \\xf0\\x9f\\x99\\x82\" (a space and an emoji)");
}

// The whole, after its parts.
TEST(ex19_encode, corpus_and_sample_match_the_python_reference) {
  COURSE_REQUIRES("a_pair_is_found_at_every_position", "merges_apply_in_rank_order_not_left_to_right",
                  "special_tokens_are_single_ids_the_longest_first", "a_special_token_has_the_id_the_vocabulary_gives_it",
                  "a_repeated_pre_token_encodes_as_its_first");
  const Tokenizer tok(tokcheck::reference_model());
  for (const std::string name : {"sample", "corpus"}) {
    const std::string text = tokcheck::read_bpe_fixture(name + ".txt");
    const auto expected = tokcheck::read_ids(name + "_ids.txt");
    expect_encoding(tok, text, expected, name + ".txt");
    expect_encoding(tok, text, expected, name + ".txt encoded again (a second call, its own cache)");
  }
}

}  // namespace
}  // namespace ropegrad::course
