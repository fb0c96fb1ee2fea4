// `ropegrad sweep` (train/sweep.h), run as the program itself on tiny copy
// runs (D 16, one layer, a dozen or two steps each):
// - the results table agrees with each point's own metrics.csv, and a point's
//   run is the run `ropegrad train` makes with the same settings;
// - divergence: a huge learning rate is stopped and recorded, the sweep goes on
//   (and the training loop's rule itself, loss_diverged);
// - --time-budget ends each point once its training time reaches the budget;
// - kill -9 mid-sweep and the same command again: the same table and runs as
//   an uninterrupted sweep; a different grid is refused, naming the difference;
// - bad grids and options: exit status 1 and an error naming the value.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <fcntl.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <functional>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "train/plot.h"
#include "train/trainer.h"
#include "tests/support/temp_dir.h"
#include "tests/support/test_util.h"

using namespace ropegrad;
using namespace ropegrad::tasks;
using namespace ropegrad::testing;
using ::testing::ContainsRegex;
using ::testing::HasSubstr;
using ::testing::Not;
namespace fs = std::filesystem;

namespace {

std::vector<std::string> split(const std::string& s, char sep) {
  std::vector<std::string> parts;
  std::stringstream in(s);
  for (std::string part; std::getline(in, part, sep);) parts.push_back(part);
  return parts;
}

// The lines of a CSV file as {header name -> field}, one map per row.
std::vector<std::map<std::string, std::string>> read_csv(const std::string& path) {
  const std::vector<std::string> lines = split(read_text(path), '\n');
  std::vector<std::map<std::string, std::string>> rows;
  if (lines.empty()) return rows;
  const std::vector<std::string> names = split(lines[0], ',');
  for (size_t i = 1; i < lines.size(); ++i) {
    std::vector<std::string> fields = split(lines[i], ',');
    fields.resize(names.size());
    std::map<std::string, std::string> row;
    for (size_t k = 0; k < names.size(); ++k) row[names[k]] = fields[k];
    rows.push_back(row);
  }
  return rows;
}

struct Ran {
  int status = -1;  // exit status; -1 when killed
  std::string output;
};

// Runs the program with `args`, its stdout and stderr into one log. With
// `kill_when`, polls it every millisecond and kills the program (SIGKILL) the
// first time it returns true.
Ran run(const std::vector<std::string>& args, const std::function<bool()>& kill_when = nullptr) {
  static int counter = 0;
  const std::string log = (fs::temp_directory_path() / ("ropegrad_test_sweep_log_" + std::to_string(::getpid()) + "_" +
                                                        std::to_string(counter++)))
                              .string();
  std::vector<std::string> argv_text = {ROPEGRAD_CLI};
  argv_text.insert(argv_text.end(), args.begin(), args.end());
  // The log exists before the child does: one killed before it opened its log (a loaded machine, a kill
  // at once) has an empty one, not a missing one.
  std::ofstream(log).close();
  const pid_t pid = ::fork();
  if (pid == 0) {
    std::vector<char*> argv;
    for (std::string& a : argv_text) argv.push_back(a.data());
    argv.push_back(nullptr);
    const int fd = ::open(log.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    ::dup2(fd, 1);
    ::dup2(fd, 2);
    ::execv(argv[0], argv.data());
    ::_exit(127);
  }
  int status = 0;
  if (kill_when) {
    while (::waitpid(pid, &status, WNOHANG) == 0) {
      if (kill_when()) {
        ::kill(pid, SIGKILL);
        ::waitpid(pid, &status, 0);
        break;
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
  } else {
    ::waitpid(pid, &status, 0);
  }
  Ran r{WIFEXITED(status) ? WEXITSTATUS(status) : -1, read_text(log)};
  fs::remove(log);
  return r;
}

// Tiny copy runs: vocabulary 8, sequences of 8, D 16, one layer.
std::vector<std::string> tiny(int steps) {
  return {"--task", "copy", "--vocab", "8", "--length", "8", "--d-model", "16", "--layers", "1", "--heads", "2",
          "--d-ff", "32", "--steps", std::to_string(steps), "--warmup", "2", "--eval-every", "4", "--eval-batches", "2",
          "--seed", "5"};
}

// `words` without the option `flag` and its value.
std::vector<std::string> drop(std::vector<std::string> words, const std::string& flag) {
  const auto at = std::find(words.begin(), words.end(), flag);
  if (at != words.end()) words.erase(at, at + 2);
  return words;
}

std::vector<std::string> sweep_args(const std::string& out, const std::vector<std::string>& grid,
                                    const std::vector<std::string>& fixed) {
  std::vector<std::string> args = {"sweep", "--out", out};
  for (const std::string& g : grid) args.insert(args.end(), {"--grid", g});
  args.push_back("--");
  args.insert(args.end(), fixed.begin(), fixed.end());
  return args;
}

// The point directories of a sweep, in grid order ("1_lr=...", "2_...").
std::vector<std::string> point_dirs(const std::string& out) {
  std::vector<std::string> dirs;
  for (const auto& e : fs::directory_iterator(out)) {
    if (e.is_directory()) dirs.push_back(e.path().string());
  }
  std::sort(dirs.begin(), dirs.end());
  return dirs;
}

std::string all_runs(const std::string& out) {  // every point's metrics.csv, for comparing two sweeps
  std::string text;
  for (const std::string& d : point_dirs(out)) text += d.substr(d.rfind('/')) + "\n" + read_text(d + "/metrics.csv");
  return text;
}

size_t count(const std::string& text, const std::string& what) {
  size_t n = 0;
  for (size_t at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) ++n;
  return n;
}

}  // namespace

// Each row of results.csv is what the point's own metrics.csv says: its last
// step, its last evaluation loss and metric, its lowest evaluation loss; and
// the point's run is byte for byte the run `ropegrad train` makes with the
// fixed options plus the point's values.
TEST(Sweep, TableAgreesWithEachRunsOwnMetrics) {
  const TempDir dir("table");
  const Ran r = run(sweep_args(dir.path(), {"lr=3e-3,1e-2", "batch=4,8"}, tiny(12)));
  ASSERT_EQ(r.status, 0) << r.output;
  const auto rows = read_csv(dir.file("results.csv"));
  ASSERT_EQ(rows.size(), 4u);
  const std::vector<std::pair<std::string, std::string>> want = {{"3e-3", "4"}, {"3e-3", "8"}, {"1e-2", "4"}, {"1e-2", "8"}};
  for (size_t i = 0; i < rows.size(); ++i) {
    const auto& row = rows[i];
    EXPECT_EQ(row.at("point"), std::to_string(i + 1));
    EXPECT_EQ(row.at("lr"), want[i].first);  // the first axis varies slowest
    EXPECT_EQ(row.at("batch"), want[i].second);
    const std::string run_dir = dir.file(row.at("dir"));
    EXPECT_THAT(read_text(run_dir + "/config.txt"), HasSubstr("\nbatch=" + want[i].second + "\n"));
    // The run's own metrics: eval_loss and eval_metric on steps 4, 8, 12.
    double final_loss = NAN, best = INFINITY, final_metric = NAN;
    int best_step = 0, last = 0;
    for (const auto& m : read_csv(run_dir + "/metrics.csv")) {
      last = std::stoi(m.at("step"));
      if (m.at("eval_loss").empty()) continue;
      final_loss = std::stod(m.at("eval_loss"));
      final_metric = std::stod(m.at("eval_metric"));
      if (final_loss < best) best = final_loss, best_step = last;
    }
    EXPECT_EQ(last, 12);
    EXPECT_EQ(row.at("steps"), "12");
    EXPECT_NEAR(std::stod(row.at("final_val_loss")), final_loss, 1e-6);
    EXPECT_NEAR(std::stod(row.at("best_val_loss")), best, 1e-6);
    EXPECT_EQ(row.at("best_step"), std::to_string(best_step));
    EXPECT_NEAR(std::stod(row.at("final_metric")), final_metric, 1e-6);
    EXPECT_EQ(row.at("diverged"), "no");
    EXPECT_EQ(row.at("diverged_at"), "0");
  }
  // The same table in Markdown on stdout and in results.md.
  const std::string md = read_text(dir.file("results.md"));
  EXPECT_THAT(md, HasSubstr("| # | lr | batch | steps | final val loss | best val loss (step) | final accuracy (second half) | diverged |"));
  EXPECT_THAT(r.output, HasSubstr(md));
  EXPECT_EQ(count(md, "\n"), 6u);
  // Progress: one line as each point starts and ends.
  EXPECT_THAT(r.output, HasSubstr("sweep: 4 points (lr x batch), 12 steps each, into " + dir.path()));
  EXPECT_THAT(r.output, HasSubstr("[3/4] lr=1e-2 batch=4: start"));
  EXPECT_THAT(r.output, HasSubstr("[3/4] lr=1e-2 batch=4: done, 12 steps"));
  EXPECT_THAT(r.output, HasSubstr("[3/4] step 8/12 | loss "));
  // One curve per point in each plot, named by its settings.
  for (const char* svg : {"loss_vs_step.svg", "loss_vs_time.svg"}) {
    const std::string text = read_text(dir.file(svg));
    EXPECT_EQ(count(text, "<polyline"), 4u) << svg;
    EXPECT_THAT(text, HasSubstr(">lr=1e-2 batch=8</text>")) << svg;
  }
  EXPECT_THAT(read_text(dir.file("loss_vs_time.svg")), HasSubstr(">training seconds</text>"));
  // Titles that say what the grid varies and what the x axis is; with two axes
  // the colour follows batch (4: blue, 8: red) and the dash pattern lr.
  EXPECT_THAT(read_text(dir.file("loss_vs_step.svg")), HasSubstr(">training loss by lr and batch, against the step</text>"));
  EXPECT_THAT(read_text(dir.file("loss_vs_time.svg")), HasSubstr(">training loss by lr and batch, against training time</text>"));
  const std::string step_svg = read_text(dir.file("loss_vs_step.svg"));
  EXPECT_EQ(count(step_svg, "<polyline fill=\"none\" stroke=\"#1f77b4\""), 2u);
  EXPECT_EQ(count(step_svg, "<polyline fill=\"none\" stroke=\"#d62728\""), 2u);
  EXPECT_EQ(count(step_svg, "stroke-dasharray=\"6 3\""), 4u);  // lr=1e-2's two curves and their legend marks
  EXPECT_THAT(read_text(dir.file("sweep.json")), HasSubstr("{\"name\": \"lr\", \"values\": [\"3e-3\", \"1e-2\"]}"));

  // Point 3 is `ropegrad train --lr 1e-2 --batch 4` (checkpointing every evaluation, as the sweep does).
  const TempDir alone("alone");
  std::vector<std::string> args = {"train", "--quiet", "--out", alone.path(), "--checkpoint-every", "4"};
  for (const std::string& a : tiny(12)) args.push_back(a);
  args.insert(args.end(), {"--lr", "1e-2", "--batch", "4"});
  ASSERT_EQ(run(args).status, 0);
  EXPECT_EQ(read_text(alone.file("metrics.csv")), read_text(dir.file(rows[2].at("dir")) + "/metrics.csv"));
  EXPECT_EQ(read_text(alone.file("config.txt")), read_text(dir.file(rows[2].at("dir")) + "/config.txt"));
}

// A learning rate far too large diverges: the point stops at the step where
// the loss went above twice step 1's (or stopped being finite), the table says
// so, the curve ends there, and the other points still run.
TEST(Sweep, DivergedRunIsStoppedAndRecordedAndTheSweepGoesOn) {
  const TempDir dir("diverge");
  const Ran r = run(sweep_args(dir.path(), {"lr=3e-3,300,1e-2"}, tiny(40)));
  ASSERT_EQ(r.status, 0) << r.output;
  const auto rows = read_csv(dir.file("results.csv"));
  ASSERT_EQ(rows.size(), 3u);
  for (int i : {0, 2}) {
    EXPECT_EQ(rows[i].at("diverged"), "no");
    EXPECT_EQ(rows[i].at("steps"), "40");
  }
  const auto& bad = rows[1];
  EXPECT_EQ(bad.at("diverged"), "yes");
  const int at = std::stoi(bad.at("diverged_at"));
  EXPECT_GT(at, 1);
  EXPECT_LT(at, 40);
  // The run's metrics stop at the diverged step (or the step before, when
  // that step's loss or gradient was not finite and the step never completed).
  const auto metrics = read_csv(dir.file(bad.at("dir")) + "/metrics.csv");
  ASSERT_FALSE(metrics.empty());
  const int last = std::stoi(metrics.back().at("step"));
  EXPECT_EQ(std::to_string(last), bad.at("steps"));
  EXPECT_TRUE(last == at || last == at - 1) << "last row " << last << ", diverged at " << at;
  const double first = std::stod(metrics.front().at("loss"));
  if (last == at) {  // a finite loss past the limit, at that step or its evaluation
    const double loss = std::stod(metrics.back().at("loss")), eval = std::stod(metrics.back().at("eval_loss"));
    EXPECT_TRUE(loss > 2 * first || eval > 2 * first) << loss << " / " << eval << " vs step 1's " << first;
  }
  for (size_t i = 0; i + 1 < metrics.size(); ++i) {  // no earlier step crossed the line
    EXPECT_LE(std::stod(metrics[i].at("loss")), 2 * first) << "step " << i + 1;
  }
  EXPECT_THAT(read_text(dir.file("results.md")), HasSubstr(fmt::format("| yes, step {} |", at)));
  EXPECT_THAT(r.output, HasSubstr(fmt::format("[2/3] lr=300: diverged at step {} (", at)));
  EXPECT_THAT(r.output, HasSubstr("[3/3] lr=1e-2: done, 40 steps"));
}

// The rule itself, as the training loop applies it.
TEST(Sweep, DivergenceRule) {
  EXPECT_FALSE(loss_diverged(2.0, 2.0, 2));
  EXPECT_FALSE(loss_diverged(4.0, 2.0, 2));  // exactly twice is not above
  EXPECT_TRUE(loss_diverged(4.01, 2.0, 2));
  EXPECT_TRUE(loss_diverged(NAN, 2.0, 2));
  EXPECT_TRUE(loss_diverged(INFINITY, 2.0, 2));
  EXPECT_FALSE(loss_diverged(50.0, NAN, 2));  // no step 1 to compare with: only non-finite counts
  EXPECT_TRUE(loss_diverged(NAN, NAN, 2));
}

// In the library: with divergence_factor 0 a non-finite loss is still an
// Error (what `ropegrad train` does); with a factor the run stops and says so.
TEST(Sweep, TrainStopsAtDivergenceOnlyWhenAskedTo) {
  TrainConfig c;
  c.task_options.vocab = 8;
  c.task_options.length = 8;
  c.model.d_model = 16;
  c.model.num_layers = 1;
  c.model.num_heads = 2;
  c.steps = 40;
  c.batch_size = 8;
  c.warmup = 2;
  c.eval_every = 4;
  c.eval_batches = 2;
  c.lr = 300;
  c.quiet = true;
  c.divergence_factor = 2;
  const TrainResult r = train(c, nullptr);
  EXPECT_GT(r.diverged_at, 1);
  EXPECT_LT(r.diverged_at, 40);
  EXPECT_THAT(r.diverged_because, ::testing::AnyOf(HasSubstr("times step 1's"), HasSubstr("NaN or infinite"),
                                                    HasSubstr("the loss became")));
  EXPECT_TRUE(r.last_step == r.diverged_at || r.last_step == r.diverged_at - 1);
  EXPECT_EQ(static_cast<int64_t>(r.steps.size()), r.last_step);
}

// --time-budget: each point stops after the step at which its training time
// (time.csv) reaches the budget, far before --steps; that step is evaluated.
TEST(Sweep, TimeBudgetEndsEachPoint) {
  const TempDir dir("budget");
  std::vector<std::string> args = sweep_args(dir.path(), {"batch=4,8"}, tiny(1000000));
  args.insert(args.begin() + 1, {"--time-budget", "0.3"});
  const Ran r = run(args);
  ASSERT_EQ(r.status, 0) << r.output;
  EXPECT_THAT(r.output, HasSubstr("sweep: 2 points (batch), 0.3 s of training each"));
  const auto rows = read_csv(dir.file("results.csv"));
  ASSERT_EQ(rows.size(), 2u);
  for (const auto& row : rows) {
    const auto times = read_csv(dir.file(row.at("dir")) + "/time.csv");
    ASSERT_GE(times.size(), 2u);
    EXPECT_GE(std::stod(times.back().at("seconds")), 0.3);
    EXPECT_LT(std::stod(times[times.size() - 2].at("seconds")), 0.3);
    EXPECT_EQ(row.at("steps"), times.back().at("step"));
    EXPECT_LT(std::stoi(row.at("steps")), 1000000);
    const auto metrics = read_csv(dir.file(row.at("dir")) + "/metrics.csv");
    EXPECT_FALSE(metrics.back().at("eval_loss").empty()) << "the last step is evaluated";
    EXPECT_EQ(row.at("final_val_loss"), metrics.back().at("eval_loss"));
  }
}

// kill -9 at points of the sweep (once while point 2 has a checkpoint but no
// outcome, then at random moments), then the same command again: the table
// and every point's metrics.csv equal an uninterrupted sweep's.
TEST(Sweep, KilledAndRerunGivesTheSameTableAsAnUninterruptedSweep) {
  std::vector<std::string> fixed = tiny(16);
  fixed.insert(fixed.end(), {"--checkpoint-every", "2"});
  const std::vector<std::string> grid = {"lr=3e-3,300", "batch=4,8"};
  const TempDir whole("whole");
  const auto t0 = std::chrono::steady_clock::now();
  ASSERT_EQ(run(sweep_args(whole.path(), grid, fixed)).status, 0);
  const auto whole_us = std::chrono::duration_cast<std::chrono::microseconds>(std::chrono::steady_clock::now() - t0);
  const std::string want_table = read_text(whole.file("results.csv")), want_runs = all_runs(whole.path());
  ASSERT_THAT(want_table, HasSubstr(",yes,")) << "the grid holds a diverging point";

  {  // Killed while point 2 is under way: point 1 kept, point 2 resumed, 3 and 4 run.
    const TempDir dir("mid");
    const std::string point1 = dir.path() + "/1_lr=3e-3_batch=4", point2 = dir.path() + "/2_lr=3e-3_batch=8";
    const Ran killed = run(sweep_args(dir.path(), grid, fixed), [&] {
      return fs::exists(point2 + "/checkpoint.safetensors") && !fs::exists(point2 + "/outcome.txt");
    });
    ASSERT_EQ(killed.status, -1) << killed.output;
    ASSERT_TRUE(fs::exists(point1 + "/outcome.txt"));
    const Ran again = run(sweep_args(dir.path(), grid, fixed));
    ASSERT_EQ(again.status, 0) << again.output;
    EXPECT_THAT(again.output, HasSubstr("[1/4] lr=3e-3 batch=4: finished earlier, kept"));
    EXPECT_THAT(again.output, HasSubstr("[2/4] lr=3e-3 batch=8: resuming from its checkpoint"));
    EXPECT_THAT(again.output, HasSubstr("[3/4] lr=300 batch=4: start"));
    EXPECT_EQ(read_text(dir.file("results.csv")), want_table);
    EXPECT_EQ(all_runs(dir.path()), want_runs);
  }
  Generator gen(3);
  for (int t = 0; t < 3; ++t) {  // anywhere in the sweep
    const TempDir dir("killed");
    const auto delay = std::chrono::microseconds(gen.integer(0, whole_us.count()));
    const auto start = std::chrono::steady_clock::now();
    run(sweep_args(dir.path(), grid, fixed), [&] { return std::chrono::steady_clock::now() - start > delay; });
    const Ran again = run(sweep_args(dir.path(), grid, fixed));
    ASSERT_EQ(again.status, 0) << "trial " << t << ": " << again.output;
    EXPECT_EQ(read_text(dir.file("results.csv")), want_table) << "trial " << t;
    EXPECT_EQ(all_runs(dir.path()), want_runs) << "trial " << t;
  }
  // A finished sweep run again runs nothing and prints the same table.
  const Ran done = run(sweep_args(whole.path(), grid, fixed));
  ASSERT_EQ(done.status, 0);
  EXPECT_EQ(count(done.output, "finished earlier, kept"), 4u);
  EXPECT_EQ(read_text(whole.file("results.csv")), want_table);
}

// A different grid or different options into the directory of a sweep are
// refused, naming what differs; nothing of the first sweep changes.
TEST(Sweep, RerunWithADifferentGridIsRefused) {
  const TempDir dir("other");
  ASSERT_EQ(run(sweep_args(dir.path(), {"lr=3e-3"}, tiny(4))).status, 0);
  const std::string table = read_text(dir.file("results.csv"));
  Ran r = run(sweep_args(dir.path(), {"lr=3e-3,1e-2"}, tiny(4)));
  EXPECT_EQ(r.status, 1);
  EXPECT_THAT(r.output, HasSubstr("error: sweep: '" + dir.file("sweep.json") + "' is another sweep: it has "
                                  "`{\"name\": \"lr\", \"values\": [\"3e-3\"]}` where this command gives "
                                  "`{\"name\": \"lr\", \"values\": [\"3e-3\", \"1e-2\"]}`"));
  r = run(sweep_args(dir.path(), {"lr=3e-3"}, tiny(8)));
  EXPECT_EQ(r.status, 1);
  EXPECT_THAT(r.output, HasSubstr("\"--steps\", \"4\""));
  EXPECT_THAT(r.output, HasSubstr("\"--steps\", \"8\""));
  EXPECT_EQ(read_text(dir.file("results.csv")), table);
}

// Nonsense on the command line: exit status 1, an error naming the value,
// and nothing written.
TEST(Sweep, BadGridsAndOptionsGetAClearError) {
  const TempDir dir("bad");
  const std::vector<std::string> fixed = tiny(4);
  const std::vector<std::pair<std::vector<std::string>, std::string>> cases = {
      {{"--grid", "foo=1,2"}, "--grid foo=1,2: 'foo' is not an option of ropegrad train"},
      {{"--grid", "lr="}, "--grid lr=: no values"},
      {{"--grid", "lr"}, "--grid lr: expected NAME=V1,V2,..."},
      {{"--grid", "lr=1e-3,,1e-2"}, "--grid lr=1e-3,,1e-2: value 2 is empty"},
      {{"--grid", "lr=1e-3,1e-3"}, "the value '1e-3' is given twice"},
      {{"--grid", "lr=1e-3,-1"}, "--grid lr=1e-3,-1: the value '-1' is refused: ropegrad train: --lr must be a real number in (0"},
      {{"--grid", "lr=0"}, "the value '0' is refused: ropegrad train: --lr must be a real number in (0, 1000], got 0"},
      {{"--grid", "lr=fast"}, "the value 'fast' is refused: ropegrad train: --lr must be a real number in (0, 1000], got 'fast'"},
      {{"--grid", "batch=8,0"}, "--grid batch=8,0: the value '0' is refused: ropegrad train: --batch must be a whole number in 1..1000000000, got 0"},
      {{"--grid", "attention=standard,w3"},
       "the value 'w3' is refused: ropegrad train: --attention must be one of standard | w2 | triple, got 'w3'"},
      {{"--grid", "tie=yes"}, "--grid tie=yes: the value 'yes' is not on or off (--tie is a flag)"},
      {{"--grid", "out=a,b"}, "--out is set by the sweep itself"},
      {{"--grid", "lr=1e-3", "--grid", "lr=1e-2"}, "--grid lr appears twice"},
      {{}, "give at least one --grid NAME=V1,V2,..."},
      {{"--grid", "lr=1e-3", "--time-budget", "-1"}, "--time-budget must be a real number in [0, 1e6] seconds, got -1"},
      {{"--grid", "lr=1e-3", "--time-budget", "soon"}, "--time-budget must be a real number in [0, 1e6] seconds, got 'soon'"},
      {{"--grid", "lr=1e-3", "--divergence-factor", "1"}, "--divergence-factor must be a real number in (1, 1e6], got 1"},
      {{"--grid", "lr=1e-3", "--steps", "4"}, "unknown argument '--steps' (train options go after --"},
  };
  for (const auto& [sweep_words, message] : cases) {
    std::vector<std::string> args = {"sweep", "--out", dir.path()};
    args.insert(args.end(), sweep_words.begin(), sweep_words.end());
    args.push_back("--");
    args.insert(args.end(), fixed.begin(), fixed.end());
    const Ran r = run(args);
    EXPECT_EQ(r.status, 1) << r.output;
    EXPECT_THAT(r.output, HasSubstr("sweep: ")) << r.output;  // "error: sweep: ", or the reader's "error: ropegrad sweep: "
    EXPECT_THAT(r.output, HasSubstr(message));
    EXPECT_FALSE(fs::exists(dir.path())) << "a refused sweep writes nothing";
  }
  // The fixed options after --: train's, minus what the sweep sets or the grid varies.
  const std::vector<std::pair<std::vector<std::string>, std::string>> fixed_cases = {
      {{"--lr", "1e-3"}, "--lr is both a --grid axis and a fixed option after --"},
      {{"--resume"}, "--resume is set by the sweep itself"},
      {{"--stop-after", "2"}, "--stop-after is set by the sweep itself"},
      {{"--bogus", "1"}, "the train options after -- (--bogus 1): ropegrad train: unknown argument '--bogus'"},
      {{"--batch", "-2"}, "the train options after -- (--batch -2): ropegrad train: --batch must be a whole number in 1..1000000000, got -2"},
  };
  for (const auto& [words, message] : fixed_cases) {
    std::vector<std::string> args = {"sweep", "--out", dir.path(), "--grid", "lr=1e-3,1e-2", "--"};
    args.insert(args.end(), words.begin(), words.end());
    const Ran r = run(args);
    EXPECT_EQ(r.status, 1) << r.output;
    EXPECT_THAT(r.output, HasSubstr("error: sweep: " + message));
    EXPECT_FALSE(fs::exists(dir.path()));
  }
  // Values fine on their own, refused together: the point is named.
  const Ran point = run({"sweep", "--out", dir.path(), "--grid", "warmup=2,10", "--", "--steps", "4"});
  EXPECT_EQ(point.status, 1);
  EXPECT_THAT(point.output,
              HasSubstr("error: sweep: point 2 (warmup=10): train: warmup (10) must be between 0 and steps (4)"));
  EXPECT_FALSE(fs::exists(dir.path()));
  const Ran missing = run({"sweep", "--grid", "lr=1e-3"});
  EXPECT_EQ(missing.status, 1);
  EXPECT_THAT(missing.output, HasSubstr("error: ropegrad sweep: --out DIR is required"));
}

// Every point is checked as train checks it at its start, before the first
// trains: a micro-batch that does not divide a point's batch, or a --text too
// short for a point's context, was found only when that point started, after
// the points before it had trained in full.
TEST(Sweep, AnInvalidPointIsFoundBeforeAnyPointTrains) {
  const TempDir dir("invalid");
  std::vector<std::string> fixed = tiny(4);
  fixed.insert(fixed.end(), {"--micro-batch", "4"});
  Ran r = run(sweep_args(dir.path(), {"lr=3e-3,1e-2", "batch=8,6"}, fixed));
  EXPECT_EQ(r.status, 1) << r.output;
  EXPECT_THAT(r.output, HasSubstr("error: sweep: point 2 (lr=3e-3 batch=6): train: --micro-batch 4 does not divide "
                                  "--batch 6"));
  EXPECT_THAT(r.output, Not(HasSubstr(": start"))) << "no point trained";
  EXPECT_FALSE(fs::exists(dir.path())) << "nothing written";

  fs::create_directories(dir.path() + "_text");
  std::ofstream(dir.path() + "_text/short.txt") << std::string(300, 'a');
  const std::vector<std::string> text = {"--task", "text", "--text", dir.path() + "_text/short.txt", "--d-model",
                                         "16", "--layers", "1", "--heads", "2", "--steps", "2", "--warmup", "1"};
  r = run(sweep_args(dir.path(), {"length=16,200"}, text));
  EXPECT_EQ(r.status, 1) << r.output;
  EXPECT_THAT(r.output, HasSubstr("error: sweep: point 2 (length=200): text: "));
  EXPECT_THAT(r.output, Not(HasSubstr(": start")));
  // A head dimension RoPE cannot rotate (an odd one), found before the first point too.
  r = run(sweep_args(dir.path(), {"heads=2,16"}, drop(tiny(4), "--heads")));
  EXPECT_EQ(r.status, 1) << r.output;
  EXPECT_THAT(r.output, HasSubstr("error: sweep: point 2 (heads=16): train: RoPE rotates pairs of dimensions"));
  EXPECT_FALSE(fs::exists(dir.path()));
  fs::remove_all(dir.path() + "_text");
}

// A grid far larger than meant (a 10^6-point grid was accepted after 22 s of
// silent checking, with an ETA of 4.3 years) is refused at once with its size
// and an estimate of its time, unless --yes; every point is still checked
// before the first trains, and the check says so.
TEST(Sweep, AGridAboveAThousandPointsNeedsYes) {
  const TempDir dir("huge");
  const auto axis = [](const std::string& name, int from, int to) {
    std::vector<std::string> values;
    for (int i = from; i <= to; ++i) values.push_back(std::to_string(i));
    return fmt::format("{}={}", name, fmt::join(values, ","));
  };
  const auto start = std::chrono::steady_clock::now();
  Ran r = run(sweep_args(dir.path(), {axis("warmup", 0, 99), axis("seed", 1, 100), axis("clip", 1, 100)},
                         drop(drop(tiny(3000), "--warmup"), "--seed")));
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  EXPECT_EQ(r.status, 1) << r.output;
  EXPECT_THAT(r.output, ContainsRegex("error: sweep: the grid has 1000000 points \\(warmup 100 x seed 100 x clip 100\\); "
                                      "at point 1's pace here \\([0-9.]+ (us|ms|s) a step, 3000 steps a point\\) that is "
                                      "about [0-9.]+ (hours|days|years) of training; give --yes to run a grid of more "
                                      "than 1000 points"));
  EXPECT_LT(seconds, 10) << "refused before its points are built";
  EXPECT_FALSE(fs::exists(dir.path()));
  // With --yes it goes on: its size said first, then every point checked
  // before any trains (here the second half is refused, from point 502 of 1002).
  std::vector<std::string> fixed = tiny(4);
  fixed = drop(fixed, "--seed");  // an axis
  fixed.insert(fixed.end(), {"--micro-batch", "4"});
  std::vector<std::string> args = {"sweep", "--out", dir.path(), "--yes", "--grid", "batch=8,6", "--grid",
                                   axis("seed", 0, 500), "--"};
  args.insert(args.end(), fixed.begin(), fixed.end());
  r = run(args);
  EXPECT_EQ(r.status, 1) << r.output;
  EXPECT_THAT(r.output, HasSubstr("sweep: 1002 points (batch x seed): checking each one's settings first"));
  EXPECT_THAT(r.output, HasSubstr("error: sweep: point 502 (batch=6 seed=0): train: --micro-batch 4 does not divide"));
  EXPECT_THAT(r.output, Not(HasSubstr(": start")));
  EXPECT_FALSE(fs::exists(dir.path()));
}

// A finished point whose metrics.csv was deleted showed "-" in every column,
// without a word. The sweep names the point and the file, and how to train
// the point again, before anything trains.
TEST(Sweep, AFinishedPointThatLostItsMetricsIsNamed) {
  const TempDir dir("lost");
  const std::vector<std::string> grid = {"lr=3e-3,1e-2,3e-2"};
  ASSERT_EQ(run(sweep_args(dir.path(), grid, tiny(4))).status, 0);
  const std::string point2 = dir.path() + "/2_lr=1e-2";
  fs::remove(point2 + "/metrics.csv");
  fs::remove_all(dir.path() + "/3_lr=3e-2");  // a point to train: it must not start first
  Ran r = run(sweep_args(dir.path(), grid, tiny(4)));
  EXPECT_EQ(r.status, 1) << r.output;
  EXPECT_THAT(r.output, HasSubstr("error: sweep: point 2 (lr=1e-2) is finished (its outcome.txt says so), but its '" +
                                  point2 + "/metrics.csv' is missing, so its results cannot be shown; to train the "
                                  "point again from the start, delete its directory '" + point2 +
                                  "' and rerun the same command"));
  EXPECT_THAT(r.output, Not(HasSubstr(": start")));
  // What it says to do works: the point trains again, and the table is whole.
  fs::remove_all(point2);
  r = run(sweep_args(dir.path(), grid, tiny(4)));
  ASSERT_EQ(r.status, 0) << r.output;
  EXPECT_THAT(r.output, ContainsRegex("sweep: 2 points to train: (under a second|about [0-9]+ seconds) \\(point 2 took [0-9.]+ (us|ms|s) a step here\\)"));
  EXPECT_THAT(r.output, HasSubstr("[2/3] lr=1e-2: start"));
  EXPECT_THAT(read_text(dir.file("results.md")), Not(HasSubstr("| - |")));
}

// A flag is an axis with the values on and off.
// A sweep's --out may not hold, nor lie inside, an input of its runs.
TEST(Sweep, OutputThatHoldsOrLiesInAnInputIsRefused) {
  const TempDir dir("sweepin");
  fs::create_directories(dir.path());
  std::ofstream(dir.file("book.txt")) << std::string(4000, 'b');
  const std::vector<std::string> text = {"--task", "text", "--text", dir.file("book.txt"), "--length", "8",
                                         "--d-model", "16", "--layers", "1", "--heads", "2", "--steps", "2"};
  Ran r = run(sweep_args(dir.path(), {"lr=1e-3,1e-2"}, text));
  EXPECT_EQ(r.status, 1) << r.output;
  EXPECT_THAT(r.output, HasSubstr("error: sweep: --out '" + dir.path() + "' contains the input"));
  r = run(sweep_args(dir.file("book.txt") + "/s", {"lr=1e-3,1e-2"}, text));
  EXPECT_EQ(r.status, 1) << r.output;
  EXPECT_THAT(r.output, HasSubstr("lies inside the input"));
  std::vector<std::string> listed;
  for (const auto& e : fs::directory_iterator(dir.path())) listed.push_back(e.path().filename().string());
  EXPECT_EQ(listed, std::vector<std::string>{"book.txt"}) << "a refused sweep writes nothing";
}

TEST(Sweep, FlagAxisTakesOnAndOff) {
  const TempDir dir("flag");
  const Ran r = run(sweep_args(dir.path(), {"tie=off,on"}, tiny(4)));
  ASSERT_EQ(r.status, 0) << r.output;
  const auto rows = read_csv(dir.file("results.csv"));
  ASSERT_EQ(rows.size(), 2u);
  EXPECT_THAT(read_text(dir.file(rows[0].at("dir")) + "/config.txt"), HasSubstr("tie_embeddings=0"));
  EXPECT_THAT(read_text(dir.file(rows[1].at("dir")) + "/config.txt"), HasSubstr("tie_embeddings=1"));
}

// The sweep's plots: the y axis ends at y_max (a diverged run's last loss is
// drawn on the top edge instead of flattening the other curves), ten series
// get ten colours and the eleventh is dashed, a series may name its colour
// and dash, the axis starts at y_min when no value is lower, and the chart
// widens for long legend names.
TEST(Sweep, PlotClipsAtYMaxColoursTenDashesPastThemAndFitsLongNames) {
  const TempDir dir("plot");
  fs::create_directories(dir.path());
  std::vector<Series> series;
  for (int i = 0; i < 11; ++i) series.push_back({"lr=" + std::to_string(i), {{1, 2.0}, {2, 1.0 + 0.1 * i}}});
  series[0].points.push_back({3, 1000.0});  // diverged
  write_svg_plot(dir.file("clip.svg"), series, "t", "step", "loss", /*y_max=*/4.0);
  const std::string svg = read_text(dir.file("clip.svg"));
  EXPECT_THAT(svg, HasSubstr(" 550.0,40.0 \"/>"));  // step 3 at the right end, on the top edge (y = 40)
  EXPECT_THAT(svg, HasSubstr(">4</text>"));         // the top tick is y_max
  EXPECT_THAT(svg, HasSubstr(">0</text>"));         // from zero by default
  EXPECT_THAT(svg, ::testing::Not(HasSubstr(">1000</text>")));
  EXPECT_EQ(count(svg, "stroke-dasharray=\"6 3\""), 2u);  // the 11th series: its line and its legend mark
  for (const char* colour : {"#1f77b4", "#d62728", "#2ca02c", "#9467bd", "#ff7f0e", "#8c564b", "#e377c2", "#7f7f7f",
                             "#bcbd22", "#17becf"})
    EXPECT_EQ(count(svg, fmt::format("<polyline fill=\"none\" stroke=\"{}\"", colour)), colour == std::string("#1f77b4") ? 2u : 1u)
        << colour;
  series.resize(2);
  series[1].color = 8, series[1].dash = 2;
  write_svg_plot(dir.file("from.svg"), series, "t", "step", "loss", 4.0, false, /*y_min=*/0.9);
  const std::string from = read_text(dir.file("from.svg"));
  EXPECT_THAT(from, HasSubstr("<polyline fill=\"none\" stroke=\"#bcbd22\" stroke-width=\"1.5\" stroke-dasharray=\"2 2\""));
  EXPECT_THAT(from, HasSubstr(">1</text>"));
  EXPECT_THAT(from, ::testing::Not(HasSubstr(">0</text>")));  // the axis starts at 0.9, not at zero
  write_svg_plot(dir.file("wide.svg"), {{std::string(40, 'x'), {{1, 2.0}, {2, 1.0}}}}, "t", "step", "loss");
  EXPECT_THAT(read_text(dir.file("wide.svg")), HasSubstr("width=\"880\""));  // 550 + 50 + 7 * 40
}

// A diverged language model's perplexity is astronomically large: the table
// prints it with four significant digits (7.467e+16), not as 17 digits of a
// meaningless integer part.
TEST(Sweep, HugeNumbersInTheTableAreScientific) {
  const TempDir dir("huge");
  const std::string text = fixture_path("../../docs/12-attention.md");
  const Ran r = run(sweep_args(dir.path(), {"lr=300"},
                               {"--task", "text", "--text", text, "--length", "16", "--d-model", "16", "--layers", "1",
                                "--heads", "2", "--steps", "20", "--warmup", "1", "--eval-every", "2",
                                "--eval-batches", "1", "--batch", "4"}));
  ASSERT_EQ(r.status, 0) << r.output;
  const auto rows = read_csv(dir.file("results.csv"));
  ASSERT_EQ(rows.size(), 1u);
  ASSERT_EQ(rows[0].at("diverged"), "yes") << r.output;
  const double perplexity = std::stod(rows[0].at("final_metric"));
  ASSERT_GE(perplexity, 1e6);  // what makes this test mean something
  const std::string table = read_text(dir.file("results.md"));
  EXPECT_THAT(table, HasSubstr(fmt::format(" {:.4g} |", perplexity)));
  EXPECT_THAT(table, Not(ContainsRegex("[0-9]{11}")));
}
