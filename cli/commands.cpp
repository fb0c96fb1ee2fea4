#include "cli/commands.h"

namespace ropegrad::tasks {

const std::vector<CommandEntry>& commands() {
  static const std::vector<CommandEntry> list = {
      {"train", "train one transformer LM on one task (copy, recall, entailment, text)", {train_command()}, run_train,
       check_train},
      {"compare", "train standard, W2 and triple-product attention with the same budget", {compare_command()},
       run_compare, check_compare},
      {"sweep", "train a grid of settings (lr, batch, any train option) with the same budget", {sweep_command()},
       run_sweep_command, check_sweep_command},
      {"generate", "sample from a trained checkpoint", {generate_command()}, run_generate, check_generate},
      {"gradcheck", "float64 gradient check of every op and module", {gradcheck_command()}, run_gradcheck,
       check_gradcheck},
      {"tokenize", "train a BPE tokenizer, encode text to ids, decode ids to text", tokenize_commands(), run_tokenize,
       check_tokenize},
      {"account", "parameters, matmul FLOPs and training memory of a model shape", {account_command()}, run_account,
       check_account},
      {"dp-simulate", "data-parallel scaling to N ranks from a run's or a shape's backward profile",
       {dp_simulate_command()}, run_dp_simulate, check_dp_simulate},
  };
  return list;
}

const CommandEntry* find_command(std::string_view name) {
  for (const CommandEntry& c : commands()) {
    if (c.name == name) return &c;
  }
  return nullptr;
}

}  // namespace ropegrad::tasks
