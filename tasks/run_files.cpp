#include "tasks/run_files.h"

#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <charconv>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <functional>
#include <set>
#include <sstream>

#include "nn/tmp_file.h"

namespace ropegrad::tasks {

namespace {

// A whole token as an integer in [lo, hi], or an Error naming where it came from.
int64_t parse_int(std::string_view text, int64_t lo, int64_t hi, const std::string& where) {
  int64_t v = 0;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
  RG_CHECK(ec == std::errc() && end == text.data() + text.size(), where.c_str(), "'{}' is not an integer", text);
  RG_CHECK(v >= lo && v <= hi, where.c_str(), "{} is outside {}..{}", v, lo, hi);
  return v;
}

double parse_real(std::string_view text, double lo, double hi, const std::string& where) {
  const std::string s(text);
  char* end = nullptr;
  errno = 0;
  const double v = s.empty() ? NAN : std::strtod(s.c_str(), &end);
  RG_CHECK(!s.empty() && end == s.c_str() + s.size() && errno == 0 && std::isfinite(v), where.c_str(),
           "'{}' is not a finite number", text);
  RG_CHECK(v >= lo && v <= hi, where.c_str(), "{} is outside {}..{}", v, lo, hi);
  return v;
}

// The training settings config.txt records (and --resume compares).
const std::set<std::string> kSettings = {"steps",        "batch", "lr",   "min_lr", "warmup", "weight_decay",
                                         "beta1",        "beta2", "clip", "seed",   "text",   "vocab",
                                         "length",       "pairs", "queries", "concepts", "tokenizer", "data", "micro_batch",
                                         // what the run knows of its inputs (tasks/token_text_task.h)
                                         "tokenizer_checksum", "tokenizer_vocab", "data_bytes", "data_checksum",
                                         "valid_bytes", "valid_checksum"};

}  // namespace

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
    if (key == "task") r.task = value;
    else if (key == "vocab_size") m.vocab_size = parse_int(value, 1, int64_t{1} << 24, where);
    else if (key == "context_length") m.context_length = parse_int(value, 1, int64_t{1} << 20, where);
    else if (key == "d_model") m.d_model = parse_int(value, 1, 65536, where);
    else if (key == "num_layers") m.num_layers = parse_int(value, 1, 1024, where);
    else if (key == "num_heads") m.num_heads = parse_int(value, 1, 65536, where);
    else if (key == "d_ff") m.d_ff = parse_int(value, 0, int64_t{1} << 20, where);
    else if (key == "rope_theta") m.rope_theta = parse_real(value, 1e-300, 1e300, where);
    else if (key == "attention") {
      RG_CHECK(value == "standard" || value == "w2" || value == "triple", where.c_str(),
               "'{}' is not standard, w2 or triple", value);
      m.attention = nn::parse_attention_kind(std::string(value));
    } else if (key == "sigma") {
      RG_CHECK(value == "scalar" || value == "vector", where.c_str(), "'{}' is not scalar or vector", value);
      m.sigma = value == "vector" ? nn::SigmaMode::Vector : nn::SigmaMode::Scalar;
    } else if (key == "tie_embeddings") {
      RG_CHECK(value == "0" || value == "1", where.c_str(), "'{}' is not 0 or 1", value);
      m.tie_embeddings = value == "1";
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
  std::ifstream in(path, std::ios::binary);
  std::stringstream text;
  text << in.rdbuf();
  RG_CHECK(in.good() || in.eof(), "config", "reading '{}' failed", path);
  return parse_run_config(text.str(), path);
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
  const std::string tmp = nn::unique_tmp_path(path);
  const int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  RG_CHECK(fd >= 0, "write", "cannot write '{}': {}", tmp, std::strerror(errno));
  size_t done = 0;
  while (done < text.size()) {
    const ssize_t n = ::write(fd, text.data() + done, text.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      const std::string why = std::strerror(errno);
      ::close(fd);
      ::unlink(tmp.c_str());
      fail("write", "writing '{}' failed: {}", tmp, why);
    }
    done += static_cast<size_t>(n);
  }
  const bool synced = ::fsync(fd) == 0;
  ::close(fd);
  RG_CHECK(synced && std::rename(tmp.c_str(), path.c_str()) == 0, "write", "cannot replace '{}': {}", path,
           std::strerror(errno));
}

std::vector<std::string> read_metrics_rows(const std::string& path, int64_t first_step) {
  std::vector<std::string> kept;
  std::ifstream in(path);
  if (!in.good()) return kept;  // a run killed before its first row
  int64_t number = 0;
  for (std::string line; std::getline(in, line);) {
    ++number;
    if (line.empty() || line.rfind("step,", 0) == 0) continue;
    const std::string_view step(line.data(), std::min(line.find(','), line.size()));
    int64_t s = 0;
    const auto [end, ec] = std::from_chars(step.data(), step.data() + step.size(), s);
    RG_CHECK(ec == std::errc() && end == step.data() + step.size() && s >= 1, "resume",
             "{}:{}: the step '{}' is not a positive integer", path, number, step.substr(0, 40));
    if (s < first_step) kept.push_back(line);
  }
  return kept;
}

double csv_number(const std::string& row, int column) {
  size_t begin = 0;
  for (int i = 0; i < column; ++i) {
    begin = row.find(',', begin);
    if (begin == std::string::npos) return NAN;
    ++begin;
  }
  const std::string field = row.substr(begin, row.find(',', begin) - begin);
  char* end = nullptr;
  const double v = std::strtod(field.c_str(), &end);
  return !field.empty() && end == field.c_str() + field.size() ? v : NAN;
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

std::string OutputLock::checked(const std::string& path, const std::string& op, const std::vector<std::string>& inputs,
                                bool directory) {
  RG_CHECK(!path.empty(), op, "the output path is empty");
  struct stat out {};
  if (::stat(path.c_str(), &out) == 0) {
    RG_CHECK(directory || !S_ISDIR(out.st_mode), op, "--out '{}' is a directory; give a file name", path);
    for (const std::string& input : inputs) {
      struct stat in {};
      RG_CHECK(!(::stat(input.c_str(), &in) == 0 && in.st_dev == out.st_dev && in.st_ino == out.st_ino), op,
               "--out '{}' is the input '{}' itself: writing it would destroy what is being read", path, input);
    }
  }
  return path + ".lock";
}

OutputLock::OutputLock(const std::string& path, const std::string& op, const std::vector<std::string>& inputs,
                       bool directory)
    : lock_(checked(path, op, inputs, directory), op, fmt::format("'{}' is being written by another process", path),
            "wait for it or choose another --out", /*remove_when_done=*/true) {
  nn::remove_stale_tmp_files(path);
}

}  // namespace ropegrad::tasks
