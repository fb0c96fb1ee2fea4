#include "io/field_rule.h"

#include <cmath>
#include <limits>

#include "tensor/parse_number.h"
#include "tensor/error.h"
#include "tensor/printable.h"

namespace ropegrad::nn {

namespace {

constexpr double kInt64Limit = 9223372036854775808.0;  // 2^63: the first double past int64

// A bound as the reader would type it: whole bounds in full ("1000000000000"), real ones in %g.
std::string bound_text(double v, FieldRule::Type type) {
  if (type == FieldRule::Type::Real) return fmt::format("{:g}", v);
  if (v >= kInt64Limit) return std::to_string(std::numeric_limits<int64_t>::max());
  return fmt::format("{:.0f}", v);
}

struct Parsed {
  double value = NAN;
  bool exact = false;  // a Whole field read as an integer literal: `integer` holds it exactly
  int64_t integer = 0;
};

[[noreturn]] void refuse(std::string_view op, std::string_view file, int64_t line, std::string_view field,
                         std::string_view text, const FieldRule& rule, std::string_view problem) {
  const std::string where = line > 0 ? fmt::format("{}:{}", file, line) : std::string(file);
  if (text.empty()) fail(op, "{}: {} is empty; expected {}", where, field, describe_field_rule(rule));
  fail(op, "{}: {} {} {}; expected {}", where, field, quote_bytes(text, 40), problem, describe_field_rule(rule));
}

Parsed parse(std::string_view op, std::string_view file, int64_t line, std::string_view field, std::string_view text,
             const FieldRule& rule) {
  const auto bad = [&](std::string_view problem) { refuse(op, file, line, field, text, rule, problem); };
  Parsed p;
  if (text.empty()) {
    if (!rule.empty_ok) bad("");
    return p;  // NaN
  }
  // Integer literals exactly (a seed may be any int64); everything else as a real.
  if (rule.type == FieldRule::Type::Whole) {
    if (const std::optional<int64_t> n = parse_int64(text)) {
      p.integer = *n;
      p.exact = true;
      p.value = static_cast<double>(p.integer);
    }
  }
  if (!p.exact) {
    const ScannedReal r = scan_real(text);
    if (r.status == ScannedReal::Status::NotANumber) bad("is not a number");
    p.value = r.value;
    const bool literal_non_finite = text.find_first_of("0123456789") == std::string_view::npos;  // "nan", "inf", "-inf"
    if (!std::isfinite(p.value) && literal_non_finite) {
      if (!rule.non_finite_ok) bad("is not a finite number");
      return p;
    }
    // An overflow ("1e999") reads as infinity: it is outside any range.
    if (std::isinf(p.value)) bad("is outside the range");
  }
  // long double holds every int64 exactly: the comparison does not round an integer onto a bound.
  const long double v = p.exact ? static_cast<long double>(p.integer) : static_cast<long double>(p.value);
  if (v < static_cast<long double>(rule.min) || v > static_cast<long double>(rule.max)) bad("is outside the range");
  if (rule.type == FieldRule::Type::Whole && !p.exact) {
    if (p.value != std::floor(p.value)) bad("is not a whole number");
    if (p.value >= kInt64Limit || p.value < -kInt64Limit) bad("is outside the range");
    p.integer = static_cast<int64_t>(p.value);  // within [min, max], so within int64
    p.exact = true;
  }
  return p;
}

}  // namespace

std::string describe_field_rule(const FieldRule& rule) {
  const bool whole = rule.type == FieldRule::Type::Whole;
  std::string text = whole ? "a whole number" : rule.non_finite_ok ? "a number" : "a finite number";
  if (!rule.unit.empty()) text += fmt::format(" of {}", rule.unit);
  text += fmt::format(" in {}..{}", bound_text(rule.min, rule.type), bound_text(rule.max, rule.type));
  if (rule.non_finite_ok) text += ", nan or inf";
  if (rule.empty_ok) text += ", or empty";
  return text;
}

double read_field(std::string_view op, std::string_view file, int64_t line, std::string_view field,
                  std::string_view text, const FieldRule& rule) {
  return parse(op, file, line, field, text, rule).value;
}

int64_t read_whole_field(std::string_view op, std::string_view file, int64_t line, std::string_view field,
                         std::string_view text, const FieldRule& rule) {
  RG_CHECK(rule.type == FieldRule::Type::Whole && !rule.empty_ok && !rule.non_finite_ok && rule.min >= -kInt64Limit &&
               rule.max <= kInt64Limit,
           op, "{}: {} is read as an integer under a rule that allows more ({})", file, field,
           describe_field_rule(rule));
  return parse(op, file, line, field, text, rule).integer;
}

bool field_value_ok(double value, const FieldRule& rule) {
  if (std::isnan(value)) return rule.empty_ok || rule.non_finite_ok;
  if (std::isinf(value)) return rule.non_finite_ok;
  if (rule.type == FieldRule::Type::Whole &&
      (value != std::floor(value) || value >= kInt64Limit || value < -kInt64Limit))
    return false;
  return value >= rule.min && value <= rule.max;
}

}  // namespace ropegrad::nn
