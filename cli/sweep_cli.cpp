// `ropegrad sweep`'s command line: the sweep's own flags before `--`,
// train's flags (read by train's own table, cli/train_cli.cpp) after it.
#include <optional>
#include <string>
#include <vector>

#include "cli/commands.h"
#include "train/sweep.h"

namespace ropegrad::tasks {

namespace {

const flags::Command& command() {
  static const flags::Command c = [] {
    using namespace flags;
    Command c{"ropegrad sweep", "usage: ropegrad sweep --out DIR --grid NAME=V1,V2,... [--grid ...] [options] [-- TRAIN OPTIONS]\n",
              "Trains one `ropegrad train` run per point of the grid (every combination of the values), each\n"
              "with the same budget, in DIR/<point>, and writes DIR/results.md and results.csv (final and best\n"
              "validation loss, divergence) and the loss curves DIR/loss_vs_step.svg and loss_vs_time.svg.\n"
              "Progress goes to stderr, the results table to stdout. Rerun the same command to resume a\n"
              "sweep that was stopped: finished points are kept, an interrupted one continues exactly."};
    c.flags = {
        required(path("out", "DIR", "the sweep's directory")),
        repeated(text("grid", "NAME=V1,V2,...",
                      "a train option and its values, e.g. lr=1e-3,3e-3 or attention=standard,w2;\n"
                      "repeat for more axes (the first varies slowest); a flag takes on,off")),
        real("time-budget", closed(0, 1e6), "0", "per point: stop once the training time reaches it (0: --steps only)",
             "seconds"),
        real("divergence-factor", open_closed(1, 1e6), "2",
             "a run whose loss is not finite or above this times step 1's loss\nstops there, recorded as diverged"),
        on_off("yes", "run a grid of more than 1000 points (without it, such a grid is refused,\n"
                      "its size and estimated time said)"),
    };
    c.rest = "TRAIN OPTIONS";
    c.rest_help = "options every point shares (ropegrad train --help), e.g. --steps 300";
    c.unknown_hint = "train options go after --";
    return c;
  }();
  return c;
}

// The sweep the words ask for, checked (no file read or written); nullopt for --help.
std::optional<SweepConfig> sweep_of(const std::vector<std::string>& words, const TrainOptionReader& train) {
  const std::optional<flags::Values> v = flags::read(command(), words);
  if (!v) return std::nullopt;
  SweepConfig sweep;
  sweep.out_dir = v->text("out");
  for (const std::string& axis : v->all("grid")) sweep.grid.push_back(parse_grid_axis(axis, train));
  sweep.time_budget = v->real("time-budget");
  sweep.divergence_factor = v->real("divergence-factor");
  sweep.yes = v->on("yes");
  sweep.fixed = v->rest();
  check_sweep_options(sweep, train);  // the points themselves: run_sweep, before the first trains
  return sweep;
}

}  // namespace

const flags::Command& sweep_command() { return command(); }

void check_sweep_command(const std::vector<std::string>& words) { sweep_of(words, train_option_reader()); }

int run_sweep_command(int argc, char** argv) {
  const TrainOptionReader train = train_option_reader();
  const std::optional<SweepConfig> sweep = sweep_of(std::vector<std::string>(argv, argv + argc), train);
  if (!sweep) return 0;  // --help
  const std::vector<SweepRow> rows = run_sweep(*sweep, train, stderr);
  fmt::print("{}", results_markdown(*sweep, rows));
  std::fflush(stdout);  // the table before the last line on stderr, also when both go to one pipe
  fmt::print(stderr, "sweep: wrote {0}/results.md, {0}/results.csv, {0}/loss_vs_step.svg, {0}/loss_vs_time.svg\n",
             sweep->out_dir);
  return 0;
}

}  // namespace ropegrad::tasks
