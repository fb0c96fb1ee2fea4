#include "train/run_files.h"
#include "io/read_file.h"

#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <functional>
#include <set>
#include <sstream>

#include "io/checkpoint.h"
#include "tensor/parse_number.h"
#include "io/tmp_file.h"
#include "nn/attention_variants.h"
#include "tensor/printable.h"

namespace ropegrad::tasks {

namespace {

// The training settings config.txt records (and --resume compares).
const std::set<std::string> kSettings = {"steps",        "batch", "lr",   "min_lr", "warmup", "weight_decay",
                                         "beta1",        "beta2", "clip", "seed",   "text",   "vocab",
                                         "length",       "pairs", "queries", "concepts", "tokenizer", "data", "micro_batch",
                                         // what the run knows of its inputs (tasks/token_text_task.h)
                                         "tokenizer_checksum", "tokenizer_vocab", "data_bytes", "data_checksum",
                                         "valid_bytes", "valid_checksum"};


constexpr double kSteps = static_cast<double>(nn::kMaxSteps);

// config.txt's numeric keys: the model, the training settings, what the run knows of its inputs.
std::vector<RunField> config_fields() {
  using nn::FieldRule;
  return {
    // the model
    {"vocab_size", FieldRule::whole(1, 1 << 24, "tokens")},
    {"context_length", FieldRule::whole(1, 1 << 20, "tokens")},
    {"d_model", FieldRule::whole(1, 65536)},
    {"num_layers", FieldRule::whole(1, 1024, "blocks")},
    {"num_heads", FieldRule::whole(1, 65536, "heads")},
    {"d_ff", FieldRule::whole(0, 1 << 20)},
    {"rope_theta", FieldRule::real(1e-300, 1e300)},
    {"tie_embeddings", FieldRule::whole(0, 1)},
    // the training settings
    {"steps", FieldRule::whole(1, kSteps, "steps")},
    {"batch", FieldRule::whole(1, 1e9, "sequences")},
    {"lr", FieldRule::real(0, 1e3)},
    {"min_lr", FieldRule::real(0, 1e3)},
    {"warmup", FieldRule::whole(0, kSteps, "steps")},
    {"weight_decay", FieldRule::real(0, 1e3)},
    {"beta1", FieldRule::real(0, 1)},
    {"beta2", FieldRule::real(0, 1)},
    {"clip", FieldRule::real(0, 1e30)},
    {"seed", FieldRule::whole(0, 9223372036854775807.0)},
    {"vocab", FieldRule::whole(0, 1 << 24, "tokens")},
    {"length", FieldRule::whole(0, 1 << 20, "tokens")},
    {"pairs", FieldRule::whole(0, 1 << 24)},
    {"queries", FieldRule::whole(0, 1 << 24)},
    {"concepts", FieldRule::whole(0, 1 << 24)},
    {"micro_batch", FieldRule::whole(1, 1e9, "sequences")},
    // what the run knows of its inputs
    {"tokenizer_vocab", FieldRule::whole(1, 1 << 24, "tokens")},
    {"data_bytes", FieldRule::whole(0, 1e15, "bytes")},
    {"valid_bytes", FieldRule::whole(0, 1e15, "bytes")},
  };
}

}  // namespace

const std::vector<RunFileFields>& run_file_fields() {
  using nn::FieldRule;
  constexpr double kSeconds = 1e9;      // 31 years of training
  constexpr double kStepSeconds = 1e6;  // 11 days for one step or one of its parts
  static const std::vector<RunFileFields> fields = {
      {"config.txt", config_fields()},
      {"metrics.csv",
       {
           {"step", FieldRule::whole(1, kSteps, "steps")},
           {"loss", FieldRule::real(0, 1e39, "nats")},
           {"lr", FieldRule::real(0, 1e3)},
           {"grad_norm", FieldRule::real(0, 1e300)},
           // empty between evaluations; nan or inf where an evaluation diverged
           {"eval_loss", {FieldRule::Type::Real, "nats", 0, 1e39, true, true}},
           {"eval_metric", {FieldRule::Type::Real, "", 0, 1e300, true, true}},
       }},
      {"time.csv",
       {
           {"step", FieldRule::whole(1, kSteps, "steps")},
           {"seconds", FieldRule::real(0, kSeconds, "seconds")},
       }},
      {"dp.csv",
       {
           {"step", FieldRule::whole(1, kSteps, "steps")},
           {"ranks", FieldRule::whole(1, 1e8, "ranks")},
           {"compute_s", FieldRule::real(0, kStepSeconds, "seconds")},
           {"communication_s", FieldRule::real(0, kStepSeconds, "seconds")},
           {"waiting_s", FieldRule::real(0, kStepSeconds, "seconds")},
           {"bytes_summed", FieldRule::whole(0, 1e15, "bytes")},
           {"ring_bytes_per_rank", FieldRule::whole(0, 1e15, "bytes")},
           {"before_backward_s", FieldRule::real(0, kStepSeconds, "seconds")},
           {"backward_s", FieldRule::real(0, kStepSeconds, "seconds")},
           {"optimizer_s", FieldRule::real(0, kStepSeconds, "seconds")},
       }},
      {"dp_buckets.csv",
       {
           {"step", FieldRule::whole(1, kSteps, "steps")},
           {"bucket", FieldRule::whole(0, 1e9)},
           {"elements", FieldRule::whole(0, 1e12, "elements")},
           {"ready_s", FieldRule::real(0, kStepSeconds, "seconds")},
       }},
      {"outcome.txt",
       {
           {"steps", FieldRule::whole(0, kSteps, "steps")},
           {"diverged_at", FieldRule::whole(0, kSteps, "steps")},
       }},
      {"checkpoint.safetensors", {{"step", nn::kCheckpointStepRule}}},
  };
  return fields;
}

const nn::FieldRule* run_field_rule(std::string_view file, std::string_view field) {
  for (const RunFileFields& f : run_file_fields()) {
    if (f.file != file) continue;
    for (const RunField& x : f.fields) {
      if (x.name == field) return &x.rule;
    }
  }
  return nullptr;
}

namespace {

// A line split at every comma, empty fields kept ("1,2,," is four fields).
std::vector<std::string_view> split_commas(std::string_view line) {
  std::vector<std::string_view> cells;
  size_t begin = 0;
  for (size_t comma; (comma = line.find(',', begin)) != std::string_view::npos; begin = comma + 1)
    cells.push_back(line.substr(begin, comma - begin));
  cells.push_back(line.substr(begin));
  return cells;
}

}  // namespace

size_t RunCsv::column(std::string_view name, std::string_view op) const {
  const auto it = std::find(columns.begin(), columns.end(), name);
  RG_CHECK(it != columns.end(), op, "'{}' has no column '{}' (written by an older ropegrad?)", path, name);
  return static_cast<size_t>(it - columns.begin());
}

RunCsv read_run_csv(const std::string& path, std::string_view op) {
  const std::string file = std::filesystem::path(path).filename().string();
  RunCsv csv;
  csv.path = path;
  std::error_code error;
  if (!std::filesystem::exists(path, error)) return csv;
  std::ifstream in(path, std::ios::binary);
  RG_CHECK(in.good() && !std::filesystem::is_directory(path, error), op, "cannot read '{}'", path);
  csv.exists = true;
  std::string line;
  if (!std::getline(in, line)) return csv;  // empty: a run killed as it created the file
  if (!line.empty() && line.back() == '\r') line.pop_back();
  std::vector<const nn::FieldRule*> rules;
  for (const std::string_view name : split_commas(line)) {
    const nn::FieldRule* rule = run_field_rule(file, name);
    RG_CHECK(rule != nullptr, op, "{}:1: the header has the column {}, which is no column of a run's {}", path,
             quote_bytes(name, 40), file);
    RG_CHECK(std::find(csv.columns.begin(), csv.columns.end(), name) == csv.columns.end(), op,
             "{}:1: the header has the column '{}' twice", path, name);
    csv.columns.emplace_back(name);
    rules.push_back(rule);
  }
  for (int64_t number = 2; std::getline(in, line); ++number) {
    // A last row without its newline was being written when the run was
    // killed (the rows are appended through a buffer that may reach the disk
    // mid-row): it is past the checkpoint, and left out unread.
    if (in.eof()) break;
    if (!line.empty() && line.back() == '\r') line.pop_back();
    if (line.empty()) continue;
    const std::vector<std::string_view> cells = split_commas(line);
    RG_CHECK(cells.size() == csv.columns.size(), op, "'{}' line {} has {} fields, the header {}", path, number,
             cells.size(), csv.columns.size());
    RunCsv::Row row{number, line, {}};
    for (size_t i = 0; i < cells.size(); ++i)
      row.values.push_back(nn::read_field(op, path, number, csv.columns[i], cells[i], *rules[i]));
    csv.rows.push_back(std::move(row));
  }
  return csv;
}

RunConfigFile parse_run_config(std::string_view text, const std::string& filename) {
  RunConfigFile r;
  std::set<std::string> seen;
  nn::TransformerConfig& m = r.model;
  int64_t number = 0;
  size_t start = 0;
  while (start < text.size()) {
    size_t end = text.find('\n', start);
    if (end == std::string_view::npos) end = text.size();
    std::string_view line = text.substr(start, end - start);
    start = end + 1;
    ++number;
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    if (line.empty()) continue;
    const size_t eq = line.find('=');
    RG_CHECK(eq != std::string_view::npos, "config", "{}:{}: expected key=value, got '{}'", filename, number,
             line.substr(0, 80));
    const std::string key(line.substr(0, eq));
    const std::string_view value = line.substr(eq + 1);
    const std::string where = fmt::format("config: {}:{}: {}", filename, number, key);
    RG_CHECK(seen.insert(key).second, "config", "{}:{}: '{}' appears twice", filename, number, key);
    // A numeric key is read by its rule (run_file_fields), whatever it is for.
    if (const nn::FieldRule* rule = run_field_rule("config.txt", key)) {
      const double v = nn::read_field("config", filename, number, key, value, *rule);
      const auto whole = [&] { return nn::read_whole_field("config", filename, number, key, value, *rule); };
      if (key == "vocab_size") m.vocab_size = whole();
      else if (key == "context_length") m.context_length = whole();
      else if (key == "d_model") m.d_model = whole();
      else if (key == "num_layers") m.num_layers = whole();
      else if (key == "num_heads") m.num_heads = whole();
      else if (key == "d_ff") m.d_ff = whole();
      else if (key == "rope_theta") m.rope_theta = v;
      else if (key == "tie_embeddings") m.tie_embeddings = whole() == 1;
      else r.settings[key] = value;  // a training setting, compared as written on resume
      continue;
    }
    if (key == "task") r.task = value;
    else if (key == "attention") {
      RG_CHECK(nn::find_attention_variant(value) != nullptr, where.c_str(), "'{}' is not {}", value,
               nn::attention_variant_list(", ", " or "));
      m.attention = nn::parse_attention_kind(std::string(value));
    } else if (key == "sigma") {
      RG_CHECK(value == "scalar" || value == "vector", where.c_str(), "'{}' is not scalar or vector", value);
      m.sigma = value == "vector" ? nn::SigmaMode::Vector : nn::SigmaMode::Scalar;
    } else if (key == "norm") {  // the ablation switches: optional, a file without them is pre/rope/swiglu
      RG_CHECK(value == "pre" || value == "post" || value == "none", where.c_str(), "'{}' is not pre, post or none",
               value);
      m.norm = nn::parse_norm_placement(std::string(value));
    } else if (key == "position") {
      RG_CHECK(value == "rope" || value == "none", where.c_str(), "'{}' is not rope or none", value);
      m.position = nn::parse_position_encoding(std::string(value));
    } else if (key == "ffn") {
      RG_CHECK(value == "swiglu" || value == "silu", where.c_str(), "'{}' is not swiglu or silu", value);
      m.ffn = nn::parse_feed_forward(std::string(value));
    } else if (kSettings.count(key) > 0) {
      r.settings[key] = value;
    } else {
      fail("config", "{}:{}: unknown key '{}'", filename, number, key.substr(0, 80));
    }
  }
  for (const char* key : {"task", "vocab_size", "context_length", "d_model", "num_layers", "num_heads", "d_ff",
                          "rope_theta", "attention", "sigma", "tie_embeddings"}) {
    RG_CHECK(seen.count(key) > 0, "config", "{}: no '{}' entry", filename, key);
  }
  RG_CHECK(m.d_model % m.num_heads == 0, "config", "{}: d_model {} is not a multiple of num_heads {}", filename,
           m.d_model, m.num_heads);
  check_fits_in_memory(training_bytes(m, 1), fmt::format("the model of {}", filename));
  return r;
}

RunConfigFile read_run_config(const std::string& path) {
  std::error_code error;
  RG_CHECK(std::filesystem::is_regular_file(path, error), "config", "cannot read '{}' (written by `ropegrad train --out DIR`)",
           path);
  const auto size = std::filesystem::file_size(path, error);
  RG_CHECK(!error && size < (1 << 20), "config", "'{}' is {} bytes: not a run's config.txt", path, size);
  return parse_run_config(io::read_file(path, "config"), path);
}

double training_bytes(const nn::TransformerConfig& m, int64_t batch_size) {
  const double d = static_cast<double>(m.d_model), v = static_cast<double>(m.vocab_size);
  const double t = static_cast<double>(m.context_length), l = static_cast<double>(m.num_layers);
  const double ff = static_cast<double>(nn::feed_forward_width(m.ffn, m.d_model, m.d_ff));
  const double matrices = m.ffn == nn::FeedForwardKind::SwiGLU ? 3 : 2;  // of the feed-forward, D x d_ff each
  const double params = 2 * v * d + l * (4 * d * d + matrices * d * ff + 2 * d) + d;
  // Per layer and token: about 12 D + 3 d_ff values kept for backward (2 d_ff
  // without SwiGLU's gate), plus the (H, T) attention probabilities; the logits (V) once.
  const double b = static_cast<double>(batch_size);
  const double activations =
      b * t * (l * (12 * d + matrices * ff + static_cast<double>(m.num_heads) * t) + 2 * v);
  return 4.0 * (4 * params + activations);  // float32: weights, grads, two moments
}

double physical_memory_bytes() {
  const long pages = sysconf(_SC_PHYS_PAGES), page = sysconf(_SC_PAGESIZE);
  return pages > 0 && page > 0 ? static_cast<double>(pages) * static_cast<double>(page) : 1e18;
}

void check_fits_in_memory(double bytes, const std::string& what) {
  const double have = physical_memory_bytes();
  RG_CHECK(bytes <= have, "memory", "{} needs about {:.3g} GB, more than this machine's {:.3g} GB", what, bytes / 1e9,
           have / 1e9);
}

void write_file_atomically(const std::string& path, const std::string& text) {
  nn::write_file_atomically(path, text, "write");
}

std::vector<std::string> read_metrics_rows(const std::string& path, int64_t first_step) {
  const RunCsv csv = read_run_csv(path, "resume");
  std::vector<std::string> kept;
  if (csv.rows.empty()) return kept;  // a run killed before its first row
  const size_t step = csv.column("step", "resume");
  for (const RunCsv::Row& row : csv.rows) {
    if (row.values[step] < static_cast<double>(first_step)) kept.push_back(row.text);
  }
  return kept;
}

double csv_number(const std::string& text) {
  const ScannedReal r = scan_real(text);
  return r.status == ScannedReal::Status::NotANumber ? NAN : r.value;
}

FileLock::FileLock(const std::string& lock_path, const std::string& op, const std::string& busy,
                   const std::string& hint, bool remove_when_done)
    : path_(lock_path), remove_(remove_when_done) {
  for (int attempt = 0;; ++attempt) {
    fd_ = ::open(path_.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
    RG_CHECK(fd_ >= 0, op, "cannot create '{}': {}", path_, std::strerror(errno));
    if (::flock(fd_, LOCK_EX | LOCK_NB) != 0) {
      char holder[64] = {0};
      const ssize_t n = ::pread(fd_, holder, sizeof holder - 1, 0);
      ::close(fd_);
      fd_ = -1;
      fail(op, "{} (pid {}); {}", busy, n > 0 ? std::string(holder, static_cast<size_t>(n)) : std::string("unknown"),
           hint);
    }
    // Locked, but is it still the file of that name? A holder that removes
    // its lock file on release may have done so between our open and flock.
    struct stat held {}, named {};
    if (::fstat(fd_, &held) == 0 && ::stat(path_.c_str(), &named) == 0 && held.st_dev == named.st_dev &&
        held.st_ino == named.st_ino)
      break;
    ::close(fd_);
    fd_ = -1;
    RG_CHECK(attempt < 100, op, "cannot lock '{}': it keeps being replaced", path_);
  }
  const std::string pid = std::to_string(getpid());
  if (::ftruncate(fd_, 0) == 0) (void)!::pwrite(fd_, pid.data(), pid.size(), 0);
}

FileLock::~FileLock() {
  if (fd_ < 0) return;
  if (remove_) ::unlink(path_.c_str());  // still locked: nobody else holds this name's lock
  ::close(fd_);                          // closing releases the flock
}

RunLock::RunLock(const std::string& dir)
    : lock_(dir + "/.lock", "train", fmt::format("'{}' is in use by another run", dir),
            "wait for it or choose another --out", /*remove_when_done=*/false) {
  nn::remove_stale_tmp_files(dir + "/config.txt");
  nn::remove_stale_tmp_files(dir + "/metrics.csv");
  nn::remove_stale_tmp_files(dir + "/time.csv");
  nn::remove_stale_tmp_files(dir + "/summary.json");
}

namespace {

struct Inode {
  dev_t device;
  ino_t inode;
  bool operator==(const Inode&) const = default;
};

// The path and each directory above it that exists, as (device, inode),
// the path first: symbolic links and ".." resolved first, so any spelling of
// one file gives the same chain.
std::vector<Inode> inode_chain(const std::string& path) {
  std::error_code error;
  std::filesystem::path p = std::filesystem::weakly_canonical(std::filesystem::absolute(path, error), error);
  if (error) p = std::filesystem::absolute(path, error).lexically_normal();
  std::vector<Inode> chain;
  for (;;) {
    struct stat st {};
    if (::stat(p.c_str(), &st) == 0) chain.push_back({st.st_dev, st.st_ino});
    if (!p.has_relative_path()) break;  // the root
    p = p.parent_path();
  }
  return chain;
}

bool same_file(const std::string& a, const std::string& b) {
  struct stat sa {}, sb {};
  return ::stat(a.c_str(), &sa) == 0 && ::stat(b.c_str(), &sb) == 0 && sa.st_dev == sb.st_dev &&
         sa.st_ino == sb.st_ino;
}

}  // namespace

void refuse_output_overlapping_inputs(const std::string& op, const std::string& flag, const std::string& out,
                                      const std::vector<std::string>& inputs) {
  for (const std::string& input : inputs) {
    RG_CHECK(input.empty() || !same_file(out, input), op,
             "{} '{}' is the input '{}' itself: writing it would destroy what is being read", flag, out, input);
  }
  const std::vector<Inode> out_chain = inode_chain(out);
  struct stat out_stat {};
  const bool out_exists = ::stat(out.c_str(), &out_stat) == 0;
  for (const std::string& input : inputs) {
    struct stat in_stat {};
    if (input.empty() || ::stat(input.c_str(), &in_stat) != 0) continue;
    const Inode in{in_stat.st_dev, in_stat.st_ino};
    const std::vector<Inode> in_chain = inode_chain(input);
    RG_CHECK(!(out_exists && std::find(in_chain.begin(), in_chain.end(), Inode{out_stat.st_dev, out_stat.st_ino}) !=
                                 in_chain.end()),
             op, "{} '{}' contains the input '{}': writing it could destroy what is being read", flag, out, input);
    RG_CHECK(std::find(out_chain.begin(), out_chain.end(), in) == out_chain.end(), op,
             "{} '{}' lies inside the input '{}': writing there could change what is being read", flag, out, input);
  }
}

void check_replaceable_directory(const std::string& op, const std::string& flag, const std::string& dir,
                                 const std::vector<std::string>& own_files, const std::string& writer) {
  struct stat st {};
  if (::lstat(dir.c_str(), &st) != 0) return;  // nothing there yet
  RG_CHECK(!S_ISLNK(st.st_mode), op, "{} '{}' is a symbolic link: give the directory it points to, or another name",
           flag, dir);
  RG_CHECK(S_ISDIR(st.st_mode), op, "{} '{}' is a file, not a directory: {} writes a directory; choose another {}",
           flag, dir, writer, flag);
  std::error_code error;
  std::vector<std::string> foreign, own;
  for (const auto& entry : std::filesystem::directory_iterator(dir, error)) {
    const std::string name = entry.path().filename().string();
    const bool is_own = std::find(own_files.begin(), own_files.end(), name) != own_files.end() &&
                        entry.is_regular_file(error) && !entry.is_symlink(error);
    (is_own ? own : foreign).push_back(name);
  }
  RG_CHECK(!error, op, "cannot read the directory {} '{}': {}", flag, dir, error.message());
  std::sort(foreign.begin(), foreign.end());
  RG_CHECK(foreign.empty(), op,
           "{} '{}' holds {} that {} did not write ({}{}): it replaces only a directory it wrote; choose another {} "
           "or move them away yourself",
           flag, dir, foreign.size() == 1 ? "a file" : fmt::format("{} files", foreign.size()), writer,
           quote_bytes(foreign[0]), foreign.size() > 1 ? ", ..." : "", flag);
  // Its own names alone are not enough: the signature file says this program wrote them.
  RG_CHECK(own.empty() || std::find(own.begin(), own.end(), own_files.front()) != own.end(), op,
           "{} '{}' holds {} but no {}: not a directory {} wrote, so it is not replaced; choose another {}", flag, dir,
           quote_bytes(own.front()), own_files.front(), writer, flag);
}

std::string OutputLock::checked(const std::string& path, const std::string& op, const std::vector<std::string>& inputs,
                                bool directory) {
  RG_CHECK(!path.empty(), op, "the output path is empty");
  struct stat out {};
  if (::stat(path.c_str(), &out) == 0)
    RG_CHECK(directory || !S_ISDIR(out.st_mode), op, "--out '{}' is a directory; give a file name", path);
  refuse_output_overlapping_inputs(op, "--out", path, inputs);
  const std::filesystem::path parent = std::filesystem::path(path).parent_path();
  std::error_code error;
  if (!parent.empty()) std::filesystem::create_directories(parent, error);
  RG_CHECK(!error, op, "cannot create the directory '{}' for --out '{}': {}", parent.string(), path, error.message());
  return path + ".lock";
}

OutputLock::OutputLock(const std::string& path, const std::string& op, const std::vector<std::string>& inputs,
                       bool directory)
    : lock_(checked(path, op, inputs, directory), op, fmt::format("'{}' is being written by another process", path),
            "wait for it or choose another --out", /*remove_when_done=*/true) {
  nn::remove_stale_tmp_files(path);
}

}  // namespace ropegrad::tasks
