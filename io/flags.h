// The command line's one flag reader and one number parser.
//
// A command declares each of its flags once, in a table: its name, type
// (whole number, real number, text, path, choice among names, switch, list
// of whole numbers), unit, range, default and help. From that table come
//   - the command's --help: one line a flag, with its default, and its type,
//     range and unit where it has them;
//   - the reading of its words (`read`), every value converted and checked
//     against the table before the command sees it: no number is cast to an
//     integer before its range is checked;
//   - every error, by one rule, one line naming the command, the flag and
//     the value given:
//       ropegrad train: --context must be a whole number in 1..1048576, got 0.5
//       ropegrad dp-simulate: --bucket-mb must be a real number in (0, 1e6] MB, got 1e300
//       ropegrad train: unknown argument '--step'; did you mean --steps? (see ropegrad train --help)
//
// Nothing here knows a command: the tables are the commands' own
// (cli/commands.h lists them), and what a command checks across its flags
// (a derived size, a flag that needs another) it checks itself.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "io/edit_distance.h"

namespace ropegrad::flags {

enum class Type {
  Whole,      // an integer in [min, max]: "12", "-1", "1e3" (a whole number written as a real)
  Real,       // a finite real number in `range`
  Text,       // any non-empty text
  Path,       // a non-empty path (the command checks what is there)
  Choice,     // one of `choices`
  Switch,     // present or not; takes no value
  WholeList,  // whole numbers in [min, max] between `separator`s: "1,8,16"
};

// A real flag's range, each end closed or open: (0, 1e6] is {0, 1e6, true, false}.
struct Interval {
  double lo = 0, hi = 0;
  bool lo_open = false, hi_open = false;
};
constexpr Interval closed(double lo, double hi) { return {lo, hi, false, false}; }       // [lo, hi]
constexpr Interval open_closed(double lo, double hi) { return {lo, hi, true, false}; }   // (lo, hi]
constexpr Interval closed_open(double lo, double hi) { return {lo, hi, false, true}; }   // [lo, hi)

// One row of a command's table.
struct Flag {
  std::string name;                  // without the leading "--"
  Type type = Type::Text;
  std::string unit;                  // of a number: "seconds", "MB", "Gb/s"...; "" for none
  Interval range;                    // Real
  int64_t min = 0, max = 0;          // Whole, WholeList: the closed range
  char separator = ',';              // WholeList: between the numbers (' ': any run of blanks)
  std::vector<std::string> choices;  // Choice
  std::string default_value;         // the value when the flag is not given; "" for none
  std::string help;                  // may hold '\n': --help continues on the next line
  std::string placeholder;           // the value's name in --help when there is no default ("FILE")
  bool required = false;
  bool repeated = false;             // each value given is kept (otherwise the last one counts)
  bool operand = false;              // a word without "--" ("course-check ID"), by its place: `name` is "ID"
};

// The rows, as a table writes them.
Flag whole(std::string name, int64_t min, int64_t max, std::string default_value, std::string help,
           std::string unit = "");
Flag real(std::string name, Interval range, std::string default_value, std::string help, std::string unit = "");
Flag choice(std::string name, std::vector<std::string> choices, std::string default_value, std::string help);
Flag text(std::string name, std::string placeholder, std::string help, std::string default_value = "");
Flag path(std::string name, std::string placeholder, std::string help);
Flag on_off(std::string name, std::string help);  // a switch
Flag whole_list(std::string name, int64_t min, int64_t max, char separator, std::string default_value,
                std::string help);
Flag required(Flag f);
Flag repeated(Flag f);
// An operand: the command's next word that is no flag, named `name` in --help
// and in errors ("ID must be ..."), checked by its type as a flag is. The
// table's operands take the words in their order.
Flag operand(Flag f);

// A command: its name as errors and --help give it, and its table.
struct Command {
  Command(std::string name, std::string usage, std::string summary, std::vector<Flag> flags = {})
      : name(std::move(name)), usage(std::move(usage)), summary(std::move(summary)), flags(std::move(flags)) {}

  std::string name;          // "ropegrad train"
  std::string usage;         // the usage line(s); "" for "usage: NAME [options]"
  std::string summary;       // the paragraph under the usage
  std::vector<Flag> flags;
  std::string rest;          // "": no words after "--"; else their name in --help ("TRAIN OPTIONS")
  std::string rest_help;     // and what they are
  std::string unknown_hint;  // said with an unknown argument ("train options go after --")
};

// One flag's value, converted.
struct Value {
  std::string text;             // as given (Switch: "")
  int64_t whole = 0;            // Whole
  double real = 0;              // Real
  std::vector<int64_t> wholes;  // WholeList
};

// The flags a command was given, each checked; a flag not given reads as its
// default. Asking for a flag that is not in the table, or as another type,
// is a programming error (an Error naming it).
class Values {
 public:
  Values(const Command& command, std::map<std::string, std::vector<Value>> given, std::vector<std::string> rest);

  bool given(const std::string& name) const;
  int64_t whole(const std::string& name) const;
  double real(const std::string& name) const;
  const std::string& text(const std::string& name) const;  // Text, Path, Choice
  const std::string& typed(const std::string& name) const;  // any flag's value as given (or the default), for messages
  bool on(const std::string& name) const;                  // Switch
  std::vector<int64_t> wholes(const std::string& name) const;
  std::vector<std::string> all(const std::string& name) const;  // a repeated flag's values, in order
  const std::vector<std::string>& rest() const { return rest_; }  // the words after "--"
  const std::string& command() const { return command_; }

 private:
  const Value& value(const std::string& name, Type type) const;

  std::string command_;
  std::vector<Flag> flags_;
  std::map<std::string, std::vector<Value>> given_;
  std::map<std::string, Value> defaults_;
  std::vector<std::string> rest_;
};

// Reads a command's words (argv after the command's name). nullopt when
// --help or -h was given: the help is printed on stdout. Every mistake is an
// Error naming the command.
std::optional<Values> read(const Command& command, const std::vector<std::string>& words);
std::optional<Values> read(const Command& command, int argc, char** argv);

// The --help of a command, from its table.
std::string help_text(const Command& command);

// The flag of that name, or nullptr.
const Flag* find(const Command& command, std::string_view name);

// `text` as the value of `flag`, converted and checked; an Error
//   "OP: --NAME must be DOMAIN, got TEXT"
// otherwise. `op` names the command.
Value check_value(const Flag& flag, const std::string& text, const std::string& op);

// One spelling of the value `text` has for `flag`, so that two spellings of
// one value compare equal: "01" and "1" -> "1", "1e-3" and "0.001" -> "0.001".
// An invalid value is an Error, as check_value's.
std::string canonical(const Flag& flag, const std::string& text, const std::string& op);

// What a flag takes, as errors and --help say it: "a whole number in
// 1..1048576", "a real number in (0, 1e6] MB", "one of pre | post | none".
std::string domain(const Flag& flag);

// The one number parser of the command line (and of the run files that use
// it). A whole number: an integer ("12", "-3", "+4", "007") or a real that is
// one ("1e3", "2.0"), within int64; a real: a decimal number, maybe with an
// exponent, parsed as a double (finite or not: "inf", "nan" parse, and the
// range check refuses them). nullopt for anything else ("12abc", "", " 1",
// "0x10", "1e400").
std::optional<int64_t> parse_whole(std::string_view text);
std::optional<double> parse_real(std::string_view text);

// A number for a message or --help: "1048576", "1e6", "0.999999", "1e-300".
std::string number_text(double x);

// Levenshtein distance (io/edit_distance.h), and the name of `names` closest
// to `typed` when it is at most 2 edits away (3 from 10 characters on), else
// "": did you mean.
using ::ropegrad::edit_distance;
std::string closest(std::string_view typed, const std::vector<std::string>& names);

}  // namespace ropegrad::flags
