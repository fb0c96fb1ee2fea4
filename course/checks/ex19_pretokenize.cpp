// ex19-pretokenize: pretoken_end (the GPT-2 pattern matched by hand) and
// split_at_specials (tokenizer/pretokenize.cpp). The expected pre-tokens are
// Python's `regex` module's (tests/fixtures/make_bpe_fixtures.py).
#include <algorithm>

#include "course/checks/tok_util.h"
#include "tokenizer/pretokenize.h"

namespace ropegrad::course {
namespace {

using tokcheck::literal;
using tokcheck::literal_list;
using V = std::vector<std::string>;

const std::string kPlainRun = "\\s+(?!\\S) treated as \\s+: the run's last space must be left to the next word";

V pretokens(std::string_view text) {
  V out;
  tok::for_each_pretoken(text, [&](std::string_view p) { out.emplace_back(p); });
  return out;
}

// A case: the text, what the regex gives, and typical wrong answers with what
// each one means.
struct Case {
  std::string text;
  V expected;
  std::vector<std::pair<V, std::string>> wrong = {};
};

// Fails on the first case that splits differently, naming the mistake when
// the answer is a known wrong one.
void expect_cases(const std::vector<Case>& cases) {
  for (const Case& c : cases) {
    const V got = pretokens(c.text);
    if (got == c.expected) continue;
    std::string why = "pre-tokens differ from the regex's";
    for (const auto& [wrong, meaning] : c.wrong)
      if (got == wrong) why = meaning;
    ADD_FAILURE() << why << ": " << literal(c.text) << " -> " << literal_list(got) << ", expected "
                  << literal_list(c.expected);
    return;
  }
}

TEST(ex19_pretokenize, corpus_and_sample_split_as_the_python_regex_does) {
  for (const std::string name : {"corpus", "sample"}) {
    const std::string text = tokcheck::read_bpe_fixture(name + ".txt");
    std::istringstream ref(tokcheck::read_bpe_fixture(name + "_pretokens.txt"));
    std::vector<std::pair<char, std::string>> expected, got;
    for (std::string kind, hex; ref >> kind >> hex;) expected.emplace_back(kind[0], tokcheck::unhex(hex));
    for (const tok::Piece& piece : tok::split_at_specials(text, tokcheck::fixture_specials())) {
      if (piece.special >= 0) {
        got.emplace_back('S', std::string(piece.text));
        continue;
      }
      for (const std::string& p : pretokens(piece.text)) got.emplace_back('P', p);
    }
    for (size_t i = 0; i < std::max(got.size(), expected.size()); ++i) {
      if (i < got.size() && i < expected.size() && got[i] == expected[i]) continue;
      auto show = [](const std::vector<std::pair<char, std::string>>& v, size_t i) {
        if (i >= v.size()) return std::string("(the end)");
        return std::string(v[i].first == 'S' ? "special " : "pre-token ") + literal(v[i].second);
      };
      // A whitespace run that kept the space the next word should start with.
      const bool kept_space = i + 1 < expected.size() && i < got.size() && got[i].second.size() > 1 &&
                              got[i].second.substr(0, got[i].second.size() - 1) == expected[i].second &&
                              expected[i + 1].second[0] == got[i].second.back();
      ADD_FAILURE() << (kept_space ? kPlainRun + ": " : "")
                    << name << ".txt: piece " << i << " is " << show(got, i) << ", the regex gives "
                    << show(expected, i) << " (after " << (i ? literal(expected[i - 1].second) : "the start") << ")";
      break;
    }
  }
}

TEST(ex19_pretokenize, a_space_before_a_word_joins_the_word_not_the_whitespace_run) {
  expect_cases({
      {"a   b", {"a", "  ", " b"}, {{{"a", "   ", "b"}, kPlainRun}}},
      {"Spaces   before tabs", {"Spaces", "  ", " before", " tabs"}, {{{"Spaces", "   ", "before", " tabs"}, kPlainRun}}},
      {"x \n y", {"x", " \n", " y"}, {{{"x", " \n ", "y"}, kPlainRun}}},
      {"  a", {" ", " a"}, {{{"  ", "a"}, kPlainRun}}},
      // Before a non-space the run gives up its last character even when that is a newline.
      {"a\n\nb", {"a", "\n", "\n", "b"}, {{{"a", "\n\n", "b"}, kPlainRun}}},
      {"x\tb", {"x", "\t", "b"}},
  });
}

TEST(ex19_pretokenize, a_whitespace_run_at_the_end_or_before_whitespace_stays_whole) {
  const std::string split = "a whitespace run followed by the end of the text stays whole (\\s+(?!\\S) matches it all)";
  expect_cases({
      {"a   b  ", {"a", "  ", " b", "  "}, {{{"a", "  ", " b", " ", " "}, split}, {{"a", "   ", "b", "  "}, kPlainRun}}},
      {"a \n", {"a", " \n"}, {{{"a", " ", "\n"}, split}}},
      {"\n\n", {"\n\n"}, {{{"\n", "\n"}, split}}},
      {"end.   ", {"end", ".", "   "}, {{{"end", ".", "  ", " "}, split}}},
  });
}

TEST(ex19_pretokenize, contractions_are_lowercase_only) {
  const std::string upper = "an uppercase contraction matched: the pattern's [sdmt]|ll|ve|re is lowercase only";
  const std::string missed = "a lowercase contraction was not cut: '(?:[sdmt]|ll|ve|re) comes first";
  expect_cases({
      {"we'll they're I'm it's I've she'd", {"we", "'ll", " they", "'re", " I", "'m", " it", "'s", " I", "'ve", " she", "'d"},
       {{{"we", "'", "ll", " they", "'", "re", " I", "'", "m", " it", "'", "s", " I", "'", "ve", " she", "'", "d"}, missed}}},
      {"DON'T I'M HE'LL", {"DON", "'", "T", " I", "'", "M", " HE", "'", "LL"},
       {{{"DON", "'T", " I", "'M", " HE", "'LL"}, upper}}},
      {"It'S", {"It", "'", "S"}, {{{"It", "'S"}, upper}}},
      // "'x" is no contraction: the apostrophe is an "other" character.
      {"it 'x", {"it", " '", "x"}},
  });
}

TEST(ex19_pretokenize, letters_numbers_and_others_take_one_optional_space) {
  expect_cases({
      {"Hello, world!", {"Hello", ",", " world", "!"}},
      {"abc123 45", {"abc", "123", " 45"}},
      {"3.14159", {"3", ".", "14159"}},
      {"Café 東京 Ωmega", {"Café", " 東京", " Ωmega"}},
      {"½²", {"½²"}},  // \p{N} includes No
      {"🙂🙂 !!", {"🙂🙂", " !!"}},
      // U+00A0 and U+3000 are \s; a byte that is not UTF-8 is an "other" character.
      {"a\u00a0b", {"a", "\u00a0", "b"}},
      {"a\u3000\u3000b", {"a", "\u3000", "\u3000", "b"}, {{{"a", "\u3000\u3000", "b"}, kPlainRun}}},
      {"ab\xff\xfe cd", {"ab", "\xff\xfe", " cd"}},
  });
}

// split_at_specials as (text, special index) pairs.
std::vector<std::pair<std::string, int>> pieces(std::string_view text, const V& specials) {
  std::vector<std::pair<std::string, int>> out;
  for (const tok::Piece& p : tok::split_at_specials(text, specials)) out.emplace_back(std::string(p.text), p.special);
  return out;
}

std::string show(const std::vector<std::pair<std::string, int>>& v) {
  std::string out = "[";
  for (size_t i = 0; i < v.size(); ++i) {
    if (i) out += ", ";
    out += v[i].second >= 0 ? "special " + std::to_string(v[i].second) : literal(v[i].first);
  }
  return out + "]";
}

TEST(ex19_pretokenize, special_tokens_are_cut_out_whole_and_never_merged) {
  using P = std::vector<std::pair<std::string, int>>;
  const V specials = tokcheck::fixture_specials();
  const std::vector<std::pair<std::string, P>> cases = {
      {"a<|endoftext|>b", {{"a", -1}, {"<|endoftext|>", 0}, {"b", -1}}},
      {"<|endoftext|><|endoftext|>x<|pad|>", {{"<|endoftext|>", 0}, {"<|endoftext|>", 0}, {"x", -1}, {"<|pad|>", 1}}},
      {"no specials here", {{"no specials here", -1}}},
      {"<|endoftext|", {{"<|endoftext|", -1}}},  // incomplete: plain text
  };
  for (const auto& [text, expected] : cases) {
    const P got = pieces(text, specials);
    if (got != expected) {
      ADD_FAILURE() << literal(text) << " is cut into " << show(got) << ", expected " << show(expected)
                    << " (each special token one piece, no empty plain pieces)";
      return;
    }
  }
}

TEST(ex19_pretokenize, of_overlapping_special_tokens_the_longest_wins) {
  // The short one first in the list: a split that takes the first special
  // found at a place cuts the long one in two.
  const V specials = {"<|a|>", "<|a|><|a|>"};
  using P = std::vector<std::pair<std::string, int>>;
  const P expected = {{"x", -1}, {"<|a|><|a|>", 1}, {"y", -1}, {"<|a|><|a|>", 1}, {"<|a|>", 0}};
  const P got = pieces("x<|a|><|a|>y<|a|><|a|><|a|>", specials);
  if (got == expected) return;
  const bool split = std::count(got.begin(), got.end(), std::pair<std::string, int>("<|a|>", 0)) > 1;
  ADD_FAILURE() << (split ? "the special token \"<|a|><|a|>\" was split into two \"<|a|>\": where two start at the "
                            "same place the longest wins"
                          : "overlapping special tokens cut wrongly")
                << ": " << show(got) << ", expected " << show(expected);
}

}  // namespace
}  // namespace ropegrad::course
