// The flag tables of the commands that count from a model shape (`ropegrad
// account`, `ropegrad dp-simulate`): each flag with the default its --help
// shows, read into a map of the flags given.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "nn/transformer.h"

namespace ropegrad::tasks {

struct CommandFlag {
  const char* name;   // without the leading "--"
  const char* value;  // the default shown in --help; "" for a switch
  const char* help;
};

// "  --name VALUE   help" for each flag, one line each.
void print_command_flags(const std::vector<CommandFlag>& flags);

// The flags given, by name; a switch maps to "". An unknown flag or a
// missing value is an error naming `op`.
std::map<std::string, std::string> parse_command_flags(int argc, char** argv, const std::vector<CommandFlag>& flags,
                                                       const char* op);

// The model shape of --preset, --vocab, --d-model, --layers, --heads, --d-ff,
// --attention, --sigma and --tie, errors naming `op` (tasks/account_cli.cpp).
nn::TransformerConfig model_from_flags(const std::map<std::string, std::string>& given, const char* op,
                                       std::string* title);

}  // namespace ropegrad::tasks
