// The files of a training run's directory, read and written so that a bad
// file gives an error naming the file, the line and the key, and a run that
// is killed at any moment loses nothing up to its checkpoint.
//
//   config.txt     key=value lines: the model (what `generate` rebuilds) and the
//                  training settings (what `--resume` must match)
//   metrics.csv    one row per step; rewritten atomically on resume
//   time.csv       the training seconds after each step (metrics.csv stays reproducible)
//   .lock          held (flock) while a run writes the directory
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "nn/transformer.h"

namespace ropegrad::tasks {

// config.txt as read: the model, the task, and every training setting that
// was written (name -> text, e.g. "lr" -> "0.003"), for comparison on resume.
struct RunConfigFile {
  std::string task;
  nn::TransformerConfig model;
  std::map<std::string, std::string> settings;
};

// Parses config.txt's text. The ablation keys norm, position and ffn may be
// missing (runs from before them): pre, rope and swiglu. Unknown keys, an
// unknown value of a choice (attention=w9, norm=sideways), a missing model key, a number that
// is not a number or lies outside its range (d_model in 1..65536, ...), and a
// model too large for this machine are Errors naming `filename`, the line and
// the key. Used by `generate`, `--resume` and the config fuzzer.
RunConfigFile parse_run_config(std::string_view text, const std::string& filename);
RunConfigFile read_run_config(const std::string& path);

// Bytes a model of this shape needs to train with batches of `batch_size`
// sequences: parameters, gradients, AdamW's two moments and the activations
// kept for backward (an estimate within a small factor).
double training_bytes(const nn::TransformerConfig& model, int64_t batch_size);

// An Error naming `what` (a flag or a file) and the gigabytes asked for when
// `bytes` exceeds the machine's physical memory.
void check_fits_in_memory(double bytes, const std::string& what);

// Physical memory of this machine, in bytes.
double physical_memory_bytes();

// Writes `text` to path through PATH.<pid>.<random>.tmp, fsync, rename: a reader
// (or a run resumed after a kill) sees the old file or the new one, never half.
void write_file_atomically(const std::string& path, const std::string& text);

// The rows of metrics.csv for steps below `first_step` (the header skipped).
// A row whose step is not a number is an Error naming the file and the line.
std::vector<std::string> read_metrics_rows(const std::string& path, int64_t first_step);

// Field `column` (0-based) of a metrics.csv or time.csv row as a number; NaN
// when the field is empty, absent or not a number.
double csv_number(const std::string& row, int column);

// An exclusive lock on the file `lock_path` for the lifetime of the object,
// the holder's pid written in it. A second holder fails at once (op: "<busy>
// (pid N); <hint>"). The lock is the kernel's (flock): a killed holder
// releases it. With remove_when_done the lock file is removed on release;
// a locker that finds it was removed while it waited tries again on the new
// file, so two holders never lock two different files of one name.
class FileLock {
 public:
  FileLock(const std::string& lock_path, const std::string& op, const std::string& busy, const std::string& hint,
           bool remove_when_done);
  ~FileLock();
  FileLock(const FileLock&) = delete;
  FileLock& operator=(const FileLock&) = delete;

 private:
  std::string path_;
  int fd_ = -1;
  bool remove_ = false;
};

// An exclusive lock on DIR/.lock for the lifetime of the object: a second run
// into the same directory fails at once, naming the process that holds it.
class RunLock {
 public:
  explicit RunLock(const std::string& dir);

 private:
  FileLock lock_;
};

// An output may not be, contain or lie inside an input: refused when `out`
// is one of `inputs`, or a directory above one, or lies in a directory that is
// one (device and inode of each existing path and its parents, so another
// spelling or a link is caught). The Error from `op` names `flag`, the
// output and the input. Empty inputs are skipped.
void refuse_output_overlapping_inputs(const std::string& op, const std::string& flag, const std::string& out,
                                      const std::vector<std::string>& inputs);

// A directory that a command replaces whole (tokenize train's tokenizer) may
// hold only what that command wrote there: absent, empty, or holding only
// regular files named in `own_files`, the first of which (its signature,
// e.g. special_tokens.txt, which only `writer` writes) among them. Anything
// else (a file, a link, a directory with other files) is an Error from `op`
// naming `flag`, the path and what is there: it is never deleted.
void check_replaceable_directory(const std::string& op, const std::string& flag, const std::string& dir,
                                 const std::vector<std::string>& own_files, const std::string& writer);

// One writer per output file, the guarantee `train` has for --out, for the
// files `tokenize train|encode|decode` write (issue 20):
//   - PATH.lock is held (a FileLock, removed when done): a second writer of
//     PATH is refused at once, naming the holder's pid;
//   - PATH may not be, contain or lie inside any of `inputs`
//     (refuse_output_overlapping_inputs), nor be a directory unless
//     `directory` is set; its missing parent directories are created, as
//     train creates --out;
//   - the PATH.<pid>.<random>.tmp files of writers that are gone (killed) are
//     removed (nn/tmp_file.h), so a killed run leaves none behind the next
//     time the same command runs.
class OutputLock {
 public:
  OutputLock(const std::string& path, const std::string& op, const std::vector<std::string>& inputs = {},
             bool directory = false);

 private:
  static std::string checked(const std::string& path, const std::string& op, const std::vector<std::string>& inputs,
                             bool directory);
  FileLock lock_;
};

}  // namespace ropegrad::tasks
