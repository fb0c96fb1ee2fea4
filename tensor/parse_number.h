// The one reader of numbers written as text (flags, CSV and config fields,
// file names, JSON integers). Each reads the whole text or nothing: no
// leading or trailing spaces, no hexadecimal reals, no locale; a '+' may lead
// a digit or a point.
#pragma once

#include <cstdint>
#include <optional>
#include <string_view>

namespace ropegrad {

struct ScannedReal {
  enum class Status { Number, OutOfRange, NotANumber };
  Status status = Status::NotANumber;
  // Number: the value. OutOfRange: what the text rounds to outside double's
  // range (+-inf for an overflow such as "1e999", 0 or a subnormal for an
  // underflow such as "1e-400"). NotANumber: 0.
  double value = 0;
};

// A decimal real ("1.5", "-2e-3", ".5", "+7"), or "inf", "infinity", "nan".
ScannedReal scan_real(std::string_view text);

// scan_real's value when it is a Number, else nullopt.
std::optional<double> parse_double(std::string_view text);

// A whole number in `base` (2..36) within int64: "-12", "+7", "ff" in base 16.
// nullopt for anything else (an empty text, "1.0", "1e3", an overflow).
std::optional<int64_t> parse_int64(std::string_view text, int base = 10);

}  // namespace ropegrad
