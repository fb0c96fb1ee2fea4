// One rule for every number ropegrad reads back from the files it wrote: a
// run's config.txt, metrics.csv, time.csv, dp.csv and dp_buckets.csv, a sweep
// point's outcome.txt, a checkpoint's metadata. Each numeric field is declared
// once with its FieldRule (train/run_files.h run_file_fields(), io/checkpoint.h
// kCheckpointStepRule), and every reader goes through read_field: an edited or
// corrupt file is an Error naming the file, the line, the field, the text and
// the range, never a negative byte count, an inf time or an integer that
// overflowed on its way in.
//
//   dp-simulate: run/dp_buckets.csv:3: elements '9e18' is outside the range; expected a whole number of
//   elements in 0..1000000000000
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

namespace ropegrad::nn {

struct FieldRule {
  enum class Type { Whole, Real };
  Type type = Type::Real;
  std::string_view unit;  // what the number counts ("steps", "seconds", "bytes"), shown in errors; may be empty
  double min = 0, max = 0;     // inclusive
  bool empty_ok = false;       // an empty field is a value, NaN (metrics.csv's eval columns between evaluations)
  bool non_finite_ok = false;  // "nan", "inf" and "-inf" are values (the loss of an evaluation that diverged)

  static constexpr FieldRule whole(double min, double max, std::string_view unit = {}) {
    return {Type::Whole, unit, min, max, false, false};
  }
  static constexpr FieldRule real(double min, double max, std::string_view unit = {}) {
    return {Type::Real, unit, min, max, false, false};
  }
};

// The rule in words: "a whole number of steps in 1..1000000000000",
// "a finite number of seconds in 0..1e+06, or empty".
std::string describe_field_rule(const FieldRule& rule);

// The number in `text` under `rule`, or an Error from `op` naming `file`,
// `line` (1-based; 0 for a field without a line, such as a checkpoint's
// metadata), `field`, the text (quoted, cut at 40 bytes) and the rule:
// empty (unless empty_ok), not a number (junk, leading or trailing spaces,
// hexadecimal), not finite (unless non_finite_ok), outside [min, max], or
// not whole for a Whole field. Whole fields are integers of up to 2^63 - 1,
// read exactly.
double read_field(std::string_view op, std::string_view file, int64_t line, std::string_view field,
                  std::string_view text, const FieldRule& rule);

// A Whole field as an integer: read_field's checks first, the conversion only
// after the range check. `rule` must be Whole and within the int64 range.
int64_t read_whole_field(std::string_view op, std::string_view file, int64_t line, std::string_view field,
                         std::string_view text, const FieldRule& rule);

// Whether `value` satisfies `rule` (what a writer checks before it writes a
// number its own reader would refuse). NaN passes only with empty_ok or
// non_finite_ok, infinities only with non_finite_ok.
bool field_value_ok(double value, const FieldRule& rule);

}  // namespace ropegrad::nn
