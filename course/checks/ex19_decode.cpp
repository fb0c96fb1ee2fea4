// ex19-decode: Tokenizer::decode_bytes and Tokenizer::decode
// (tokenizer/decode.cpp), with the Python reference's model and encodings
// (tests/fixtures/make_bpe_fixtures.py) read from the fixture files.
#include <algorithm>

#include "course/checks/tok_util.h"
#include "tokenizer/tokenizer.h"

namespace ropegrad::course {
namespace {

using tokcheck::id_list;
using tokcheck::literal;
using tok::Tokenizer;

const Tokenizer& reference_tokenizer() {
  static const Tokenizer tok(tokcheck::reference_model());
  return tok;
}

// s[from, from + len) widened to whole UTF-8 characters.
std::string clip(const std::string& s, size_t from, size_t len) {
  auto continuation = [&](size_t i) { return i < s.size() && (static_cast<unsigned char>(s[i]) & 0xC0) == 0x80; };
  from = std::min(from, s.size());
  while (from > 0 && continuation(from)) --from;
  size_t end = std::min(from + len, s.size());
  while (continuation(end)) ++end;
  return s.substr(from, end - from);
}

std::string first_ids(const std::vector<int32_t>& ids) {
  if (ids.size() <= 8) return id_list(ids);
  const std::string head = id_list(std::vector<int32_t>(ids.begin(), ids.begin() + 8));
  return head.substr(0, head.size() - 1) + " ...]";
}

// decode(ids) equals text; a U+FFFD where the text has none says why.
void expect_decoded(const std::vector<int32_t>& ids, const std::string& text, const std::string& label) {
  const std::string got = reference_tokenizer().decode(ids);
  if (got == text) return;
  const std::string fffd = "\xEF\xBF\xBD";
  const bool extra = got.find(fffd) != std::string::npos && text.find(fffd) == std::string::npos;
  std::string why = extra ? "a character split across tokens became U+FFFD: concatenate the bytes of all the "
                            "tokens first, then replace what is invalid UTF-8"
                          : "decoded text differs";
  size_t at = 0;
  while (at < got.size() && at < text.size() && got[at] == text[at]) ++at;
  const size_t from = at > 12 ? at - 12 : 0;
  ADD_FAILURE() << why << ": " << label << " " << first_ids(ids) << " decodes to " << (from ? "..." : "")
                << literal(clip(got, from, 24)) << ", expected " << (from ? "..." : "") << literal(clip(text, from, 24))
                << " (from byte " << at << ")";
}

TEST(ex19_decode, the_reference_encodings_decode_to_their_text) {
  for (const std::string name : {"sample", "corpus"})
    expect_decoded(tokcheck::read_ids(name + "_ids.txt"), tokcheck::read_bpe_fixture(name + ".txt"), name + "_ids.txt");
}

TEST(ex19_decode, a_character_split_across_tokens_decodes_whole) {
  // The reference encodes "🙂" as "\xf0\x9f" + "\x99" + "\x82": no token alone is UTF-8.
  expect_decoded({289, 153, 130}, "🙂", "\"🙂\"");
  expect_decoded({340, 153, 130, 289, 153, 130}, " 🙂🙂", "\" 🙂🙂\"");
  expect_decoded({0xC3, 0xA9}, "é", "\"é\" byte by byte");
}

TEST(ex19_decode, invalid_utf8_becomes_u_fffd_as_python_does) {
  // Python's bytes.decode("utf-8", errors="replace"): one U+FFFD per maximal ill-formed subpart.
  expect_decoded({'a', 0xFF, 'b'}, "a\uFFFDb", "a, 0xff, b");
  expect_decoded({0xE2, 0x82, 'x'}, "\uFFFDx", "a truncated \"€\", then x");
  expect_decoded({289, 153}, "\uFFFD", "the first three bytes of \"🙂\"");
  expect_decoded({0xC0, 0xAF}, "\uFFFD\uFFFD", "an overlong \"/\"");
}

TEST(ex19_decode, decode_bytes_keeps_every_byte) {
  const std::vector<int32_t> ids = {0xFF, 340, 256, 0xFE, 257};
  const std::string got = reference_tokenizer().decode_bytes(ids);
  const std::string want = "\xff \xf0\x9f<|endoftext|>\xfe<|pad|>";
  if (got != want)
    ADD_FAILURE() << "decode_bytes(" << id_list(ids) << ") is " << literal(got) << ", expected " << literal(want)
                  << " (the tokens' bytes, concatenated, nothing replaced)";
  expect_decoded({}, "", "no ids");
}

TEST(ex19_decode, an_id_outside_the_vocabulary_is_an_error_naming_it) {
  expect_error([] { reference_tokenizer().decode({116, 258, 400}); }, {"decode", "400", "position 2", "[0, 400)"},
               "id 400 of a 400-token vocabulary");
  expect_error([] { reference_tokenizer().decode_bytes({-1}); }, {"decode", "-1", "position 0"}, "id -1");
}

}  // namespace
}  // namespace ropegrad::course
