// The course final's flags (course/final_check.cpp), read by the command
// line's one reader (io/flags.h).
//
//   course-final --corpus FILE --out DIR [--reference TRACE] [--write-reference TRACE] [--steps N]
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "io/flags.h"

namespace ropegrad::course {

struct FinalOptions {
  std::string corpus, out, reference, write_reference;
  int64_t steps = 150;
};

const flags::Command& final_command();

// The options of `words` (argv after the program's name); nullopt for --help.
std::optional<FinalOptions> read_final_options(const std::vector<std::string>& words);

}  // namespace ropegrad::course
