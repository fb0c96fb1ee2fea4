#include "tasks/command_flags.h"

#include <fmt/format.h>

#include <cstdio>

#include "tensor/error.h"

namespace ropegrad::tasks {

void print_command_flags(const std::vector<CommandFlag>& flags) {
  for (const CommandFlag& f : flags) {
    const std::string left = *f.value ? fmt::format("--{} {}", f.name, f.value) : fmt::format("--{}", f.name);
    std::printf("  %-26s %s\n", left.c_str(), f.help);
  }
}

std::map<std::string, std::string> parse_command_flags(int argc, char** argv, const std::vector<CommandFlag>& flags,
                                                       const char* op) {
  std::map<std::string, std::string> given;
  for (int i = 0; i < argc; ++i) {
    const std::string arg = argv[i];
    const CommandFlag* flag = nullptr;
    for (const CommandFlag& f : flags) {
      if (arg == std::string("--") + f.name) flag = &f;
    }
    RG_CHECK(flag != nullptr, op, "unknown argument '{}' (see --help)", arg);
    if (*flag->value == '\0') {
      given[flag->name] = "";
      continue;
    }
    RG_CHECK(i + 1 < argc, op, "--{} needs a value", flag->name);
    given[flag->name] = argv[++i];
  }
  return given;
}

}  // namespace ropegrad::tasks
