// The flags of the course's two small programs, course-check and
// course-answer, read by the command line's one reader (io/flags.h): their
// tables, their --help, and every error by its one rule.
//
//   course-check [ID [--verbose] | --list | --status | --registry-table]
//   course-answer ID [--variant NAME] | --explain ID | --list
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "io/flags.h"

namespace ropegrad::course {

struct CheckOptions {
  enum class Action { Check, List, Status, RegistryTable } action = Action::Check;
  std::string id;  // Check: the exercise, as typed (the program looks it up and suggests ids)
  bool verbose = false;
};

struct AnswerOptions {
  enum class Action { Answer, Explain, List } action = Action::Answer;
  std::string id;       // the problem, as typed
  std::string variant;  // Answer: "" or the name of one of the problem's variants
};

const flags::Command& check_command();
const flags::Command& answer_command();

// The options of `words` (argv after the program's name); nullopt for
// --help. Flags that do not go together are an Error naming the program.
std::optional<CheckOptions> read_check_options(const std::vector<std::string>& words);
std::optional<AnswerOptions> read_answer_options(const std::vector<std::string>& words);

}  // namespace ropegrad::course
