// `ropegrad sweep`'s command line: the sweep's own options before `--`,
// train's options (read by train's own parser) after it.
#include <cmath>
#include <cstdlib>
#include <string>
#include <vector>

#include "tasks/sweep.h"

namespace ropegrad::tasks {

namespace {

constexpr const char* kUsage =
    "usage: ropegrad sweep --out DIR --grid NAME=V1,V2,... [--grid ...] [options] [-- TRAIN OPTIONS]\n"
    "\n"
    "Trains one `ropegrad train` run per point of the grid (every combination of the values), each\n"
    "with the same budget, in DIR/<point>, and writes DIR/results.md and results.csv (final and best\n"
    "validation loss, divergence) and the loss curves DIR/loss_vs_step.svg and loss_vs_time.svg.\n"
    "Progress goes to stderr, the results table to stdout. Rerun the same command to resume a\n"
    "sweep that was stopped: finished points are kept, an interrupted one continues exactly.\n"
    "\n"
    "options:\n"
    "  --out DIR                  the sweep's directory (required)\n"
    "  --grid NAME=V1,V2,...      a train option and its values, e.g. lr=1e-3,3e-3 or attention=standard,w2;\n"
    "                             repeat for more axes (the first varies slowest); a flag takes on,off\n"
    "  --time-budget SECONDS      per point: stop once the training time reaches it (0: --steps only)\n"
    "  --divergence-factor 2      a run whose loss is not finite or above this times step 1's loss\n"
    "                             stops there, recorded as diverged\n"
    "  --yes                      run a grid of more than 1000 points (without it, such a grid is refused,\n"
    "                             its size and estimated time said)\n"
    "  -- TRAIN OPTIONS           options every point shares (ropegrad train --help), e.g. --steps 300\n";

double real_option(const std::string& name, const std::string& text) {
  char* end = nullptr;
  const double v = std::strtod(text.c_str(), &end);
  RG_CHECK(!text.empty() && end == text.c_str() + text.size() && std::isfinite(v), "sweep",
           "--{} expects a number, got '{}'", name, text);
  return v;
}

}  // namespace

int run_sweep_command(int argc, char** argv, const TrainOptionReader& train) {
  SweepConfig sweep;
  for (int i = 0; i < argc; ++i) {
    const std::string arg = argv[i];
    if (arg == "--help" || arg == "-h") {
      fmt::print("{}", kUsage);
      return 0;
    }
    if (arg == "--") {
      sweep.fixed.assign(argv + i + 1, argv + argc);
      break;
    }
    if (arg == "--yes") {  // a flag: no value
      sweep.yes = true;
      continue;
    }
    const bool known = arg == "--out" || arg == "--grid" || arg == "--time-budget" || arg == "--divergence-factor";
    RG_CHECK(known, "sweep", "unknown argument '{}' (train options go after --; see ropegrad sweep --help)", arg);
    RG_CHECK(i + 1 < argc, "sweep", "{} needs a value", arg);
    const std::string value = argv[++i];
    if (arg == "--out") sweep.out_dir = value;
    else if (arg == "--grid") sweep.grid.push_back(parse_grid_axis(value, train));
    else if (arg == "--time-budget") sweep.time_budget = real_option("time-budget", value);
    else sweep.divergence_factor = real_option("divergence-factor", value);
  }
  const std::vector<SweepRow> rows = run_sweep(sweep, train, stderr);
  fmt::print("{}", results_markdown(sweep, rows));
  std::fflush(stdout);  // the table before the last line on stderr, also when both go to one pipe
  fmt::print(stderr, "sweep: wrote {0}/results.md, {0}/results.csv, {0}/loss_vs_step.svg, {0}/loss_vs_time.svg\n",
             sweep.out_dir);
  return 0;
}

}  // namespace ropegrad::tasks
