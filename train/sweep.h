// `ropegrad sweep`: one `train` run per point of a grid of settings, each
// with the same budget, then one results table and the loss curves of all.
//
//   DIR/sweep.json                 the grid and the fixed options (a rerun must match)
//   DIR/<point>/                   a normal run directory (train/run_files.h), plus
//   DIR/<point>/outcome.txt        written when the point is done: steps, divergence
//   DIR/results.md, results.csv    one row per point
//   DIR/loss_vs_step.svg, loss_vs_time.svg
//
// A killed sweep resumes when the same command is run again: points with an
// outcome.txt are kept, an interrupted one continues from its checkpoint
// (train's exact resume), the rest run.
#pragma once

#include <cmath>
#include <cstdio>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "train/trainer.h"

namespace ropegrad::tasks {

// `ropegrad train`'s own flag table and checks (cli/train_cli.cpp), handed to
// the sweep so that every train option, new ones included, can be a grid axis.
struct TrainOptionReader {
  // The TrainConfig of train's command-line words ("--lr", "1e-3", ...); a
  // bad option or value is an Error naming it.
  std::function<TrainConfig(const std::vector<std::string>&)> parse;
  // nullopt: `name` (without "--") is no train option; else whether it is a flag.
  std::function<std::optional<bool>(const std::string&)> is_flag;
  // One spelling of a value of the option `name`, so that two spellings of
  // one value compare equal ("01" and "1" -> "1"); a bad value is an Error.
  std::function<std::string(const std::string& name, const std::string& value)> canonical;
};

// One --grid NAME=V1,V2,...: a train option and its values, as typed.
struct GridAxis {
  std::string name;
  std::vector<std::string> values;
};

struct SweepConfig {
  std::string out_dir;
  std::vector<GridAxis> grid;       // the first axis varies slowest
  std::vector<std::string> fixed;   // train options every point shares
  double time_budget = 0;           // > 0: training seconds per point (TrainConfig::time_budget)
  double divergence_factor = 2;     // TrainConfig::divergence_factor
  bool yes = false;                 // --yes: run a grid of more than kPointsWithoutYes points
};

// A grid larger than this is refused, its size and an estimate of its time
// said, unless --yes: a typo in a --grid (a 100-value axis too many) should
// cost a second, not years.
inline constexpr double kPointsWithoutYes = 1000;

// One combination of grid values.
struct SweepPoint {
  int index = 0;                    // 1-based, in grid order
  std::vector<std::string> values;  // one per axis
  std::string label;                // "lr=1e-3 batch=8"
  std::string dir;                  // out_dir/"1_lr=1e-3_batch=8"
};

// A point's line of the results table, read back from its run's files.
struct SweepRow {
  SweepPoint point;
  int64_t steps = 0;          // steps completed
  double final_loss = NAN;    // the last evaluation's loss
  double best_loss = NAN;     // the lowest evaluation loss
  int64_t best_step = 0;
  double final_metric = NAN;  // the last evaluation's task metric
  std::string metric_name;
  int64_t diverged_at = 0;    // > 0: diverged at this step
  std::string diverged_because;
};

// "lr=1e-3,3e-3" as an axis. Errors (each naming the text and the value):
// no "=", an option train does not have, one the sweep sets itself (out,
// resume, stop-after, allow-changed-data), no values, an empty value, a
// value train refuses, a value given twice (in two spellings too: values are
// compared as train reads them, so seed=1,01 is refused), a flag's value
// other than on/off.
GridAxis parse_grid_axis(const std::string& text, const TrainOptionReader& train);

// The number of points: the product of the axes' sizes (a double: it may be
// astronomically large, and is refused before anything is built then).
double grid_size(const SweepConfig& sweep);
// Point k (0-based) of the grid, the first axis varying slowest.
SweepPoint grid_point(const SweepConfig& sweep, size_t k);
// Every point, in order.
std::vector<SweepPoint> grid_points(const SweepConfig& sweep);

// The TrainConfig of a point: the fixed options, then the point's values,
// read by train's parser. Checkpoints every evaluation unless
// --checkpoint-every is given, so a killed point loses little.
TrainConfig point_config(const SweepConfig& sweep, const SweepPoint& point, const TrainOptionReader& train);

// Before anything is built: --out, the grid, the budget, the options after --
// and every value of every axis on its own, read by train's parser; the first
// one refused is an Error naming the axis and the value, with train's reason.
void check_sweep_options(const SweepConfig& sweep, const TrainOptionReader& train);

// One point checked as `train` would check it at its start, without training:
// its TrainConfig (point_config), check_train_setup with its task (built once
// for each set of task options: a --text too short is found here), and its
// inputs against the sweep's --out. An Error "point K (LABEL): ..." from the
// first check that refuses it. Returns the config.
class PointChecker {
 public:
  PointChecker(const SweepConfig& sweep, const TrainOptionReader& train) : sweep_(sweep), train_(train) {}
  TrainConfig check(const SweepPoint& point);

 private:
  const SweepConfig& sweep_;
  const TrainOptionReader& train_;
  std::map<std::string, std::unique_ptr<Task>> tasks_;
};


// sweep.json's text: the grid and the options; a rerun into the same
// directory must give the same text.
std::string sweep_json(const SweepConfig& sweep);

// Runs (or resumes) the sweep: progress on `progress`, the results table
// and the plots rewritten after each point. Returns the rows, in grid order.
std::vector<SweepRow> run_sweep(const SweepConfig& sweep, const TrainOptionReader& train, std::FILE* progress);

// ---- results (train/sweep_results.cpp) ----

// A finished point's row, from DIR/<point>'s outcome.txt and metrics.csv.
SweepRow read_sweep_row(const SweepPoint& point);
// outcome.txt, written atomically when the point is done.
void write_outcome(const SweepPoint& point, const TrainResult& result, int64_t steps);
bool has_outcome(const SweepPoint& point);

std::string results_markdown(const SweepConfig& sweep, const std::vector<SweepRow>& rows);
std::string results_csv(const SweepConfig& sweep, const std::vector<SweepRow>& rows);
// results.md, results.csv, loss_vs_step.svg and loss_vs_time.svg in the sweep's directory.
void write_sweep_results(const SweepConfig& sweep, const std::vector<SweepRow>& rows);

}  // namespace ropegrad::tasks
