#include "course/tool_options.h"

#include "tensor/error.h"

namespace ropegrad::course {

const flags::Command& check_command() {
  static const flags::Command c = [] {
    using namespace flags;
    return Command{"course-check",
                   "usage: course-check [ID [--verbose] | --list | --status | --registry-table]\n",
                   "An exercise's checks (scripts/dev.sh course check ID runs them); with no word,\n"
                   "every check as GoogleTest (CTest).",
                   {operand(text("ID", "ID", "the exercise, as course-check --list names it")),
                    on_off("verbose", "every check's full output, not only its verdict"),
                    on_off("list", "the exercises, in the book's order"),
                    on_off("status", "every exercise: done / failing / blocked / not started"),
                    on_off("registry-table", "every exercise as this program reads it (for a test)")}};
  }();
  return c;
}

const flags::Command& answer_command() {
  static const flags::Command c = [] {
    using namespace flags;
    return Command{"course-answer",
                   "usage: course-answer ID [--variant NAME] | --explain ID | --list\n",
                   "The book's computed answers (scripts/dev.sh course answer ID runs it): the value of\n"
                   "problem ID, computed by the library when asked.",
                   {operand(text("ID", "ID", "the problem, as course-answer --list names it")),
                    text("variant", "NAME", "the value of one of the problem's variants instead"),
                    on_off("explain", "the value with the steps that compute it"),
                    on_off("list", "every computed problem's id")}};
  }();
  return c;
}

namespace {

// How many of the switches `names` are on.
int count_on(const flags::Values& v, std::initializer_list<const char*> names) {
  int on = 0;
  for (const char* name : names) on += v.on(name) ? 1 : 0;
  return on;
}

}  // namespace

std::optional<CheckOptions> read_check_options(const std::vector<std::string>& words) {
  const std::optional<flags::Values> v = flags::read(check_command(), words);
  if (!v) return std::nullopt;
  const std::string& name = check_command().name;
  const int actions = count_on(*v, {"list", "status", "registry-table"});
  RG_CHECK(actions <= 1, name, "--list, --status and --registry-table go one at a time");
  RG_CHECK(actions == 0 || (!v->given("ID") && !v->on("verbose")), name,
           "--list, --status and --registry-table take no ID and no --verbose");
  RG_CHECK(actions == 1 || v->given("ID"), name, "ID is required (course-check --list shows the exercises)");
  CheckOptions o;
  o.action = v->on("list")             ? CheckOptions::Action::List
             : v->on("status")         ? CheckOptions::Action::Status
             : v->on("registry-table") ? CheckOptions::Action::RegistryTable
                                       : CheckOptions::Action::Check;
  o.id = v->text("ID");
  o.verbose = v->on("verbose");
  return o;
}

std::optional<AnswerOptions> read_answer_options(const std::vector<std::string>& words) {
  const std::optional<flags::Values> v = flags::read(answer_command(), words);
  if (!v) return std::nullopt;
  const std::string& name = answer_command().name;
  RG_CHECK(!(v->on("list") && (v->given("ID") || v->on("explain") || v->given("variant"))), name,
           "--list takes no ID, --explain or --variant");
  RG_CHECK(!(v->on("explain") && v->given("variant")), name, "--explain and --variant go one at a time");
  RG_CHECK(v->on("list") || v->given("ID"), name, "ID is required (course-answer --list shows the problems)");
  AnswerOptions o;
  o.action = v->on("list")      ? AnswerOptions::Action::List
             : v->on("explain") ? AnswerOptions::Action::Explain
                                : AnswerOptions::Action::Answer;
  o.id = v->text("ID");
  o.variant = v->text("variant");
  return o;
}

}  // namespace ropegrad::course
