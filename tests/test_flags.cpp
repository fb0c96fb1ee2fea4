// The command line's one flag reader (io/flags.h): its number parser,
// its reading of words against a table, its errors and its --help.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <sys/wait.h>

#include <chrono>
#include <cmath>
#include <cstdio>
#include <functional>
#include <limits>
#include <map>
#include <optional>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "course/final_options.h"
#include "course/tool_options.h"
#include "support/test_util.h"
#include "cli/commands.h"
#include "io/flags.h"

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
  // No structured binding: clang 14 cannot capture one in EXPECT_RG_ERROR's lambda.
  for (const auto& c : cases) EXPECT_RG_ERROR(read(c.first), "ropegrad sample: " + c.second);
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

// Operands: the words that are no flag, by their place, checked by their
// type as a flag's value is, named by their name in errors and --help.
TEST(FlagReader, OperandsAreWordsByTheirPlace) {
  fl::Command c{"ropegrad pair", "usage: ropegrad pair NAME [COUNT] [options]\n", "Two operands.",
                {fl::operand(fl::text("NAME", "NAME", "a name")),
                 fl::operand(fl::whole("COUNT", 1, 10, "3", "how many")), fl::on_off("loud", "louder")}};
  const auto read_pair = [&](std::vector<std::string> words) { return *fl::read(c, words); };
  const fl::Values v = read_pair({"--loud", "x", "7"});
  EXPECT_EQ(v.text("NAME"), "x");
  EXPECT_EQ(v.whole("COUNT"), 7);
  EXPECT_TRUE(v.on("loud"));
  EXPECT_EQ(read_pair({"-1"}).text("NAME"), "-1");          // "-1" is no flag's spelling
  EXPECT_EQ(read_pair({"y"}).whole("COUNT"), 3);            // the default
  EXPECT_FALSE(read_pair({"y"}).given("COUNT"));
  EXPECT_RG_ERROR(read_pair({"x", "0"}), "ropegrad pair: COUNT must be a whole number in 1..10, got 0");
  EXPECT_RG_ERROR(read_pair({"x", "2", "z"}), "ropegrad pair: unknown argument 'z'");
  EXPECT_RG_ERROR(read_pair({"--NAME", "x"}), "unknown argument '--NAME'");  // an operand is no flag
  EXPECT_RG_ERROR(read_pair({""}), "ropegrad pair: NAME must be a non-empty text, got ''");
  c.flags[0] = fl::required(c.flags[0]);
  EXPECT_RG_ERROR(read_pair({"--loud"}), "ropegrad pair: NAME is required");
  EXPECT_EQ(fl::help_text(c),
            "usage: ropegrad pair NAME [COUNT] [options]\n\nTwo operands.\n\narguments:\n"
            "  NAME                       a name; required\n"
            "  COUNT                      how many; a whole number in 1..10; default 3\n"
            "\noptions:\n"
            "  --loud                     louder\n");
}

// course-check and course-answer read their words by the same rule.
TEST(FlagReader, TheCourseProgramsReadTheirWordsByTheTable) {
  using Check = course::CheckOptions::Action;
  const auto check = [](std::vector<std::string> words) { return *course::read_check_options(words); };
  EXPECT_EQ(check({"ex07-rmsnorm", "--verbose"}).id, "ex07-rmsnorm");
  EXPECT_TRUE(check({"--verbose", "ex07-rmsnorm"}).verbose);
  EXPECT_EQ(check({"--status"}).action, Check::Status);
  EXPECT_RG_ERROR(check({"ex07-rmsnorm", "--verbos"}),
                  "course-check: unknown argument '--verbos'; did you mean --verbose? (see course-check --help)");
  EXPECT_RG_ERROR(check({"--verbose"}), "course-check: ID is required");
  EXPECT_RG_ERROR(check({"--list", "--status"}), "course-check: --list, --status and --registry-table go one at a time");
  EXPECT_RG_ERROR(check({"a", "b"}), "course-check: unknown argument 'b'");
  const auto answer = [](std::vector<std::string> words) { return *course::read_answer_options(words); };
  EXPECT_EQ(answer({"ch17-x", "--variant", "gigabytes"}).variant, "gigabytes");
  EXPECT_EQ(answer({"--explain", "ch17-x"}).action, course::AnswerOptions::Action::Explain);
  EXPECT_RG_ERROR(answer({"--explain", "ch17-x", "--variant", "v"}), "course-answer: --explain and --variant go one at a time");
  EXPECT_RG_ERROR(answer({"--variant"}), "course-answer: --variant needs a value");
  EXPECT_RG_ERROR(answer({}), "course-answer: ID is required");
}

TEST(FlagReader, DidYouMeanIsTheClosestName) {
  EXPECT_EQ(fl::edit_distance("kitten", "sitting"), 3u);
  EXPECT_EQ(fl::closest("--step", {"--steps", "--seed"}), "--steps");
  EXPECT_EQ(fl::closest("--frobnicate", {"--steps", "--seed"}), "");
}

// ---- the flag walk: every flag of every command, with hostile values ------------------------------

// One table and the dry run of its command (the command's own reading and
// checks, without the work): every table of tasks::commands(), and course final's.
struct Table {
  std::string name;  // "ropegrad train", "ropegrad tokenize train", "course final"
  const fl::Command* command;
  std::function<void(const std::vector<std::string>&)> check;  // the words after the table's name
};

std::vector<Table> every_table() {
  std::vector<Table> out;
  for (const tasks::CommandEntry& e : tasks::commands()) {
    for (const fl::Command& t : e.tables) {
      // "ropegrad tokenize train": the words after the command start with the subcommand.
      const std::string head = "ropegrad " + e.name;
      const std::string sub = t.name.size() > head.size() ? t.name.substr(head.size() + 1) : "";
      out.push_back({t.name, &t, [&e, sub](const std::vector<std::string>& words) {
                       std::vector<std::string> all = words;
                       if (!sub.empty()) all.insert(all.begin(), sub);
                       e.check(all);
                     }});
    }
  }
  out.push_back({"course final", &course::final_command(),
                 [](const std::vector<std::string>& words) { course::read_final_options(words); }});
  out.push_back({"course-check", &course::check_command(),
                 [](const std::vector<std::string>& words) { course::read_check_options(words); }});
  out.push_back({"course-answer", &course::answer_command(),
                 [](const std::vector<std::string>& words) { course::read_answer_options(words); }});
  return out;
}

// The shortest valid command line of a table with required flags (the dry
// run reads nothing: the paths need not exist). A new table with required
// flags needs its line here.
const std::map<std::string, std::vector<std::string>>& base_words() {
  static const std::map<std::string, std::vector<std::string>> base = {
      {"ropegrad sweep", {"--out", "/nonexistent/sweep", "--grid", "lr=1e-3"}},
      {"ropegrad generate", {"--checkpoint", "/nonexistent/run"}},
      {"ropegrad tokenize train", {"--input", "in.txt", "--vocab-size", "300", "--out", "tok"}},
      {"ropegrad tokenize encode", {"--tokenizer", "tok", "--input", "in.txt", "--out", "ids.npy"}},
      {"ropegrad tokenize decode", {"--tokenizer", "tok", "--input", "ids.npy", "--out", "out.txt"}},
      {"course final", {"--corpus", "corpus.txt", "--out", "out"}},
      {"course-check", {"ex07-rmsnorm"}},
      {"course-answer", {"ch01-permute-strides"}},
  };
  return base;
}

// The base words without `name`'s flag and value, then --name value. An
// operand's: the base words without the words that are no flag (the base
// lines of tables with an operand hold no flag with a value).
std::vector<std::string> with_flag(const std::string& table, const fl::Flag& f, const std::vector<std::string>& value) {
  std::vector<std::string> words;
  const auto it = base_words().find(table);
  const std::vector<std::string> base = it == base_words().end() ? std::vector<std::string>{} : it->second;
  for (size_t i = 0; i < base.size(); ++i) {
    if (f.operand && base[i].rfind("--", 0) != 0) {
      continue;
    } else if (base[i] == "--" + f.name) {
      ++i;  // and its value
    } else {
      words.push_back(base[i]);
    }
  }
  words.insert(words.end(), value.begin(), value.end());
  return words;
}

const std::vector<std::string> kHostile = {"-1", "0", "1e18", "1e300", "-1e300", "nan", "inf", "-inf",
                                           "0.5", "", "abc", "12abc"};

// Whether the table says `text` is a value of `f`, worked out here with
// strtold/strtod rather than the reader's from_chars: the reader must agree.
bool whole_ok(const fl::Flag& f, const std::string& text) {
  if (text.empty()) return false;
  char* end = nullptr;
  const long double x = std::strtold(text.c_str(), &end);
  return *end == '\0' && std::isfinite(x) && x == std::floor(x) && x >= static_cast<long double>(f.min) &&
         x <= static_cast<long double>(f.max);
}

bool accepted(const fl::Flag& f, const std::string& text) {
  switch (f.type) {
    case fl::Type::Whole:
      return whole_ok(f, text);
    case fl::Type::Real: {
      char* end = nullptr;
      const double x = std::strtod(text.c_str(), &end);
      const fl::Interval& r = f.range;
      return !text.empty() && *end == '\0' && std::isfinite(x) && (r.lo_open ? x > r.lo : x >= r.lo) &&
             (r.hi_open ? x < r.hi : x <= r.hi);
    }
    case fl::Type::WholeList: {
      const std::string sep(1, f.separator);
      std::vector<std::string> items;
      for (size_t at = 0;;) {
        const size_t end = std::min(text.find(sep, at), text.size());
        items.push_back(text.substr(at, end - at));
        if (end == text.size()) break;
        at = end + 1;
      }
      for (const std::string& item : items) {
        if (!whole_ok(f, item)) return false;
      }
      return true;
    }
    case fl::Type::Choice:
      return std::find(f.choices.begin(), f.choices.end(), text) != f.choices.end();
    case fl::Type::Text:
    case fl::Type::Path:
      return !text.empty();
    case fl::Type::Switch:
      return false;  // given a value
  }
  return false;
}

std::string error_of_words(const Table& t, const std::vector<std::string>& words) {
  try {
    t.check(words);
  } catch (const Error& e) {
    return e.what();
  }
  return "";
}

TEST(FlagWalk, EveryTableReadsItsShortestCommandLine) {
  for (const Table& t : every_table()) {
    const auto it = base_words().find(t.name);
    EXPECT_EQ(error_of_words(t, it == base_words().end() ? std::vector<std::string>{} : it->second), "") << t.name;
  }
}

// Every flag of every command's table, each with every hostile value: a value
// the table refuses is one line "TABLE: --FLAG must be DOMAIN, got VALUE"
// (a switch given a value: "TABLE: --FLAG is a switch: it takes no value");
// a value it takes reads through the command's own checks, and if they
// refuse it (--text without --task text), the message names the flag.
TEST(FlagWalk, EveryFlagOfEveryCommandRefusesHostileValuesByOneRule) {
  const auto start = std::chrono::steady_clock::now();
  size_t in_tables = 0, walked = 0, lines = 0;
  std::set<std::string> visited;
  for (const Table& t : every_table()) {
    in_tables += t.command->flags.size();
    for (const fl::Flag& f : t.command->flags) {
      const std::string flag = f.operand ? f.name : "--" + f.name;  // an operand: "ID"
      std::vector<std::vector<std::string>> cases;
      for (const std::string& v : kHostile)
        cases.push_back(f.operand                  ? std::vector<std::string>{v}
                        : f.type == fl::Type::Switch ? std::vector<std::string>{flag + "=" + v}
                                                     : std::vector<std::string>{flag, v});
      if (f.type == fl::Type::Switch) cases.push_back({flag});
      for (const std::vector<std::string>& c : cases) {
        const std::string value = f.operand     ? c[0]
                                  : c.size() == 2 ? c[1]
                                                  : c[0].substr(std::min(c[0].size(), flag.size() + 1));
        const bool valid = f.type == fl::Type::Switch ? c[0] == flag : accepted(f, value);
        const std::string error = error_of_words(t, with_flag(t.name, f, c));
        SCOPED_TRACE(t.name + " " + fmt::format("{}", fmt::join(c, " ")) + ": " + error);
        ++lines;
        EXPECT_EQ(error.find('\n'), std::string::npos);
        if (valid) {
          EXPECT_TRUE(error.empty() || error.find(flag) != std::string::npos);
        } else if (f.type == fl::Type::Switch) {
          EXPECT_EQ(error, t.name + ": " + flag + " is a switch: it takes no value, got " +
                               (value == "" ? "''" : fl::parse_real(value) ? value : "'" + value + "'"));
        } else {
          EXPECT_EQ(error.rfind(t.name + ": " + flag + " must be " + fl::domain(f) + ", got ", 0), 0u);
          EXPECT_NE(error.find(value.empty() ? "''" : value), std::string::npos);
        }
      }
      walked += visited.insert(t.name + " " + flag).second ? 1 : 0;
    }
  }
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  // Every flag of every table, each once: a new flag is walked without a case of its own.
  EXPECT_EQ(walked, in_tables);
  EXPECT_GT(walked, 100u);
  std::printf("walked %zu flags of %zu tables, %zu command lines, in %.2f s\n", walked, every_table().size(), lines,
              seconds);
}

// Every train flag as a sweep's grid axis: each value goes through train's
// table, and a refused one names the axis and the flag.
TEST(FlagWalk, EveryTrainFlagAsASweepAxisIsReadByTrainsTable) {
  const std::vector<Table> tables = every_table();
  const auto it = std::find_if(tables.begin(), tables.end(), [](const Table& t) { return t.name == "ropegrad sweep"; });
  ASSERT_NE(it, tables.end());
  const Table& sweep = *it;
  for (const fl::Flag& f : tasks::train_command().flags) {
    for (const std::string& v : kHostile) {
      if (v.empty()) continue;  // "lr=": no values, its own error
      const std::string axis = f.name + "=" + v;
      const std::string error = error_of_words(sweep, {"--out", "/nonexistent/sweep", "--grid", axis});
      SCOPED_TRACE(axis + ": " + error);
      EXPECT_EQ(error.find('\n'), std::string::npos);
      if (f.type != fl::Type::Switch && accepted(f, v)) {
        EXPECT_TRUE(error.empty() || error.find("--" + f.name) != std::string::npos);
      } else {
        EXPECT_NE(error.find("--grid " + axis), std::string::npos);
        EXPECT_NE(error.find("--" + f.name), std::string::npos);
      }
    }
  }
}

// ---- the program: exit status 1 and one line on stderr --------------------------------------------

std::string shell_quoted(const std::string& word) {
  std::string out = "'";
  for (char ch : word) out += ch == '\'' ? std::string("'\\''") : std::string(1, ch);
  return out + "'";
}

// Runs `program` with `words`; the exit status and what it printed (stdout and stderr).
std::pair<int, std::string> run_program(const std::string& program, const std::vector<std::string>& words) {
  std::string command = program;
  for (const std::string& w : words) {
    command += ' ';
    command += shell_quoted(w);
  }
  command.append(" 2>&1");
  std::FILE* pipe = ::popen(command.c_str(), "r");
  std::string out;
  char buffer[4096];
  for (size_t n; (n = std::fread(buffer, 1, sizeof buffer, pipe)) > 0;) out.append(buffer, n);
  const int status = ::pclose(pipe);
  return {WIFEXITED(status) ? WEXITSTATUS(status) : -1, out};
}

std::pair<int, std::string> ropegrad(const std::vector<std::string>& words) { return run_program(ROPEGRAD_CLI, words); }

// Each table through the program itself: its first number flag given 1e300.
TEST(FlagWalk, TheProgramSaysABadValueInOneLineAndExitsWithOne) {
  for (const Table& t : every_table()) {
    const auto f = std::find_if(t.command->flags.begin(), t.command->flags.end(), [](const fl::Flag& g) {
      return g.type == fl::Type::Whole || g.type == fl::Type::Real;
    });
    if (f == t.command->flags.end()) continue;  // gradcheck, tokenize encode and decode: no number
    std::vector<std::string> words = with_flag(t.name, *f, {"--" + f->name, "1e300"});
    const bool course = t.name == "course final";
    if (!course) {  // "ropegrad tokenize train": the words "tokenize", "train" first
      std::istringstream name(t.name.substr(std::string("ropegrad ").size()));
      std::vector<std::string> head;
      for (std::string w; name >> w;) head.push_back(w);
      words.insert(words.begin(), head.begin(), head.end());
    }
    const auto [status, out] = run_program(course ? ROPEGRAD_COURSE_FINAL : ROPEGRAD_CLI, words);
    EXPECT_EQ(out, "error: " + t.name + ": --" + f->name + " must be " + fl::domain(*f) + ", got 1e300\n");
    EXPECT_EQ(status, course ? 2 : 1) << t.name;  // course final's 1 says "your run differs from the reference"
  }
}

// ---- the cases of the issue, each as it was before -------------------------------------------------

void expect_refused(const std::vector<std::string>& words, const std::string& message) {
  const auto [status, out] = ropegrad(words);
  EXPECT_EQ(status, 1) << out;
  EXPECT_EQ(out, "error: " + message + "\n");
}

// Was: "the bucket size must be positive, got -9223372036854775808 bytes" (a
// cast of 1e300 MB x 1e6 to int64), and "got 0 bytes" for 1e-9 MB.
TEST(FlagIssueCases, BucketMbHugeOrTiny) {
  expect_refused({"dp-simulate", "--preset", "small", "--bucket-mb", "1e300"},
                 "ropegrad dp-simulate: --bucket-mb must be a real number in (0, 1e6] MB, got 1e300");
  expect_refused({"dp-simulate", "--preset", "small", "--bucket-mb", "1e-9"},
                 "ropegrad dp-simulate: --bucket-mb 1e-9 is 0.001 bytes: a bucket holds at least one byte (1e-6 MB)");
}

// Was: "--batch expects a whole number, got 1e+300".
TEST(FlagIssueCases, BatchHuge) {
  expect_refused({"dp-simulate", "--batch", "1e300"},
                 "ropegrad dp-simulate: --batch must be a whole number in 1..1000000000, got 1e300");
  expect_refused({"train", "--batch", "1e300"}, "ropegrad train: --batch must be a whole number in 1..1000000000, got 1e300");
}

// Was: "context must be in 1..-9223372036854775808" and "in 1..0".
TEST(FlagIssueCases, ContextHugeOrFractional) {
  expect_refused({"dp-simulate", "--context", "1e300"},
                 "ropegrad dp-simulate: --context must be a whole number in 1..1048576, got 1e300");
  expect_refused({"dp-simulate", "--context", "0.5"},
                 "ropegrad dp-simulate: --context must be a whole number in 1..1048576, got 0.5");
  expect_refused({"account", "--context", "0.5"}, "ropegrad account: --context must be a whole number in 1..1048576, got 0.5");
}

// Was: step times printed with 300 digits.
TEST(FlagIssueCases, TinyRatesGiveNoEndlessTimes) {
  expect_refused({"dp-simulate", "--bandwidth-gbps", "1e-300"},
                 "ropegrad dp-simulate: --bandwidth-gbps must be a real number in [0.001, 1e6] Gb/s, got 1e-300");
  expect_refused({"dp-simulate", "--gflops", "1e-300"},
                 "ropegrad dp-simulate: --gflops must be a real number in [0.001, 1e9] GFLOP/s, got 1e-300");
  // Rates within range, a shape too large for them: the derived time is checked too.
  const auto [status, out] = ropegrad({"dp-simulate", "--preset", "xl", "--gflops", "0.001", "--batch", "1000000000",
                                       "--context", "1048576", "--ranks", "8"});
  EXPECT_EQ(status, 1);
  EXPECT_THAT(out, HasSubstr("error: ropegrad dp-simulate: one rank's step would take "));
  EXPECT_THAT(out, HasSubstr("s, more than 1e9 s: raise --gflops or --memory-gbs, or shrink the shape\n"));
}

// Was: inf and -nan% in the table.
TEST(FlagIssueCases, LatencyHuge) {
  expect_refused({"dp-simulate", "--latency-us", "1e308"},
                 "ropegrad dp-simulate: --latency-us must be a real number in [0, 1e6] microseconds, got 1e308");
}

// Was: accepted by dp-simulate (a step of 1195376640000000.000 s), refused by account.
TEST(FlagIssueCases, DpSimulateCapsTheBatchAsAccountDoes) {
  expect_refused({"dp-simulate", "--batch", "1e18"},
                 "ropegrad dp-simulate: --batch must be a whole number in 1..1000000000, got 1e18");
  expect_refused({"account", "--batch", "1e18"}, "ropegrad account: --batch must be a whole number in 1..1000000000, got 1e18");
}

// Was: two points, "seed=1" and "seed=01", the same run twice.
TEST(FlagIssueCases, SweepGridValuesAreComparedAsRead) {
  expect_refused({"sweep", "--out", "/nonexistent/sweep", "--grid", "seed=1,01", "--", "--steps", "1"},
                 "sweep: --grid seed=1,01: the values '1' and '01' are the same --seed (1)");
  expect_refused({"sweep", "--out", "/nonexistent/sweep", "--grid", "lr=1e-3,0.001"},
                 "sweep: --grid lr=1e-3,0.001: the values '1e-3' and '0.001' are the same --lr (0.001)");
}

}  // namespace
}  // namespace ropegrad
