// The sweep's results: each point's outcome.txt, its row of the table (read
// back from the run's own metrics.csv), results.md / results.csv and the plots.
#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <limits>
#include <map>
#include <sstream>

#include "train/plot.h"
#include "train/run_files.h"
#include "train/sweep.h"

namespace ropegrad::tasks {

namespace {

std::string outcome_path(const SweepPoint& p) { return p.dir + "/outcome.txt"; }

// outcome.txt's key=value lines, each numeric one checked by its rule
// (run_file_fields); a missing key is an Error naming the file.
struct Outcome {
  std::map<std::string, std::string> text;
  std::map<std::string, int64_t> number;
};

Outcome read_outcome(const std::string& path) {
  std::ifstream in(path);
  RG_CHECK(in.good(), "sweep", "cannot read '{}'", path);
  Outcome o;
  int64_t number = 0;
  for (std::string line; std::getline(in, line);) {
    ++number;
    const size_t eq = line.find('=');
    RG_CHECK(eq != std::string::npos, "sweep", "{}:{}: expected key=value, got '{}'", path, number, line.substr(0, 80));
    const std::string key = line.substr(0, eq), value = line.substr(eq + 1);
    o.text[key] = value;
    if (const nn::FieldRule* rule = run_field_rule("outcome.txt", key))
      o.number[key] = nn::read_whole_field("sweep", path, number, key, value, *rule);
  }
  for (const char* key : {"steps", "diverged_at", "diverged_because", "metric"})
    RG_CHECK(o.text.count(key) > 0, "sweep", "{}: no '{}' entry (delete the file to run the point again)", path, key);
  return o;
}

// A finished point's metrics.csv or time.csv: there, or an Error saying which
// point lost it and how to train it again (its outcome says it is done, so
// the sweep would keep it as it is).
RunCsv read_point_csv(const SweepPoint& p, const std::string& name) {
  const RunCsv csv = read_run_csv(p.dir + "/" + name, "sweep");
  RG_CHECK(csv.exists, "sweep",
           "point {} ({}) is finished (its outcome.txt says so), but its '{}/{}' is missing, so its results cannot be "
           "shown; to train the point again from the start, delete its directory '{}' and rerun the same command",
           p.index, p.label, p.dir, name, p.dir);
  return csv;
}

// Four decimals, or four significant digits once that would print more than
// ten digits (a diverged run's perplexity: 7.467e+16, not 17 digits of noise).
std::string number_or_dash(double v) {
  if (std::isnan(v)) return "-";
  return std::abs(v) < 1e6 ? fmt::format("{:.4f}", v) : fmt::format("{:.4g}", v);
}

// The header of the metric column: the task's metric when every point has the same one.
std::string metric_header(const std::vector<SweepRow>& rows) {
  for (const SweepRow& r : rows) {
    if (r.metric_name != rows.front().metric_name) return "metric";
  }
  return rows.empty() ? "metric" : rows.front().metric_name;
}

// (step, loss) and (seconds, loss) of every step a run logged.
struct Curve {
  std::vector<std::pair<double, double>> by_step, by_time;
};

Curve read_curve(const SweepPoint& p) {
  std::map<double, double> seconds;  // step -> its time
  const RunCsv times = read_point_csv(p, "time.csv");
  if (!times.rows.empty()) {
    const size_t step = times.column("step", "sweep"), column = times.column("seconds", "sweep");
    for (const RunCsv::Row& row : times.rows) seconds[row.values[step]] = row.values[column];
  }
  Curve c;
  const RunCsv metrics = read_point_csv(p, "metrics.csv");
  if (metrics.rows.empty()) return c;
  const size_t step_column = metrics.column("step", "sweep"), loss_column = metrics.column("loss", "sweep");
  for (const RunCsv::Row& row : metrics.rows) {
    const double step = row.values[step_column], loss = row.values[loss_column];
    c.by_step.emplace_back(step, loss);
    auto it = seconds.find(step);
    if (it != seconds.end()) c.by_time.emplace_back(it->second, loss);
  }
  return c;
}

}  // namespace

bool has_outcome(const SweepPoint& point) { return std::filesystem::is_regular_file(outcome_path(point)); }

void write_outcome(const SweepPoint& point, const TrainResult& result, int64_t steps) {
  std::string because = result.diverged_because;
  for (char& ch : because) ch = ch == '\n' ? ' ' : ch;
  write_file_atomically(outcome_path(point), fmt::format("steps={}\ndiverged_at={}\ndiverged_because={}\nmetric={}\n", steps,
                                                         result.diverged_at, because, result.metric_name));
}

SweepRow read_sweep_row(const SweepPoint& point) {
  const std::string path = outcome_path(point);
  const Outcome outcome = read_outcome(path);
  SweepRow r;
  r.point = point;
  r.steps = outcome.number.at("steps");
  r.diverged_at = outcome.number.at("diverged_at");
  r.diverged_because = outcome.text.at("diverged_because");
  r.metric_name = outcome.text.at("metric");
  // The evaluations, from the run's own metrics.csv (every field checked by its rule).
  const RunCsv metrics = read_point_csv(point, "metrics.csv");
  if (metrics.rows.empty()) return r;  // diverged at its first step
  const size_t step = metrics.column("step", "sweep"), loss = metrics.column("eval_loss", "sweep"),
               metric = metrics.column("eval_metric", "sweep");
  for (const RunCsv::Row& row : metrics.rows) {
    const double eval_loss = row.values[loss];
    if (std::isnan(eval_loss)) continue;  // no evaluation at this step
    r.final_loss = eval_loss;
    r.final_metric = row.values[metric];
    if (std::isnan(r.best_loss) || eval_loss < r.best_loss)
      r.best_loss = eval_loss, r.best_step = static_cast<int64_t>(row.values[step]);
  }
  return r;
}

std::string results_markdown(const SweepConfig& sweep, const std::vector<SweepRow>& rows) {
  std::string head = "| # |", rule = "|---:|";
  for (const GridAxis& axis : sweep.grid) head += fmt::format(" {} |", axis.name), rule += "---|";
  head += fmt::format(" steps | final val loss | best val loss (step) | final {} | diverged |\n", metric_header(rows));
  rule += "---:|---:|---:|---:|---|\n";
  std::string table = head + rule;
  for (const SweepRow& r : rows) {
    table += fmt::format("| {} |", r.point.index);
    for (const std::string& v : r.point.values) table += fmt::format(" {} |", v);
    table += fmt::format(" {} | {} | {} | {} | {} |\n", r.steps, number_or_dash(r.final_loss),
                         r.best_step > 0 ? fmt::format("{} ({})", number_or_dash(r.best_loss), r.best_step) : "-",
                         number_or_dash(r.final_metric),
                         r.diverged_at > 0 ? fmt::format("yes, step {}", r.diverged_at) : "no");
  }
  return table;
}

std::string results_csv(const SweepConfig& sweep, const std::vector<SweepRow>& rows) {
  // A field with a comma or a quote is quoted (a grid value holds neither, a path may).
  const auto field = [](const std::string& s) {
    if (s.find_first_of(",\"\n") == std::string::npos) return s;
    std::string q = "\"";
    for (char ch : s) q += ch == '"' ? std::string("\"\"") : std::string(1, ch);
    return q + "\"";
  };
  const auto number = [](double v) { return std::isnan(v) ? std::string() : fmt::format("{:.6f}", v); };
  std::string csv = "point";
  for (const GridAxis& axis : sweep.grid) csv += fmt::format(",{}", field(axis.name));
  csv += ",steps,final_val_loss,best_val_loss,best_step,final_metric,diverged,diverged_at,dir\n";
  for (const SweepRow& r : rows) {
    csv += std::to_string(r.point.index);
    for (const std::string& v : r.point.values) csv += fmt::format(",{}", field(v));
    csv += fmt::format(",{},{},{},{},{},{},{},{}\n", r.steps, number(r.final_loss), number(r.best_loss), r.best_step,
                       number(r.final_metric), r.diverged_at > 0 ? "yes" : "no", r.diverged_at,
                       field(std::filesystem::path(r.point.dir).filename().string()));
  }
  return csv;
}

namespace {

// The y range of a sweep's plots: from the lowest loss of the runs that did
// not diverge to a high quantile (0.99) of their losses, with a margin, never
// above y_max (the divergence bound). A diverged run's losses would stretch the
// axis and squash the curves worth comparing; its points above the range are
// drawn on the top edge. When every run diverged, all of them set the range.
std::pair<double, double> sweep_y_range(const std::vector<Series>& series, const std::vector<bool>& diverged,
                                        double y_max) {
  std::vector<double> kept, all;
  for (size_t i = 0; i < series.size(); ++i) {
    for (const auto& [x, y] : series[i].points) {
      if (!std::isfinite(y)) continue;
      all.push_back(y);
      if (!diverged[i]) kept.push_back(y);
    }
  }
  std::vector<double>& v = kept.empty() ? all : kept;
  if (v.empty()) return {0.0, y_max};
  std::sort(v.begin(), v.end());
  const double lo = v.front(), hi = v[static_cast<size_t>(0.99 * static_cast<double>(v.size() - 1))];
  const double margin = 0.05 * std::max(hi - lo, 1e-6);
  return {lo - margin, std::min(hi + margin, y_max)};
}

// The title of a sweep's plot: what the grid varies, e.g. "norm and lr".
std::string sweep_title(const SweepConfig& sweep, const std::string& against) {
  std::vector<std::string> names;
  for (const GridAxis& axis : sweep.grid) names.push_back(axis.name);
  return fmt::format("training loss by {}, against {}", fmt::join(names, " and "), against);
}

// Colour and dash of a sweep point's curve: with one axis, a colour and a dash
// pattern of its own; with more, the colour follows the last axis's value and
// the dash the other axes' values (norm=post lr=1e-2: post's dash, 1e-2's colour).
void style_sweep_series(const SweepConfig& sweep, const SweepPoint& point, size_t place, Series& s) {
  if (sweep.grid.size() < 2 || point.values.size() != sweep.grid.size()) {
    s.color = static_cast<int>(place % 10), s.dash = static_cast<int>(place % 4);
    return;
  }
  const auto index_of = [&](size_t axis) {
    const std::vector<std::string>& values = sweep.grid[axis].values;
    return static_cast<int>(std::find(values.begin(), values.end(), point.values[axis]) - values.begin());
  };
  int others = 0;
  for (size_t a = 0; a + 1 < sweep.grid.size(); ++a)
    others = others * static_cast<int>(sweep.grid[a].values.size()) + index_of(a);
  s.color = index_of(sweep.grid.size() - 1) % 10, s.dash = others % 4;
}

}  // namespace

void write_sweep_results(const SweepConfig& sweep, const std::vector<SweepRow>& rows) {
  write_file_atomically(sweep.out_dir + "/results.md", results_markdown(sweep, rows));
  write_file_atomically(sweep.out_dir + "/results.csv", results_csv(sweep, rows));
  std::vector<Series> by_step, by_time;
  std::vector<bool> diverged;
  double first_loss = 0;  // the largest step-1 loss: the y axis ends at factor times it
  for (const SweepRow& r : rows) {
    Curve c = read_curve(r.point);
    if (c.by_step.empty()) continue;  // diverged at its first step
    if (c.by_step.front().first == 1) first_loss = std::max(first_loss, c.by_step.front().second);
    by_step.push_back({r.point.label, std::move(c.by_step)});
    by_time.push_back({r.point.label, std::move(c.by_time)});
    style_sweep_series(sweep, r.point, by_step.size() - 1, by_step.back());
    style_sweep_series(sweep, r.point, by_time.size() - 1, by_time.back());
    diverged.push_back(r.diverged_at > 0);
  }
  if (by_step.empty()) return;
  const double y_max = first_loss > 0 ? sweep.divergence_factor * first_loss : INFINITY;
  const auto [lo, hi] = sweep_y_range(by_step, diverged, y_max);
  write_svg_plot(sweep.out_dir + "/loss_vs_step.svg", by_step, sweep_title(sweep, "the step"), "step", "loss", hi,
                 false, lo);
  write_svg_plot(sweep.out_dir + "/loss_vs_time.svg", by_time, sweep_title(sweep, "training time"), "training seconds",
                 "loss", hi, false, lo);
}

}  // namespace ropegrad::tasks
