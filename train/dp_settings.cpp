#include "train/dp_settings.h"

#include <algorithm>
#include <filesystem>
#include <sstream>

#include "train/run_files.h"

namespace ropegrad::tasks {

std::string dp_settings_text(const TrainConfig& c, const Task& task) {
  // --out too: only rank 0 writes there, so another rank's would be ignored without a word.
  const std::string out =
      c.out_dir.empty() ? "" : std::filesystem::absolute(c.out_dir).lexically_normal().string();
  return model_config_text(c, task) + fmt::format("bucket_mb={}\nzero={}\nout={}\n", c.bucket_mb, c.zero, out);
}

namespace {

// "key=value" lines.
std::vector<std::pair<std::string, std::string>> lines_of(const std::string& text) {
  std::vector<std::pair<std::string, std::string>> out;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) {
    const size_t eq = line.find('=');
    out.emplace_back(line.substr(0, eq), eq == std::string::npos ? "" : line.substr(eq + 1));
  }
  return out;
}

// The command-line flag of a setting: "num_layers" -> "--layers", "min_lr" -> "--min-lr".
std::string flag_of(const std::string& key) {
  if (key == "num_layers") return "--layers";
  if (key == "num_heads") return "--heads";
  if (key == "tie_embeddings") return "--tie";
  std::string f = key;
  std::replace(f.begin(), f.end(), '_', '-');
  return "--" + f;
}

}  // namespace

void check_same_settings(ProcessGroup& group, const std::string& text) {
  const std::vector<std::string> all = group.all_gather_text(text);
  const auto first = lines_of(all.at(0));
  for (size_t r = 1; r < all.size(); ++r) {
    const auto mine = lines_of(all[r]);
    for (size_t i = 0; i < std::max(first.size(), mine.size()); ++i) {
      const auto a = i < first.size() ? first[i] : std::pair<std::string, std::string>{"(nothing)", ""};
      const auto b = i < mine.size() ? mine[i] : std::pair<std::string, std::string>{"(nothing)", ""};
      if (a == b) continue;
      if (a.first != b.first) {
        fail("data parallel", "rank {} has the setting '{}', rank 0 has '{}' (different builds or options)", r,
             b.first, a.first);
      }
      fail("data parallel", "rank {} has {} {}, rank 0 has {} {}", r, flag_of(a.first), b.second, flag_of(a.first),
           a.second);
    }
  }
}

double ring_bytes(double bytes, int ranks) { return 2.0 * (ranks - 1) / ranks * bytes; }

namespace {

// A CSV file that keeps its rows before first_step on resume, rewritten whole first.
std::FILE* open_log(const std::string& path, const std::string& header, bool resume, int64_t first_step) {
  std::string kept = header;
  if (resume) {
    for (const std::string& line : read_metrics_rows(path, first_step)) kept += line + "\n";
  }
  write_file_atomically(path, kept);
  std::FILE* f = std::fopen(path.c_str(), "a");
  RG_CHECK(f != nullptr, "train", "cannot write '{}'", path);
  return f;
}

}  // namespace

DpLog::DpLog(const std::string& dir, bool resume, int64_t first_step, bool writes) {
  if (dir.empty() || !writes) return;
  steps_file_ = open_log(dir + "/dp.csv",
                         "step,ranks,compute_s,communication_s,waiting_s,bytes_summed,ring_bytes_per_rank,before_backward_s,"
                         "backward_s,optimizer_s\n", resume,
                         first_step);
  buckets_file_ = open_log(dir + "/dp_buckets.csv", "step,bucket,elements,ready_s\n", resume, first_step);
}

DpLog::~DpLog() { close(); }

void DpLog::close() {
  for (std::FILE** f : {&steps_file_, &buckets_file_}) {
    if (*f != nullptr) std::fclose(*f);
    *f = nullptr;
  }
}

void DpLog::row(int64_t step, const StepTimes& t, int64_t bytes, int ranks, const std::vector<double>& ready,
                const std::vector<int64_t>& elements) {
  sum_.compute += t.compute;
  sum_.communication += t.communication;
  sum_.waiting += t.waiting;
  bytes_ += static_cast<double>(bytes);
  ++steps_;
  if (steps_file_ == nullptr) return;
  fmt::print(steps_file_, "{},{},{:.6f},{:.6f},{:.6f},{},{:.0f},{:.6f},{:.6f},{:.6f}\n", step, ranks, t.compute,
             t.communication, t.waiting, bytes, ring_bytes(static_cast<double>(bytes), ranks), t.before_backward,
             t.backward, t.optimizer);
  for (size_t k = 0; k < ready.size(); ++k) {
    fmt::print(buckets_file_, "{},{},{},{:.6f}\n", step, k, elements.at(k), ready[k]);
  }
  std::fflush(steps_file_);
  std::fflush(buckets_file_);
}

StepTimes DpLog::mean_times() const {
  const double n = steps_ > 0 ? static_cast<double>(steps_) : 1.0;
  return {sum_.compute / n, sum_.communication / n, sum_.waiting / n, 0};
}

}  // namespace ropegrad::tasks
