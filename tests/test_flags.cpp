// The command line's one flag reader (tasks/flags.h): its number parser,
// its reading of words against a table, its errors and its --help.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <optional>
#include <string>
#include <vector>

#include "support/test_util.h"
#include "tasks/flags.h"

namespace ropegrad {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;
namespace fl = ropegrad::flags;

// ---- the number parser ---------------------------------------------------------------------------

TEST(FlagNumbers, WholeNumbersAreIntegersOrRealsThatAreWhole) {
  EXPECT_EQ(fl::parse_whole("12"), 12);
  EXPECT_EQ(fl::parse_whole("-3"), -3);
  EXPECT_EQ(fl::parse_whole("+4"), 4);
  EXPECT_EQ(fl::parse_whole("007"), 7);
  EXPECT_EQ(fl::parse_whole("1e3"), 1000);
  EXPECT_EQ(fl::parse_whole("2.0"), 2);
  EXPECT_EQ(fl::parse_whole("9223372036854775807"), std::numeric_limits<int64_t>::max());  // exact, not via a double
  EXPECT_EQ(fl::parse_whole("-9223372036854775808"), std::numeric_limits<int64_t>::min());
  EXPECT_EQ(fl::parse_whole("1e18"), 1000000000000000000);
  for (const char* bad : {"", " 1", "1 ", "12abc", "0.5", "1e-3", "nan", "inf", "-inf", "0x10", "1e300", "9.3e18",
                          "9223372036854775808", "-9223372036854775809", "1e19", "abc", "+", "-", "++1", "1,2"}) {
    EXPECT_EQ(fl::parse_whole(bad), std::nullopt) << "'" << bad << "'";
  }
}

TEST(FlagNumbers, RealsAreDecimalNumbersWithinDouble) {
  EXPECT_EQ(fl::parse_real("0.003"), 0.003);
  EXPECT_EQ(fl::parse_real("1e-3"), 0.001);
  EXPECT_EQ(fl::parse_real("-2"), -2.0);
  EXPECT_EQ(fl::parse_real("+.5"), 0.5);
  EXPECT_EQ(fl::parse_real("1e300"), 1e300);
  EXPECT_TRUE(std::isinf(*fl::parse_real("inf")));  // a number: the range check refuses it
  EXPECT_TRUE(std::isnan(*fl::parse_real("nan")));
  for (const char* bad : {"", "12abc", " 1", "1 ", "0x10", "1e400", "1e-400", "abc", "1,5", "--1"}) {
    EXPECT_EQ(fl::parse_real(bad), std::nullopt) << "'" << bad << "'";
  }
}

TEST(FlagNumbers, NumbersInMessagesAreShort) {
  EXPECT_EQ(fl::number_text(0), "0");
  EXPECT_EQ(fl::number_text(1000), "1000");
  EXPECT_EQ(fl::number_text(1e6), "1e6");
  EXPECT_EQ(fl::number_text(1048576), "1048576");
  EXPECT_EQ(fl::number_text(0.003), "0.003");
  EXPECT_EQ(fl::number_text(0.999999), "0.999999");
  EXPECT_EQ(fl::number_text(1e-300), "1e-300");
  EXPECT_EQ(fl::number_text(1e30), "1e30");
  EXPECT_EQ(fl::number_text(-2.5), "-2.5");
  EXPECT_EQ(fl::number_text(1e-5), "1e-5");
  EXPECT_EQ(fl::number_text(1.5e20), "1.5e20");
  EXPECT_EQ(fl::number_text(123456789), "123456789");
}

// ---- reading a table ------------------------------------------------------------------------------

fl::Command sample() {
  using namespace fl;
  Command c{"ropegrad sample", "", "A command for the tests."};
  c.flags = {whole("context", 1, 1048576, "128", "tokens per sequence"),
             real("bucket-mb", open_closed(0, 1e6), "1", "bucket size", "MB"),
             choice("norm", {"pre", "post", "none"}, "pre", "where the norm goes"),
             on_off("tie", "tie the head"),
             path("out", "DIR", "where the files go"),
             repeated(text("special", "TOKEN", "a special token")),
             whole_list("ranks", 1, 1000, ',', "1,8", "the ranks")};
  return c;
}

fl::Values read(std::vector<std::string> words) {
  std::optional<fl::Values> v = fl::read(sample(), words);
  if (!v) throw std::runtime_error("--help");
  return *v;
}

TEST(FlagReader, ValuesAndDefaults) {
  const fl::Values v = read({"--context", "1e3", "--bucket-mb=0.5", "--tie", "--special", "<a>", "--special", "<b>"});
  EXPECT_EQ(v.whole("context"), 1000);
  EXPECT_EQ(v.real("bucket-mb"), 0.5);
  EXPECT_EQ(v.typed("bucket-mb"), "0.5");
  EXPECT_TRUE(v.on("tie"));
  EXPECT_EQ(v.text("norm"), "pre");  // the default
  EXPECT_FALSE(v.given("norm"));
  EXPECT_EQ(v.text("out"), "");
  EXPECT_EQ(v.all("special"), (std::vector<std::string>{"<a>", "<b>"}));
  EXPECT_EQ(v.wholes("ranks"), (std::vector<int64_t>{1, 8}));
  // A flag given twice: the last one counts (scripts give a base and then an override).
  EXPECT_EQ(read({"--context", "8", "--context", "16"}).whole("context"), 16);
  // Asking the table for what it has not is the program's mistake, said as such.
  EXPECT_RG_ERROR(v.whole("contxt"), "ropegrad sample", "no flag --contxt");
  EXPECT_RG_ERROR(v.real("context"), "ropegrad sample", "another type");
}

TEST(FlagReader, EveryValueErrorHasOneForm) {
  const std::vector<std::pair<std::vector<std::string>, std::string>> cases = {
      {{"--context", "0.5"}, "--context must be a whole number in 1..1048576, got 0.5"},
      {{"--context", "1e300"}, "--context must be a whole number in 1..1048576, got 1e300"},
      {{"--context", "0"}, "--context must be a whole number in 1..1048576, got 0"},
      {{"--context", "12abc"}, "--context must be a whole number in 1..1048576, got '12abc'"},
      {{"--context", ""}, "--context must be a whole number in 1..1048576, got ''"},
      {{"--context", "nan"}, "--context must be a whole number in 1..1048576, got nan"},
      {{"--bucket-mb", "1e300"}, "--bucket-mb must be a real number in (0, 1e6] MB, got 1e300"},
      {{"--bucket-mb", "0"}, "--bucket-mb must be a real number in (0, 1e6] MB, got 0"},
      {{"--bucket-mb", "-inf"}, "--bucket-mb must be a real number in (0, 1e6] MB, got -inf"},
      {{"--bucket-mb", "1e400"}, "--bucket-mb must be a real number in (0, 1e6] MB, got 1e400"},
      {{"--norm", "Pre"}, "--norm must be one of pre | post | none, got 'Pre'"},
      {{"--out", ""}, "--out must be a path, got ''"},
      {{"--special", ""}, "--special must be a non-empty text, got ''"},
      {{"--ranks", "8,x"}, "--ranks must be whole numbers in 1..1000 separated by commas, got 'x' in '8,x'"},
      {{"--ranks", "8,"}, "--ranks must be whole numbers in 1..1000 separated by commas, got '' in '8,'"},
      {{"--ranks", "0"}, "--ranks must be whole numbers in 1..1000 separated by commas, got 0 in '0'"},
      {{"--context", "1\n2"}, "--context must be a whole number in 1..1048576, got '1\\n2'"},  // one line
  };
  for (const auto& [words, message] : cases) EXPECT_RG_ERROR(read(words), "ropegrad sample: " + message);
}

TEST(FlagReader, UnknownMissingAndSwitchErrorsNameTheCommand) {
  EXPECT_RG_ERROR(read({"--contxt", "8"}), "ropegrad sample: unknown argument '--contxt'; did you mean --context? "
                                           "(see ropegrad sample --help)");
  EXPECT_RG_ERROR(read({"--frobnicate"}), "ropegrad sample: unknown argument '--frobnicate' (see ropegrad sample --help)");
  EXPECT_RG_ERROR(read({"context"}), "unknown argument 'context'");
  EXPECT_RG_ERROR(read({"--tie", "yes"}), "unknown argument 'yes'; --tie is a switch and takes no value");
  EXPECT_RG_ERROR(read({"--tie=yes"}), "ropegrad sample: --tie is a switch: it takes no value, got 'yes'");
  EXPECT_RG_ERROR(read({"--context"}), "ropegrad sample: --context needs a value (a whole number in 1..1048576)");
  EXPECT_RG_ERROR(read({"--out", "--tie"}), "--out needs a value (a path), got the flag --tie");
  EXPECT_RG_ERROR(read({"--", "x"}), "unknown argument '--'");  // no words after -- in this table
  EXPECT_RG_ERROR(read({"--inptu\r\x01"}), "'--inptu\\r\\x01'");
  fl::Command needs = sample();
  needs.flags[4] = fl::required(needs.flags[4]);
  EXPECT_RG_ERROR(fl::read(needs, std::vector<std::string>{}), "ropegrad sample: --out DIR is required");
}

TEST(FlagReader, WordsAfterTheSeparatorAreKeptForTheCommand) {
  fl::Command c = sample();
  c.rest = "TRAIN OPTIONS";
  c.rest_help = "given to train";
  const std::optional<fl::Values> v = fl::read(c, std::vector<std::string>{"--tie", "--", "--lr", "1", "--help"});
  ASSERT_TRUE(v.has_value());
  EXPECT_EQ(v->rest(), (std::vector<std::string>{"--lr", "1", "--help"}));
}

TEST(FlagReader, HelpComesFromTheTable) {
  ::testing::internal::CaptureStdout();
  EXPECT_FALSE(fl::read(sample(), std::vector<std::string>{"--context", "8", "--help"}).has_value());
  const std::string help = ::testing::internal::GetCapturedStdout();
  EXPECT_THAT(help, HasSubstr("usage: ropegrad sample [options]\n\nA command for the tests.\n\noptions:\n"));
  EXPECT_THAT(help, HasSubstr("  --context 128              tokens per sequence; a whole number in 1..1048576\n"));
  EXPECT_THAT(help, HasSubstr("  --bucket-mb 1              bucket size; a real number in (0, 1e6] MB\n"));
  EXPECT_THAT(help, HasSubstr("  --norm pre                 pre | post | none: where the norm goes\n"));
  EXPECT_THAT(help, HasSubstr("  --tie                      tie the head\n"));
  EXPECT_THAT(help, HasSubstr("  --out DIR                  where the files go\n"));
  EXPECT_THAT(help, HasSubstr("  --special TOKEN            a special token; may be given more than once\n"));
  EXPECT_EQ(help, fl::help_text(sample()));
}

TEST(FlagReader, CanonicalValuesCompareTwoSpellings) {
  const fl::Command c = sample();
  const auto canon = [&](const char* name, const char* text) { return fl::canonical(*fl::find(c, name), text, "x"); };
  EXPECT_EQ(canon("context", "01"), canon("context", "1"));
  EXPECT_EQ(canon("context", "1e3"), canon("context", "1000"));
  EXPECT_EQ(canon("bucket-mb", "1e-3"), canon("bucket-mb", "0.001"));
  EXPECT_NE(canon("bucket-mb", "1e-3"), canon("bucket-mb", "0.002"));
  EXPECT_EQ(canon("ranks", "1,08"), canon("ranks", "1,8"));
  EXPECT_EQ(canon("norm", "post"), "post");
  EXPECT_RG_ERROR(canon("context", "0"), "x: --context must be a whole number in 1..1048576, got 0");
}

TEST(FlagReader, DidYouMeanIsTheClosestName) {
  EXPECT_EQ(fl::edit_distance("kitten", "sitting"), 3u);
  EXPECT_EQ(fl::closest("--step", {"--steps", "--seed"}), "--steps");
  EXPECT_EQ(fl::closest("--frobnicate", {"--steps", "--seed"}), "");
}

}  // namespace
}  // namespace ropegrad
