// `ropegrad`'s commands, each with its flag tables (io/flags.h) and its
// entry point: cli/main.cpp dispatches through this list, and the flag walk
// (tests/test_flags.cpp) goes through every table in it.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "io/flags.h"
#include "train/sweep.h"

namespace ropegrad::tasks {

struct CommandEntry {
  std::string name;                    // "train"
  std::string summary;                 // its line in `ropegrad --help`
  std::vector<flags::Command> tables;  // its flags (tokenize: a table per subcommand)
  int (*run)(int argc, char** argv);   // the command, given the words after its name
  // Reads the words as `run` does and builds and checks what `run` would
  // use, without doing the work (no training, no file read or written): the
  // flag walk's dry run. Tokenize's words start with the subcommand.
  void (*check)(const std::vector<std::string>& words);
};

// In `ropegrad --help`'s order.
const std::vector<CommandEntry>& commands();
const CommandEntry* find_command(std::string_view name);

// ---- each command (tasks/<command>_cli.cpp) ----------------------------------------------------

// train and compare (cli/train_cli.cpp)
const flags::Command& train_command();
const flags::Command& compare_command();
int run_train(int argc, char** argv);
int run_compare(int argc, char** argv);
void check_train(const std::vector<std::string>& words);
void check_compare(const std::vector<std::string>& words);
// train's table and checks, for the sweep's grid values and fixed options
TrainOptionReader train_option_reader();

// generate and gradcheck (cli/generate_cli.cpp)
const flags::Command& generate_command();
const flags::Command& gradcheck_command();
int run_generate(int argc, char** argv);
int run_gradcheck(int argc, char** argv);
void check_generate(const std::vector<std::string>& words);
void check_gradcheck(const std::vector<std::string>& words);

// sweep (cli/sweep_cli.cpp)
const flags::Command& sweep_command();
int run_sweep_command(int argc, char** argv);
void check_sweep_command(const std::vector<std::string>& words);

// tokenize train|encode|decode (cli/tokenize_cli.cpp)
std::vector<flags::Command> tokenize_commands();
int run_tokenize(int argc, char** argv);
void check_tokenize(const std::vector<std::string>& words);

// account (cli/account_cli.cpp)
const flags::Command& account_command();
int run_account(int argc, char** argv);
void check_account(const std::vector<std::string>& words);

// dp-simulate (cli/dp_simulate_cli.cpp)
const flags::Command& dp_simulate_command();
int run_dp_simulate(int argc, char** argv);
void check_dp_simulate(const std::vector<std::string>& words);

}  // namespace ropegrad::tasks
