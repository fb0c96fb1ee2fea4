#include "io/flags.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <cstdio>

#include "io/edit_distance.h"
#include "tensor/parse_number.h"
#include "tensor/error.h"
#include "tensor/printable.h"

namespace ropegrad::flags {

// ---- the rows ----------------------------------------------------------------------------------

Flag whole(std::string name, int64_t min, int64_t max, std::string default_value, std::string help,
           std::string unit) {
  Flag f;
  f.name = std::move(name);
  f.type = Type::Whole;
  f.unit = std::move(unit);
  f.placeholder = "N";
  f.min = min;
  f.max = max;
  f.default_value = std::move(default_value);
  f.help = std::move(help);
  return f;
}

Flag real(std::string name, Interval range, std::string default_value, std::string help, std::string unit) {
  Flag f;
  f.name = std::move(name);
  f.type = Type::Real;
  f.unit = std::move(unit);
  f.placeholder = "X";
  f.range = range;
  f.default_value = std::move(default_value);
  f.help = std::move(help);
  return f;
}

Flag choice(std::string name, std::vector<std::string> choices, std::string default_value, std::string help) {
  Flag f;
  f.name = std::move(name);
  f.type = Type::Choice;
  f.choices = std::move(choices);
  f.default_value = std::move(default_value);
  f.help = std::move(help);
  return f;
}

Flag text(std::string name, std::string placeholder, std::string help, std::string default_value) {
  Flag f;
  f.name = std::move(name);
  f.type = Type::Text;
  f.placeholder = std::move(placeholder);
  f.help = std::move(help);
  f.default_value = std::move(default_value);
  return f;
}

Flag path(std::string name, std::string placeholder, std::string help) {
  Flag f = text(std::move(name), std::move(placeholder), std::move(help));
  f.type = Type::Path;
  return f;
}

Flag on_off(std::string name, std::string help) {
  Flag f;
  f.name = std::move(name);
  f.type = Type::Switch;
  f.help = std::move(help);
  return f;
}

Flag whole_list(std::string name, int64_t min, int64_t max, char separator, std::string default_value,
                std::string help) {
  Flag f = whole(std::move(name), min, max, std::move(default_value), std::move(help));
  f.type = Type::WholeList;
  f.separator = separator;
  return f;
}

Flag required(Flag f) {
  f.required = true;
  return f;
}

Flag repeated(Flag f) {
  f.repeated = true;
  return f;
}

Flag operand(Flag f) {
  f.operand = true;
  return f;
}

// ---- numbers -----------------------------------------------------------------------------------

namespace {

// The value as a message shows it: as typed, quoted unless it is a number.
std::string shown(const std::string& text) {
  return scan_real(text).status != ScannedReal::Status::NotANumber ? text : quote_bytes(text);
}

std::string without_exponent_padding(std::string s) {  // "1e+06" -> "1e6", "1e-05" -> "1e-5"
  const size_t e = s.find('e');
  if (e == std::string::npos) return s;
  std::string exponent = s.substr(e + 1);
  const bool negative = exponent[0] == '-';
  if (exponent[0] == '+' || negative) exponent.erase(0, 1);
  exponent.erase(0, std::min(exponent.find_first_not_of('0'), exponent.size() - 1));
  return s.substr(0, e + 1) + (negative ? "-" : "") + exponent;
}

}  // namespace

std::optional<double> parse_real(std::string_view text) { return parse_double(text); }

std::optional<int64_t> parse_whole(std::string_view text) {
  if (const std::optional<int64_t> n = parse_int64(text)) return n;
  if (text.find_first_of(".eE") == std::string_view::npos) return std::nullopt;  // an integer literal out of range
  // A whole number written as a real ("1e3"): checked to be one, and within
  // int64, before it is converted.
  const std::optional<double> v = parse_double(text);
  if (!v || !std::isfinite(*v) || std::trunc(*v) != *v || *v < -0x1p63 || *v >= 0x1p63) return std::nullopt;
  return static_cast<int64_t>(*v);
}

std::string number_text(double x) {
  if (x == 0) return "0";
  std::string plain = fmt::format("{}", x);  // the shortest that reads back as x
  if (plain.find('e') != std::string::npos) plain = std::abs(x) >= 1 ? fmt::format("{:.0f}", x) : "";
  if (plain.size() > 2 && plain.substr(plain.size() - 2) == ".0") plain.resize(plain.size() - 2);
  std::string exponent;
  for (int digits = 0; digits <= 17; ++digits) {  // the shortest that reads back as x
    exponent = fmt::format("{:.{}e}", x, digits);
    if (parse_real(exponent) == x) break;
  }
  exponent = without_exponent_padding(exponent);
  return plain.empty() || exponent.size() + 3 <= plain.size() ? exponent : plain;
}

// ---- values ------------------------------------------------------------------------------------

std::string domain(const Flag& f) {
  const std::string unit = f.unit.empty() ? "" : " " + f.unit;
  switch (f.type) {
    case Type::Whole:
      return fmt::format("a whole number in {}..{}{}", f.min, f.max, unit);
    case Type::Real:
      return fmt::format("a real number in {}{}, {}{}{}", f.range.lo_open ? "(" : "[", number_text(f.range.lo),
                         number_text(f.range.hi), f.range.hi_open ? ")" : "]", unit);
    case Type::Choice:
      return fmt::format("one of {}", fmt::join(f.choices, " | "));
    case Type::WholeList:
      return fmt::format("whole numbers in {}..{}{} separated by {}", f.min, f.max, unit,
                         f.separator == ' ' ? "spaces" : f.separator == ',' ? "commas" : fmt::format("'{}'", f.separator));
    case Type::Path:
      return "a path";
    case Type::Text:
      return "a non-empty text";
    case Type::Switch:
      return "a switch (no value)";
  }
  return "?";
}

namespace {

bool in_range(const Flag& f, double v) {
  const Interval& r = f.range;
  return std::isfinite(v) && (r.lo_open ? v > r.lo : v >= r.lo) && (r.hi_open ? v < r.hi : v <= r.hi);
}

// The items of a list: between separators (' ': between runs of blanks).
std::vector<std::string> items_of(const std::string& text, char separator) {
  std::vector<std::string> items;
  if (separator == ' ') {
    size_t at = text.find_first_not_of(" \t");
    while (at != std::string::npos) {
      const size_t end = std::min(text.find_first_of(" \t", at), text.size());
      items.push_back(text.substr(at, end - at));
      at = text.find_first_not_of(" \t", end);
    }
    return items;
  }
  for (size_t at = 0;;) {
    const size_t end = std::min(text.find(separator, at), text.size());
    items.push_back(text.substr(at, end - at));
    if (end == text.size()) return items;
    at = end + 1;
  }
}

// How messages name a flag: "--steps"; an operand by its name: "ID".
std::string label(const Flag& f) { return f.operand ? f.name : "--" + f.name; }

[[noreturn]] void refuse(const Flag& f, const std::string& text, const std::string& op, const std::string& detail = "") {
  fail(op, "{} must be {}, got {}{}", label(f), domain(f), shown(text), detail);
}

}  // namespace

Value check_value(const Flag& f, const std::string& text, const std::string& op) {
  Value v;
  v.text = text;
  switch (f.type) {
    case Type::Whole: {
      const std::optional<int64_t> n = parse_whole(text);
      if (!n || *n < f.min || *n > f.max) refuse(f, text, op);
      v.whole = *n;
      break;
    }
    case Type::Real: {
      const std::optional<double> x = parse_real(text);
      if (!x || !in_range(f, *x)) refuse(f, text, op);
      v.real = *x;
      break;
    }
    case Type::Choice:
      if (std::find(f.choices.begin(), f.choices.end(), text) == f.choices.end()) refuse(f, text, op);
      break;
    case Type::WholeList:
      for (const std::string& item : items_of(text, f.separator)) {
        const std::optional<int64_t> n = parse_whole(item);
        if (!n || *n < f.min || *n > f.max) refuse(f, item, op, fmt::format(" in {}", quote_bytes(text)));
        v.wholes.push_back(*n);
      }
      if (v.wholes.empty()) refuse(f, text, op);
      break;
    case Type::Text:
    case Type::Path:
      if (text.empty()) refuse(f, text, op);
      break;
    case Type::Switch:
      fail(op, "--{} is a switch: it takes no value, got {}", f.name, shown(text));
  }
  return v;
}

std::string canonical(const Flag& f, const std::string& text, const std::string& op) {
  const Value v = check_value(f, text, op);
  switch (f.type) {
    case Type::Whole:
      return std::to_string(v.whole);
    case Type::Real:
      return fmt::format("{}", v.real == 0 ? 0.0 : v.real);  // -0 is 0
    case Type::WholeList:
      return fmt::format("{}", fmt::join(v.wholes, std::string(1, f.separator)));
    default:
      return v.text;
  }
}

Values::Values(const Command& command, std::map<std::string, std::vector<Value>> given, std::vector<std::string> rest)
    : command_(command.name), flags_(command.flags), given_(std::move(given)), rest_(std::move(rest)) {
  for (const Flag& f : flags_) {
    if (f.type == Type::Switch || (f.default_value.empty() && (f.type == Type::Text || f.type == Type::Path))) {
      defaults_[f.name] = Value{};
    } else if (!f.default_value.empty()) {
      defaults_[f.name] = check_value(f, f.default_value, command_ + " (the table's default)");
    }
  }
}

const Value& Values::value(const std::string& name, Type type) const {
  const auto f = std::find_if(flags_.begin(), flags_.end(), [&](const Flag& g) { return g.name == name; });
  RG_CHECK(f != flags_.end(), command_, "no flag --{} in the table (a mistake in the program)", name);
  const bool text_like = f->type == Type::Text || f->type == Type::Path || f->type == Type::Choice;
  RG_CHECK(f->type == type || (type == Type::Text && text_like), command_,
           "--{} is read as another type than its table's (a mistake in the program)", name);
  const auto it = given_.find(name);
  if (it != given_.end()) return it->second.back();
  const auto d = defaults_.find(name);
  RG_CHECK(d != defaults_.end(), command_, "--{} has no default (a mistake in the program)", name);
  return d->second;
}

bool Values::given(const std::string& name) const {
  const bool known = std::any_of(flags_.begin(), flags_.end(), [&](const Flag& f) { return f.name == name; });
  RG_CHECK(known, command_, "no flag --{} in the table (a mistake in the program)", name);
  return given_.count(name) > 0;
}
int64_t Values::whole(const std::string& name) const { return value(name, Type::Whole).whole; }
double Values::real(const std::string& name) const { return value(name, Type::Real).real; }
const std::string& Values::text(const std::string& name) const { return value(name, Type::Text).text; }
const std::string& Values::typed(const std::string& name) const {
  const auto f = std::find_if(flags_.begin(), flags_.end(), [&](const Flag& g) { return g.name == name; });
  RG_CHECK(f != flags_.end(), command_, "no flag --{} in the table (a mistake in the program)", name);
  return value(name, f->type).text;
}

bool Values::on(const std::string& name) const {
  value(name, Type::Switch);  // checks the name and the type
  return given_.count(name) > 0;
}
std::vector<int64_t> Values::wholes(const std::string& name) const { return value(name, Type::WholeList).wholes; }

std::vector<std::string> Values::all(const std::string& name) const {
  std::vector<std::string> out;
  const auto it = given_.find(name);
  if (it != given_.end()) {
    for (const Value& v : it->second) out.push_back(v.text);
  }
  return out;
}

// ---- reading -----------------------------------------------------------------------------------

const Flag* find(const Command& command, std::string_view name) {
  for (const Flag& f : command.flags) {
    if (f.name == name && !f.operand) return &f;
  }
  return nullptr;
}

namespace {

std::vector<std::string> names_of(const Command& command) {
  std::vector<std::string> names;
  for (const Flag& f : command.flags) {
    if (!f.operand) names.push_back("--" + f.name);
  }
  return names;
}

// `word` is no flag of the command. `after_switch`: the switch just before it.
[[noreturn]] void unknown(const Command& command, const std::string& word, const Flag* after_switch) {
  std::string why;
  if (after_switch != nullptr && word.rfind("--", 0) != 0) {
    why = fmt::format("; --{} is a switch and takes no value", after_switch->name);
  } else if (const std::string near = closest(word.substr(0, word.find('=')), names_of(command)); !near.empty()) {
    why = fmt::format("; did you mean {}?", near);
  }
  const std::string hint = command.unknown_hint.empty() ? "" : command.unknown_hint + "; ";
  fail(command.name, "unknown argument {}{} ({}see {} --help)", quote_bytes(word), why, hint, command.name);
}

// The value of the flag at words[i] ("--name VALUE" or "--name=VALUE"); moves i past it.
std::string value_of(const Command& command, const Flag& f, const std::vector<std::string>& words, size_t& i,
                     const std::optional<std::string>& inline_value) {
  if (inline_value) return *inline_value;
  RG_CHECK(i + 1 < words.size(), command.name, "--{} needs a value ({})", f.name, domain(f));
  const std::string& next = words[i + 1];
  RG_CHECK(!(next.rfind("--", 0) == 0 && find(command, next.substr(2)) != nullptr), command.name,
           "--{} needs a value ({}), got the flag {}", f.name, domain(f), next);
  return words[++i];
}

// The table's next operand not yet given, for a word that is no flag; nullptr when none is left.
const Flag* next_operand(const Command& command, const std::map<std::string, std::vector<Value>>& given,
                         const std::string& word) {
  if (word.rfind("--", 0) == 0) return nullptr;  // a flag's spelling, never an operand ("-1" may be one)
  for (const Flag& f : command.flags) {
    if (f.operand && given.count(f.name) == 0) return &f;
  }
  return nullptr;
}

}  // namespace

std::optional<Values> read(const Command& command, const std::vector<std::string>& words) {
  std::map<std::string, std::vector<Value>> given;
  std::vector<std::string> rest;
  const Flag* last_switch = nullptr;
  for (size_t i = 0; i < words.size(); ++i) {
    const std::string& word = words[i];
    if (word == "--help" || word == "-h") {
      std::fputs(help_text(command).c_str(), stdout);
      return std::nullopt;
    }
    if (word == "--" && !command.rest.empty()) {
      rest.assign(words.begin() + static_cast<std::ptrdiff_t>(i) + 1, words.end());
      break;
    }
    if (const Flag* o = next_operand(command, given, word); o != nullptr) {
      given[o->name].push_back(check_value(*o, word, command.name));
      last_switch = nullptr;
      continue;
    }
    const size_t eq = word.find('=');
    const Flag* f = word.rfind("--", 0) == 0 ? find(command, word.substr(2, eq == std::string::npos ? eq : eq - 2)) : nullptr;
    if (f == nullptr) unknown(command, word, last_switch);
    const std::optional<std::string> inline_value =
        eq == std::string::npos ? std::nullopt : std::optional<std::string>(word.substr(eq + 1));
    last_switch = f->type == Type::Switch ? f : nullptr;
    if (f->type == Type::Switch && inline_value) check_value(*f, *inline_value, command.name);  // refused
    const Value v = f->type == Type::Switch ? Value{}
                                            : check_value(*f, value_of(command, *f, words, i, inline_value), command.name);
    std::vector<Value>& slot = given[f->name];
    if (!f->repeated) slot.clear();  // the last one counts
    slot.push_back(v);
  }
  for (const Flag& f : command.flags) {
    RG_CHECK(!f.required || given.count(f.name) > 0, command.name, "{} is required",
             f.operand ? f.name : "--" + f.name + " " + (f.placeholder.empty() ? "VALUE" : f.placeholder));
  }
  return Values(command, std::move(given), std::move(rest));
}

std::optional<Values> read(const Command& command, int argc, char** argv) {
  return read(command, std::vector<std::string>(argv, argv + argc));
}

// ---- help --------------------------------------------------------------------------------------

namespace {

constexpr size_t kHelpColumn = 29;  // where the help of each flag starts
constexpr size_t kHelpWidth = 120;  // a longer line puts the domain on a line of its own

// "--name DEFAULT" (or "--name PLACEHOLDER"; a switch: "--name"; an operand: "NAME").
std::string left_column(const Flag& f) {
  if (f.operand) return f.name;
  if (f.type == Type::Switch) return "--" + f.name;
  const std::string value = !f.default_value.empty() ? f.default_value
                            : !f.placeholder.empty()  ? f.placeholder
                            : f.type == Type::Choice  ? "NAME"
                                                      : "X";
  return fmt::format("--{} {}", f.name, value);
}

// The help of one flag: the choices first (a choice), the domain last (a number).
std::string help_of(const Flag& f) {
  std::string help = f.help;
  if (f.type == Type::Choice) {
    const std::string names = fmt::format("{}", fmt::join(f.choices, " | "));
    help = help.empty() ? names : help[0] == '(' ? names + " " + help : names + ": " + help;
  }
  std::vector<std::string> notes;
  if (f.type == Type::Whole || f.type == Type::Real || f.type == Type::WholeList) notes.push_back(domain(f));
  if (f.operand && !f.default_value.empty()) notes.push_back("default " + f.default_value);  // no left column for it
  if (f.repeated) notes.push_back("may be given more than once");
  if (f.required) notes.push_back("required");
  if (notes.empty()) return help;
  const std::string note = fmt::format("{}", fmt::join(notes, "; "));
  const size_t last_line = help.size() - std::min(help.size(), help.rfind('\n') + 1);
  if (help.empty()) return note;
  if (kHelpColumn + last_line + 2 + note.size() <= kHelpWidth) return help + "; " + note;
  return help + "\n" + note;
}

}  // namespace

std::string help_text(const Command& command) {
  std::string out = command.usage.empty() ? fmt::format("usage: {} [options]\n", command.name) : command.usage;
  if (!command.summary.empty()) out += "\n" + command.summary + "\n";
  const std::string indent(kHelpColumn, ' ');
  const auto line = [&](const std::string& left, const std::string& help) {
    std::string text = help;
    for (size_t at = text.find('\n'); at != std::string::npos; at = text.find('\n', at + 1 + indent.size()))
      text.insert(at + 1, indent);
    out += left.size() + 3 > kHelpColumn ? fmt::format("  {}\n{}{}\n", left, indent, text)
                                         : fmt::format("  {:<{}} {}\n", left, kHelpColumn - 3, text);
  };
  // The operands first, under their own heading, then the flags.
  for (const bool operands : {true, false}) {
    const bool any = std::any_of(command.flags.begin(), command.flags.end(), [&](const Flag& f) { return f.operand == operands; });
    if (operands && !any) continue;
    out += operands ? "\narguments:\n" : "\noptions:\n";
    for (const Flag& f : command.flags) {
      if (f.operand == operands) line(left_column(f), help_of(f));
    }
  }
  if (!command.rest.empty()) line("-- " + command.rest, command.rest_help);
  return out;
}

// ---- did you mean ------------------------------------------------------------------------------

std::string closest(std::string_view typed, const std::vector<std::string>& names) {
  const std::string* best = nullptr;
  size_t best_d = 0;
  for (const std::string& name : names) {
    const size_t d = edit_distance(typed, name);
    if (best == nullptr || d < best_d) best = &name, best_d = d;
  }
  return best != nullptr && best_d <= (typed.size() >= 10 ? 3u : 2u) ? *best : "";
}

}  // namespace ropegrad::flags
