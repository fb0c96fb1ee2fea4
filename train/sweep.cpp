#include "train/sweep.h"
#include "io/read_file.h"

#include <algorithm>
#include <cctype>
#include <chrono>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <sstream>

#include "io/tmp_file.h"
#include "train/run_files.h"
#include "tensor/printable.h"

namespace ropegrad::tasks {

namespace {

namespace fs = std::filesystem;

// Options the sweep sets for every point itself.
bool set_by_sweep(const std::string& name) {
  return name == "out" || name == "resume" || name == "stop-after" || name == "allow-changed-data";
}

std::vector<std::string> split(const std::string& text, char sep) {
  std::vector<std::string> parts;
  size_t begin = 0;
  for (size_t end; (end = text.find(sep, begin)) != std::string::npos; begin = end + 1)
    parts.push_back(text.substr(begin, end - begin));
  parts.push_back(text.substr(begin));
  return parts;
}

// The train words of one axis value: "--lr 1e-3"; a flag's "on" is "--tie", its "off" nothing.
void add_value(std::vector<std::string>& words, const GridAxis& axis, const std::string& value,
               const TrainOptionReader& train) {
  if (train.is_flag(axis.name).value_or(false)) {
    if (value == "on") words.push_back("--" + axis.name);
  } else {
    words.insert(words.end(), {"--" + axis.name, value});
  }
}

// A file name from a label: letters, digits and ".+-=" kept, the rest "_".
std::string file_name_of(const std::string& label) {
  std::string name;
  for (char ch : label.substr(0, 120)) {
    const bool kept = std::isalnum(static_cast<unsigned char>(ch)) || (ch != 0 && std::strchr(".+-=", ch) != nullptr);
    name += kept ? ch : '_';
  }
  return name;
}

std::string format_duration(double seconds) {
  const auto s = static_cast<int64_t>(std::max(0.0, seconds));
  return fmt::format("{}:{:02d}", s / 60, s % 60);
}

// sweep.json of an earlier run into the same directory must be this one's:
// otherwise the points' directories hold runs of other settings.
void check_same_sweep(const std::string& path, const std::string& now) {
  std::error_code error;
  if (!std::filesystem::is_regular_file(path, error)) return;
  const std::string text = io::read_file(path, "sweep");
  if (text == now) return;
  const std::vector<std::string> was = split(text, '\n'), is = split(now, '\n');
  size_t i = 0;
  while (i < was.size() && i < is.size() && was[i] == is[i]) ++i;
  const auto line = [](const std::vector<std::string>& lines, size_t k) {
    if (k >= lines.size()) return std::string("nothing");
    const size_t text = lines[k].find_first_not_of(' ');
    return fmt::format("`{}`", text == std::string::npos ? "" : lines[k].substr(text));
  };
  fail("sweep", "'{}' is another sweep: it has {} where this command gives {}; rerun it with the same --grid and "
       "options (resuming it), or choose another --out", path, line(was, i), line(is, i));
}

// `value` of the train option `name` in one spelling; a value train refuses
// is an error naming the axis (as check_sweep_options's).
std::string canonical_value(const std::string& where, const std::string& name, const std::string& value,
                            const TrainOptionReader& train) {
  try {
    return train.canonical(name, value);
  } catch (const Error& e) {
    fail("sweep", "{}: the value '{}' is refused: {}", where, value, e.what());
  }
}

}  // namespace

GridAxis parse_grid_axis(const std::string& text, const TrainOptionReader& train) {
  const std::string where = fmt::format("--grid {}", text);
  const size_t eq = text.find('=');
  RG_CHECK(eq != std::string::npos && eq > 0, "sweep", "{}: expected NAME=V1,V2,... (e.g. --grid lr=1e-3,3e-3)", where);
  GridAxis axis{text.substr(0, eq), {}};
  const std::optional<bool> flag = train.is_flag(axis.name);
  RG_CHECK(flag.has_value(), "sweep", "{}: '{}' is not an option of ropegrad train (see ropegrad train --help)", where,
           axis.name);
  RG_CHECK(!set_by_sweep(axis.name), "sweep",
           "{}: --{} is set by the sweep itself (each point is DIR/<point>, resumed when rerun)", where, axis.name);
  const std::string list = text.substr(eq + 1);
  RG_CHECK(!list.empty(), "sweep", "{}: no values (give at least one: {}=V1,V2,...)", where, axis.name);
  std::vector<std::string> parsed;  // each value as train reads it: two spellings of one value are one value
  for (const std::string& value : split(list, ',')) {
    RG_CHECK(!value.empty(), "sweep", "{}: value {} is empty", where, axis.values.size() + 1);
    RG_CHECK(!*flag || value == "on" || value == "off", "sweep", "{}: the value '{}' is not on or off (--{} is a flag)",
             where, value, axis.name);
    parsed.push_back(*flag ? value : canonical_value(where, axis.name, value, train));
    const auto same = std::find(parsed.begin(), parsed.end() - 1, parsed.back());
    if (same != parsed.end() - 1) {
      const std::string& first = axis.values[static_cast<size_t>(same - parsed.begin())];
      RG_CHECK(first != value, "sweep", "{}: the value '{}' is given twice", where, value);
      fail("sweep", "{}: the values '{}' and '{}' are the same --{} ({})", where, first, value, axis.name,
           parsed.back());
    }
    axis.values.push_back(value);
  }
  return axis;
}

double grid_size(const SweepConfig& sweep) {
  double count = 1;  // a double: a grid of 40 axes of 10 values has a size, not an overflow
  for (const GridAxis& axis : sweep.grid) count *= static_cast<double>(axis.values.size());
  return count;
}

SweepPoint grid_point(const SweepConfig& sweep, size_t k) {
  const size_t digits = fmt::format("{:.0f}", grid_size(sweep)).size();
  SweepPoint p;
  p.index = static_cast<int>(k) + 1;
  size_t rest = k;
  p.values.resize(sweep.grid.size());
  for (size_t a = sweep.grid.size(); a-- > 0;) {  // the last axis varies fastest
    p.values[a] = sweep.grid[a].values[rest % sweep.grid[a].values.size()];
    rest /= sweep.grid[a].values.size();
  }
  for (size_t a = 0; a < sweep.grid.size(); ++a)
    p.label += fmt::format("{}{}={}", a == 0 ? "" : " ", sweep.grid[a].name, p.values[a]);
  p.dir = fmt::format("{}/{:0{}d}_{}", sweep.out_dir, p.index, digits, file_name_of(p.label));
  return p;
}

std::vector<SweepPoint> grid_points(const SweepConfig& sweep) {
  std::vector<SweepPoint> points;
  const auto count = static_cast<size_t>(grid_size(sweep));
  for (size_t k = 0; k < count; ++k) points.push_back(grid_point(sweep, k));
  return points;
}

TrainConfig point_config(const SweepConfig& sweep, const SweepPoint& point, const TrainOptionReader& train) {
  std::vector<std::string> words = sweep.fixed;
  for (size_t a = 0; a < sweep.grid.size(); ++a) add_value(words, sweep.grid[a], point.values[a], train);
  TrainConfig c = train.parse(words);
  if (c.checkpoint_every == 0) c.checkpoint_every = c.eval_every;
  c.out_dir = point.dir;
  c.quiet = true;  // the sweep shows its own progress
  c.time_budget = sweep.time_budget;
  c.divergence_factor = sweep.divergence_factor;
  check_train_config(c);  // what train would refuse only once it starts (warmup beyond steps, ...)
  return c;
}

void check_sweep_options(const SweepConfig& sweep, const TrainOptionReader& train) {
  RG_CHECK(!sweep.out_dir.empty(), "sweep", "--out DIR is required (the sweep's directory)");
  RG_CHECK(!sweep.grid.empty(), "sweep", "give at least one --grid NAME=V1,V2,... (e.g. --grid lr=1e-3,3e-3)");
  RG_CHECK(std::isfinite(sweep.time_budget) && sweep.time_budget >= 0, "sweep",
           "--time-budget must be a finite number of seconds >= 0 (0: off), got {}", sweep.time_budget);
  RG_CHECK(std::isfinite(sweep.divergence_factor) && sweep.divergence_factor > 1, "sweep",
           "--divergence-factor must be a finite number > 1, got {}", sweep.divergence_factor);
  std::set<std::string> axes;
  for (const GridAxis& axis : sweep.grid) {
    RG_CHECK(axes.insert(axis.name).second, "sweep", "--grid {} appears twice; give all its values in one --grid {}=V1,V2,...",
             axis.name, axis.name);
  }
  // The fixed options: train's, minus the ones the sweep sets or the grid varies.
  for (size_t i = 0; i < sweep.fixed.size(); ++i) {
    const std::string& word = sweep.fixed[i];
    RG_CHECK(word != "--help" && word != "-h", "sweep", "the options after -- are train's settings (see ropegrad train --help)");
    if (word.rfind("--", 0) != 0) continue;
    const std::string name = word.substr(2);
    const std::optional<bool> flag = train.is_flag(name);
    if (!flag.has_value()) continue;  // train's parser names it below
    RG_CHECK(!set_by_sweep(name), "sweep", "{} is set by the sweep itself (each point is DIR/<point>, resumed when rerun)",
             word);
    RG_CHECK(axes.count(name) == 0, "sweep", "{} is both a --grid axis and a fixed option after --", word);
    if (!*flag) ++i;  // its value
  }
  try {
    train.parse(sweep.fixed);
  } catch (const Error& e) {
    fail("sweep", "the train options after -- ({}): {}", fmt::join(sweep.fixed, " "), e.what());
  }
  // Each value on its own, so that the error names it (every combination is checked by check_point).
  for (const GridAxis& axis : sweep.grid) {
    for (const std::string& value : axis.values) {
      std::vector<std::string> words = sweep.fixed;
      add_value(words, axis, value, train);
      try {
        train.parse(words);
      } catch (const Error& e) {
        fail("sweep", "--grid {}={}: the value '{}' is refused: {}", axis.name, fmt::join(axis.values, ","), value,
             e.what());
      }
    }
  }
}

TrainConfig PointChecker::check(const SweepPoint& p) {
  TrainConfig c;
  try {
    c = point_config(sweep_, p, train_);
    // The task of these options, built once: a text task reads its whole file.
    const TaskOptions& o = c.task_options;
    const std::string key = fmt::format("{}\n{}\n{}\n{}\n{}\n{}\n{}\n{}\n{}", c.task, o.vocab, o.length, o.pairs,
                                        o.queries, o.concepts, o.text_path, o.tokenizer_dir, o.data_path);
    auto it = tasks_.find(key);
    if (it == tasks_.end()) it = tasks_.emplace(key, make_task(c.task, o)).first;
    check_train_setup(c, *it->second);
  } catch (const Error& e) {
    fail("sweep", "point {} ({}): {}", p.index, p.label, e.what());
  }
  // The sweep's own --out against the point's inputs: an error of the sweep, not of the point.
  refuse_output_overlapping_inputs("sweep", "--out", sweep_.out_dir, train_inputs(c));
  return c;
}

std::string sweep_json(const SweepConfig& sweep) {
  std::string grid;
  for (size_t a = 0; a < sweep.grid.size(); ++a) {
    std::vector<std::string> values;
    for (const std::string& v : sweep.grid[a].values) values.push_back(json_string(v));
    grid += fmt::format("    {{\"name\": {}, \"values\": [{}]}}{}\n", json_string(sweep.grid[a].name),
                        fmt::join(values, ", "), a + 1 < sweep.grid.size() ? "," : "");
  }
  std::vector<std::string> fixed;
  for (const std::string& w : sweep.fixed) fixed.push_back(json_string(w));
  return fmt::format("{{\n  \"grid\": [\n{}  ],\n  \"fixed\": [{}],\n  \"time_budget\": {},\n  \"divergence_factor\": {}\n}}\n",
                     grid, fmt::join(fixed, ", "), sweep.time_budget, sweep.divergence_factor);
}

namespace {

// What the estimate of the time left needs.
struct Pace {
  int points = 0, pending = 0;  // pending: points after the current one that will run
  std::chrono::steady_clock::time_point start;
  double steps = 0;  // steps run by this call: its pace
};

// Trains one point (resuming it when it has a checkpoint), with progress
// lines, then records its outcome and returns its row.
SweepRow run_point(const SweepConfig& sweep, const SweepPoint& p, TrainConfig c, Pace& pace, std::FILE* progress) {
  const std::string head = fmt::format("[{}/{}] {}", p.index, pace.points, p.label);
  c.resume = fs::is_regular_file(p.dir + "/checkpoint.safetensors");
  fmt::print(progress, "{}: {}\n", head, c.resume ? "resuming from its checkpoint" : "start");
  std::fflush(progress);
  const auto point_start = std::chrono::steady_clock::now();
  auto last_line = point_start;
  const int64_t steps = c.steps;
  c.on_step = [&](const StepRecord& r, const EvalRecord* ev, double seconds) {
    pace.steps += 1;
    const auto now = std::chrono::steady_clock::now();
    if (ev == nullptr && std::chrono::duration<double>(now - last_line).count() < 10) return;
    last_line = now;
    const double per_step = std::chrono::duration<double>(now - pace.start).count() / pace.steps;
    const bool timed = sweep.time_budget > 0;
    const double left = timed ? std::max(0.0, sweep.time_budget - seconds) : per_step * static_cast<double>(steps - r.step);
    const double per_point = timed ? sweep.time_budget : per_step * static_cast<double>(steps);
    fmt::print(progress, "[{}/{}] step {}/{} | loss {:.4f}{} | ETA point {}, sweep {}\n", p.index, pace.points, r.step,
               steps, r.loss, ev != nullptr ? fmt::format(" | val loss {:.4f}", ev->loss) : "", format_duration(left),
               format_duration(left + pace.pending * per_point));
    std::fflush(progress);
  };
  TrainResult result;
  try {
    result = tasks::train(c, progress);
  } catch (const Error& e) {
    fail("sweep", "point {} ({}) in '{}' stopped: {}; fix it and rerun the same command to go on", p.index, p.label,
         p.dir, e.what());
  }
  write_outcome(p, result, result.already_finished_at > 0 ? result.already_finished_at : result.last_step);
  const SweepRow row = read_sweep_row(p);
  const double took = std::chrono::duration<double>(std::chrono::steady_clock::now() - point_start).count();
  if (row.diverged_at > 0) {
    fmt::print(progress, "{}: diverged at step {} ({}); stopped there ({:.1f} s)\n", head, row.diverged_at,
               row.diverged_because, took);
  } else {
    fmt::print(progress, "{}: done, {} steps, final val loss {:.4f}, best {:.4f} at step {} ({:.1f} s)\n", head,
               row.steps, row.final_loss, row.best_loss, row.best_step, took);
  }
  std::fflush(progress);
  return row;
}

}  // namespace

namespace {

// "under a second", "about 40 seconds", "about 12 minutes", "about 3.5 hours", "about 2.1 days", "about 4.3 years".
std::string rough_duration(double seconds) {
  if (seconds < 1) return "under a second";
  if (seconds < 120) return fmt::format("about {:.0f} seconds", seconds);
  if (seconds < 7200) return fmt::format("about {:.0f} minutes", seconds / 60);
  if (seconds < 2 * 86400) return fmt::format("about {:.1f} hours", seconds / 3600);
  if (seconds < 365.25 * 86400) return fmt::format("about {:.1f} days", seconds / 86400);
  return fmt::format("about {:.1f} years", seconds / (365.25 * 86400));
}

// 0.0049 -> "4.9 ms"
std::string step_time(double s) {
  return s >= 1 ? fmt::format("{:.2f} s", s) : s >= 1e-3 ? fmt::format("{:.1f} ms", s * 1e3) : fmt::format("{:.0f} us", s * 1e6);
}

// The training seconds of one step of `c` on this machine: its first few
// steps trained in memory (nothing written), the pace of the estimate.
double measured_step_seconds(TrainConfig c) {
  c.out_dir.clear();
  c.resume = false;
  c.quiet = true;
  c.on_step = nullptr;
  c.time_budget = 0;
  c.stop_after = std::min<int64_t>(3, c.steps);
  return tasks::train(c, nullptr).seconds_per_step;
}

// A point's training time at `per_step` seconds a step: its steps, or its time budget.
double point_seconds(const SweepConfig& sweep, const TrainConfig& c, double per_step) {
  const double by_steps = per_step * static_cast<double>(c.steps);
  return sweep.time_budget > 0 ? std::min(by_steps, sweep.time_budget) : by_steps;
}

}  // namespace

namespace {

// The grid's points checked, and which remain to train.
struct GridPlan {
  int n = 0;                        // points
  int pending = 0;                  // without an outcome yet
  std::optional<SweepPoint> next;   // the first point to train
  TrainConfig first;                // point 1's settings
};

// The grid's size first, and an estimate of its time: a grid far larger than
// meant is refused in a second (its points are not even built) unless --yes.
// Then every point checked as train would check it, before the first one
// trains: a bad point is found now, not after the points before it trained.
GridPlan plan_grid(const SweepConfig& sweep, PointChecker& checker, std::FILE* progress) {
  const double count = grid_size(sweep);
  std::vector<std::string> axes, sizes;
  for (const GridAxis& axis : sweep.grid) {
    axes.push_back(axis.name);
    sizes.push_back(fmt::format("{} {}", axis.name, axis.values.size()));
  }
  constexpr double kMostPoints = 1e9;  // a point's index is an int
  RG_CHECK(count <= kMostPoints, "sweep", "the grid has {:.0f} points ({}): more than {:.0f}, even with --yes", count,
           fmt::join(sizes, " x "), kMostPoints);
  GridPlan plan;
  plan.first = checker.check(grid_point(sweep, 0));
  plan.n = static_cast<int>(count);
  if (count > kPointsWithoutYes && !sweep.yes) {
    const double per_step = measured_step_seconds(plan.first);
    fail("sweep",
         "the grid has {} points ({}); at point 1's pace here ({} a step, {} steps a point) that is {} of "
         "training; give --yes to run a grid of more than {:.0f} points, or give fewer values",
         plan.n, fmt::join(sizes, " x "), step_time(per_step), plan.first.steps,
         rough_duration(count * point_seconds(sweep, plan.first, per_step)), kPointsWithoutYes);
  }
  if (count > kPointsWithoutYes) {
    fmt::print(progress, "sweep: {} points ({}): checking each one's settings first\n", plan.n, fmt::join(axes, " x "));
    std::fflush(progress);
  }
  for (int k = 0; k < plan.n; ++k) {
    const SweepPoint p = grid_point(sweep, static_cast<size_t>(k));
    if (k > 0) checker.check(p);
    if (has_outcome(p)) continue;
    ++plan.pending;
    if (!plan.next) plan.next = p;
  }
  const std::string budget = sweep.time_budget > 0 ? fmt::format("{} s of training", sweep.time_budget)
                                                   : fmt::format("{} steps", plan.first.steps);
  fmt::print(progress, "sweep: {} points ({}), {} each, into {}\n", plan.n, fmt::join(axes, " x "), budget,
             sweep.out_dir);
  std::fflush(progress);
  return plan;
}

// The points kept from an earlier run, read (and checked: a deleted
// metrics.csv is named) before anything trains.
std::map<int, SweepRow> kept_points(const SweepConfig& sweep, int n) {
  std::map<int, SweepRow> kept;
  for (int k = 0; k < n; ++k) {
    const SweepPoint p = grid_point(sweep, static_cast<size_t>(k));
    nn::remove_stale_tmp_files(p.dir + "/outcome.txt");  // of a sweep killed while writing it
    if (has_outcome(p)) kept.emplace(p.index, read_sweep_row(p));
  }
  return kept;
}

}  // namespace

std::vector<SweepRow> run_sweep(const SweepConfig& sweep, const TrainOptionReader& train, std::FILE* progress) {
  check_sweep_options(sweep, train);
  PointChecker checker(sweep, train);
  const GridPlan plan = plan_grid(sweep, checker, progress);
  const int n = plan.n;

  std::error_code error;
  fs::create_directories(sweep.out_dir, error);
  RG_CHECK(!error && fs::is_directory(sweep.out_dir), "sweep", "cannot create the directory '{}': {}", sweep.out_dir,
           error ? error.message() : "a file of that name exists");
  const std::string json_path = sweep.out_dir + "/sweep.json";
  const OutputLock lock(json_path, "sweep");  // one sweep at a time in a directory
  for (const char* name : {"/results.md", "/results.csv"}) nn::remove_stale_tmp_files(sweep.out_dir + name);
  const std::string json = sweep_json(sweep);
  check_same_sweep(json_path, json);
  write_file_atomically(json_path, json);

  const std::map<int, SweepRow> kept = kept_points(sweep, n);
  if (plan.next) {
    const TrainConfig c = checker.check(*plan.next);
    const double per_step = measured_step_seconds(c);
    fmt::print(progress, "sweep: {} point{} to train: {} (point {} took {} a step here)\n", plan.pending,
               plan.pending == 1 ? "" : "s", rough_duration(plan.pending * point_seconds(sweep, c, per_step)), plan.next->index,
               step_time(per_step));
  }

  Pace pace{n, plan.pending, std::chrono::steady_clock::now(), 0};
  std::vector<SweepRow> rows;
  for (int k = 0; k < n; ++k) {
    const SweepPoint p = grid_point(sweep, static_cast<size_t>(k));
    if (const auto it = kept.find(p.index); it != kept.end()) {
      rows.push_back(it->second);
      fmt::print(progress, "[{}/{}] {}: finished earlier, kept\n", p.index, n, p.label);
      continue;
    }
    --pace.pending;
    rows.push_back(run_point(sweep, p, point_config(sweep, p, train), pace, progress));
    write_sweep_results(sweep, rows);  // the table so far, readable while the sweep goes on
  }
  write_sweep_results(sweep, rows);
  return rows;
}

}  // namespace ropegrad::tasks
