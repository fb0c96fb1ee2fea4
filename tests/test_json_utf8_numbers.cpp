// The one-of-each readers in io/: JSON (io/json.h), UTF-8 (io/utf8.h) and
// numbers (tensor/parse_number.h), on real values and on bad input.
#include <gtest/gtest.h>

#include <cmath>
#include <string>

#include "io/json.h"
#include "tensor/parse_number.h"
#include "io/utf8.h"

namespace ropegrad {
namespace {

std::string utf8_of(char32_t cp) {
  std::string s;
  append_utf8(s, cp);
  return s;
}

TEST(Utf8, EncodesOneToFourBytes) {
  EXPECT_EQ(utf8_of(U'A'), "A");
  EXPECT_EQ(utf8_of(0xE9), "\xC3\xA9");             // é
  EXPECT_EQ(utf8_of(0x4E2D), "\xE4\xB8\xAD");       // 中
  EXPECT_EQ(utf8_of(0x1F600), "\xF0\x9F\x98\x80");  // 😀
  EXPECT_EQ(utf8_of(0xFFFD), "\xEF\xBF\xBD");
}

TEST(Utf8, FindsTheFirstInvalidByte) {
  EXPECT_EQ(invalid_utf8_at("plain \xC3\xA9 text"), std::string_view::npos);
  EXPECT_EQ(invalid_utf8_at("ab\xFF"), 2u);
  EXPECT_EQ(invalid_utf8_at("\xC0\xAF"), 0u);          // overlong '/'
  EXPECT_EQ(invalid_utf8_at("x\xED\xA0\x80"), 1u);     // a surrogate
  EXPECT_EQ(invalid_utf8_at("\xF4\x90\x80\x80"), 0u);  // above U+10FFFF
  EXPECT_EQ(invalid_utf8_at("ok\xE4\xB8"), 2u);        // truncated
}

TEST(ParseNumber, Int64ReadsTheWholeTextWithinRange) {
  EXPECT_EQ(parse_int64("42"), 42);
  EXPECT_EQ(parse_int64("-7"), -7);
  EXPECT_EQ(parse_int64("+7"), 7);
  EXPECT_EQ(parse_int64("9223372036854775807"), INT64_MAX);
  EXPECT_EQ(parse_int64("ff", 16), 255);
  EXPECT_EQ(parse_int64("9223372036854775808"), std::nullopt);
  for (const char* bad : {"", " 1", "1 ", "1.0", "1e3", "0x10", "+", "-", "++1", "12a"}) {
    EXPECT_EQ(parse_int64(bad), std::nullopt) << bad;
  }
}

TEST(ParseNumber, RealsAndTheirRange) {
  EXPECT_EQ(parse_double("1.5"), 1.5);
  EXPECT_EQ(parse_double("-2e-3"), -2e-3);
  EXPECT_EQ(parse_double(".5"), 0.5);
  EXPECT_EQ(parse_double("+7"), 7.0);
  EXPECT_TRUE(std::isinf(*parse_double("inf")));
  EXPECT_TRUE(std::isnan(*parse_double("nan")));
  for (const char* bad : {"", " 1", "1 ", "0x1p3", "1,5", "e5", "+", "1e"}) {
    EXPECT_EQ(parse_double(bad), std::nullopt) << bad;
  }
  const ScannedReal big = scan_real("1e999");
  EXPECT_EQ(big.status, ScannedReal::Status::OutOfRange);
  EXPECT_TRUE(std::isinf(big.value));
  EXPECT_EQ(parse_double("1e999"), std::nullopt);
  EXPECT_EQ(scan_real("1e-400").status, ScannedReal::Status::OutOfRange);
  EXPECT_EQ(scan_real("abc").status, ScannedReal::Status::NotANumber);
}

TEST(Json, ReadsObjectsArraysStringsAndIntegersWithTheirPlaces) {
  const std::string text = "{\"a\": [1, -2], \"b\\u00e9\": \"x\\ud83d\\ude00\"}";
  const JsonValue v = parse_json(text);
  ASSERT_EQ(v.kind, JsonValue::Kind::Object);
  ASSERT_EQ(v.members.size(), 2u);
  EXPECT_EQ(v.members[0].key, "a");
  EXPECT_EQ(v.members[0].key_offset, 1u);
  EXPECT_EQ(v.members[0].value.kind, JsonValue::Kind::Array);
  EXPECT_EQ(v.members[0].value.items[1].integer, -2);
  EXPECT_EQ(v.members[1].key, "b\xC3\xA9");
  EXPECT_EQ(v.members[1].value.str, "x\xF0\x9F\x98\x80");
  EXPECT_EQ(v.members[1].value.offset, text.find("\"x"));
}

std::string json_error(std::string_view text, const JsonLimits& limits = {}) {
  try {
    parse_json(text, limits);
  } catch (const JsonError& e) {
    return std::to_string(e.offset()) + ": " + e.reason();
  }
  return "no error";
}

TEST(Json, BadInputIsAnErrorWithItsByteOffset) {
  EXPECT_EQ(json_error(""), "0: unexpected end of text");
  EXPECT_EQ(json_error("{\"a\" 1}"), "5: expected ':', found '1'");
  EXPECT_EQ(json_error("{\"a\": 1, \"a\": 2}"), "12: duplicate key 'a'");
  EXPECT_EQ(json_error("[1.5]"), "2: only integers are allowed here (found a fraction or exponent)");
  EXPECT_EQ(json_error("[01]"), "1: integer with a leading zero");
  EXPECT_EQ(json_error("[99999999999999999999]"), "21: integer out of the int64 range");
  EXPECT_EQ(json_error("true"), "0: unexpected 't' (a text holds only objects, arrays, strings and integers)");
  EXPECT_EQ(json_error("\"\\q\""), "2: unknown escape '\\q'");
  EXPECT_EQ(json_error("\"\\udc00\""), "7: lone low surrogate in a \\u escape");
  EXPECT_EQ(json_error("\"\xFF\""), "0: string is not valid UTF-8 (at its byte 0)");
  EXPECT_EQ(json_error("\"a\x01\""),
            "2: raw control byte '\\x01' in the string 'a\\x01' (a raw control character 0x01 must be escaped)");
  EXPECT_EQ(json_error("{} x"), "3: unexpected 'x' after the top-level value");
  EXPECT_EQ(json_error(std::string(100000, '[')), "65: nested deeper than 64 levels");
  EXPECT_EQ(json_error("[1, 2]", JsonLimits{"header", 64, 4}), "0: the header is 6 bytes long, over the 4-byte limit");
}

TEST(Json, PlaceOfGivesLineAndColumn) {
  const std::string text = "{\n  \"a\": 0,\n  \"b\" 1\n}";
  const TextPlace p = place_of(text, text.find('1'));
  EXPECT_EQ(p.line, 3);
  EXPECT_EQ(p.column, 7);
}

}  // namespace
}  // namespace ropegrad
