// ex19-encode: Tokenizer::encode_pretoken and Tokenizer::encode
// (tokenizer/encode.cpp), with the Python reference's model and encodings
// (tests/fixtures/make_bpe_fixtures.py) read from the fixture files.
#include "course/checks/tok_util.h"
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

// Compares encode(text) with the reference's ids; on a difference names the
// first stretch that differs and what kind of wrong it is.
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
    ADD_FAILURE() << label << ": the tokens do not spell the text (" << spelled.size() << " bytes for "
                  << text.size() << ")";
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
  auto has_special = [&](const std::vector<int32_t>& ids, size_t from, size_t to) {
    for (size_t k = from; k < to; ++k)
      if (ids[k] >= 256 && ids[k] < 256 + static_cast<int32_t>(model.specials.size())) return true;
    return false;
  };
  std::string why = "the same bytes merged differently: apply the merge of lowest rank (the earliest learned) "
                    "first, every occurrence at once, until no pair of the pre-token has a rank";
  if (has_special(got, i, g) || has_special(expected, i, e))
    why = "special tokens encoded wrongly: each special token is one id, the longest where two overlap";
  ADD_FAILURE() << why << ": " << label << " at token " << i << ": " << tokens_str(model, got, i, g) << " = "
                << id_list(std::vector<int32_t>(got.begin() + i, got.begin() + g)) << ", the Python reference has "
                << tokens_str(model, expected, i, e) << " = "
                << id_list(std::vector<int32_t>(expected.begin() + i, expected.begin() + e));
}

TEST(ex19_encode, corpus_and_sample_match_the_python_reference) {
  const Tokenizer tok(tokcheck::reference_model());
  for (const std::string name : {"sample", "corpus"}) {
    const std::string text = tokcheck::read_bpe_fixture(name + ".txt");
    const auto expected = tokcheck::read_ids(name + "_ids.txt");
    expect_encoding(tok, text, expected, name + ".txt");
    expect_encoding(tok, text, expected, name + ".txt encoded again (a second call, its own cache)");
  }
}

TEST(ex19_encode, merges_apply_in_rank_order_not_left_to_right) {
  // Ranks: 0 (b, c), 1 (a, b), 2 (ab, c). "abc" is a + bc (rank 0 first, and
  // (a, bc) is no merge); taking the leftmost mergeable pair gives ab + c, then abc.
  BpeModel model = tokcheck::byte_model();
  model.vocab.insert(model.vocab.end(), {"bc", "ab", "abc"});
  model.merges = {{'b', 'c'}, {'a', 'b'}, {257, 'c'}};
  const Tokenizer tok(model);
  expect_encoding(tok, "abc", {'a', 256}, "\"abc\"");
  expect_encoding(tok, "abcabc ab", {'a', 256, 'a', 256, ' ', 257}, "\"abcabc ab\"");
}

TEST(ex19_encode, special_tokens_are_single_ids_the_longest_first) {
  BpeModel model = tokcheck::byte_model({"<|a|>", "<|a|><|a|>"});
  const Tokenizer tok(model);
  expect_encoding(tok, "x<|a|><|a|>y<|a|>", {'x', 257, 'y', 256}, "\"x<|a|><|a|>y<|a|>\"");
  expect_encoding(tok, "<|a|><|a|><|a|>", {257, 256}, "\"<|a|><|a|><|a|>\"");
}

TEST(ex19_encode, special_tokens_never_merge_with_their_neighbours) {
  // Ids from the Python reference (tests/fixtures/make_bpe_fixtures.py's encode).
  const Tokenizer tok(tokcheck::reference_model());
  expect_encoding(tok, "the<|endoftext|>the", {116, 258, 256, 116, 258}, "\"the<|endoftext|>the\"");
  expect_encoding(tok, "<|endoftext|><|pad|><|endoftext|>", {256, 257, 256}, "\"<|endoftext|><|pad|><|endoftext|>\"");
  expect_encoding(tok, "they're there", {116, 258, 121, 39, 264, 263, 264}, "\"they're there\"");
}

TEST(ex19_encode, empty_text_and_invalid_bytes) {
  const Tokenizer tok(tokcheck::reference_model());
  expect_encoding(tok, "", {}, "the empty text");
  // Bytes that are not UTF-8 are still bytes: each its own token here (no merge has them).
  expect_encoding(tok, "\xff\xfe", {0xff, 0xfe}, "\"\\xff\\xfe\"");
  // " \xf0\x9f" is a token of the reference, though half a character.
  expect_encoding(tok, " \xf0\x9f\x99\x82", {340, 153, 130}, "\" \\xf0\\x9f\\x99\\x82\" (a space and an emoji)");
}

}  // namespace
}  // namespace ropegrad::course
