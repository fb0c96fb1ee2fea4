// The files of a training run's directory, read and written so that a bad
// file gives an error naming the file, the line and the key, and a run that
// is killed at any moment loses nothing up to its checkpoint.
//
//   config.txt     key=value lines: the model (what `generate` rebuilds) and the
//                  training settings (what `--resume` must match)
//   metrics.csv    one row per step; rewritten atomically on resume
//   time.csv       the training seconds after each step (metrics.csv stays reproducible)
//   dp.csv, dp_buckets.csv  with --micro-batch: each step's time split, each bucket's ready time
//   .lock          held (flock) while a run writes the directory
//
// Every number read back from these files (and from a sweep point's
// outcome.txt and the checkpoint's metadata) is checked by the one rule
// declared for its field in run_file_fields() (io/field_rule.h): an edited or
// corrupt file is an Error naming the file, the line, the field and the range.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "io/field_rule.h"
#include "nn/transformer.h"

namespace ropegrad::tasks {

// ---- the numbers of a run's files ---------------------------------------------------------------

struct RunField {
  std::string_view name;  // the column (CSV files) or the key (config.txt, outcome.txt, the checkpoint's metadata)
  nn::FieldRule rule;
};
struct RunFileFields {
  std::string_view file;  // its name in the run's directory: "metrics.csv", "config.txt", ...
  std::vector<RunField> fields;
};

// Every file of a run's directory that ropegrad reads back, and the rule of
// each of its numeric fields: config.txt's numeric keys, every column of
// metrics.csv, time.csv, dp.csv and dp_buckets.csv, a sweep point's
// outcome.txt, the checkpoint's "step" (nn::kCheckpointStepRule). The readers
// take each field's rule from here, so a field declared here is checked
// wherever it is read, and the tests walk this list with hostile values.
const std::vector<RunFileFields>& run_file_fields();

// The rule of `field` in `file`; nullptr when it is not a numeric field of it.
const nn::FieldRule* run_field_rule(std::string_view file, std::string_view field);

// A CSV file of a run (metrics.csv, time.csv, dp.csv, dp_buckets.csv: the
// file's name picks its fields), read whole and checked: the first line is
// the header, each name a column declared for the file (a file of an older
// ropegrad may lack some); each row has one field per column, each read by
// its column's rule. Errors from `op` name the file and the line. A file
// that does not exist has no rows (`exists` false: a run killed before it
// wrote it); an empty one too. A last row without its newline is one a run
// was appending when it was killed (past its checkpoint): it is left out.
struct RunCsv {
  struct Row {
    int64_t line = 0;           // 1-based, in the file
    std::string text;           // the row as written
    std::vector<double> values; // one per column, checked (NaN: an empty field its rule allows)
  };
  std::string path;
  bool exists = false;
  std::vector<std::string> columns;
  std::vector<Row> rows;
  // The index of column `name`: an Error from `op` naming the file when it has none.
  size_t column(std::string_view name, std::string_view op) const;
};
RunCsv read_run_csv(const std::string& path, std::string_view op);

// config.txt as read: the model, the task, and every training setting that
// was written (name -> text, e.g. "lr" -> "0.003"), for comparison on resume.
struct RunConfigFile {
  std::string task;
  nn::TransformerConfig model;
  std::map<std::string, std::string> settings;
};

// Parses config.txt's text. The ablation keys norm, position and ffn may be
// missing (runs from before them): pre, rope and swiglu. Unknown keys, an
// unknown value of a choice (attention=w9, norm=sideways), a missing model
// key, a number its rule in run_file_fields() refuses (d_model in 1..65536,
// tokenizer_vocab=abc, ...), and a model too large for this machine are
// Errors naming `filename`, the line, the key and the value. Used by
// `generate`, `--resume` and the config fuzzer.
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

// The rows of a run's CSV file (read_run_csv: every field checked) for steps
// below `first_step`, as written (the header left out): what a resumed run keeps.
std::vector<std::string> read_metrics_rows(const std::string& path, int64_t first_step);

// A number formatted for a CSV file, read back: what a resumed run will read
// (step 1's loss, rounded as metrics.csv holds it). NaN when not a number.
double csv_number(const std::string& text);

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
//     removed (io/tmp_file.h), so a killed run leaves none behind the next
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
