// `ropegrad`: the command-line program. Its commands, each with its flag
// table (io/flags.h), are listed in cli/commands.cpp:
//   ropegrad train      train one model on one task (cli/train_cli.cpp)
//   ropegrad compare    train all three attention variants with the same budget (cli/train_cli.cpp)
//   ropegrad sweep      train a grid of settings with the same budget (cli/sweep_cli.cpp)
//   ropegrad generate   sample from a trained checkpoint (cli/generate_cli.cpp)
//   ropegrad gradcheck  the gradient-check report of every op and module (cli/generate_cli.cpp)
//   ropegrad tokenize   BPE tokenizer training, encoding, decoding (cli/tokenize_cli.cpp)
//   ropegrad account    parameters, FLOPs and memory of a model shape (cli/account_cli.cpp)
//   ropegrad dp-simulate  data-parallel scaling from a backward profile (cli/dp_simulate_cli.cpp)
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include "cli/commands.h"
#include "tensor/error.h"
#include "tensor/printable.h"

using namespace ropegrad;

namespace {

void print_usage(std::FILE* to) {
  fmt::print(to, "usage: ropegrad <command> [options]\n\ncommands:\n");
  for (const tasks::CommandEntry& c : tasks::commands()) fmt::print(to, "  {:<11} {}\n", c.name, c.summary);
  fmt::print(to, "\nRun 'ropegrad <command> --help' for a command's options.\n");
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2 || !std::strcmp(argv[1], "--help") || !std::strcmp(argv[1], "-h")) {
    print_usage(stdout);
    return argc < 2 ? 2 : 0;
  }
  const std::string command = argv[1];
  const tasks::CommandEntry* entry = tasks::find_command(command);
  if (entry == nullptr) {
    std::vector<std::string> names;
    for (const tasks::CommandEntry& c : tasks::commands()) names.push_back(c.name);
    const std::string near = flags::closest(command, names);
    fmt::print(stderr, "ropegrad: unknown command {}{}\n\n", quote_bytes(command),
               near.empty() ? "" : fmt::format("; did you mean {}?", near));
    print_usage(stderr);
    return 2;
  }
  try {
    return entry->run(argc - 2, argv + 2);
  } catch (const Error& e) {  // the message starts with the op that refused ("train: ...")
    fmt::print(stderr, "error: {}\n", e.what());
    return 1;
  } catch (const std::exception& e) {  // a system error (file system, memory): still a message, not a crash
    fmt::print(stderr, "error: ropegrad {}: {}\n", command, e.what());
    return 1;
  }
}
