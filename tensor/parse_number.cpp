#include "tensor/parse_number.h"

#include <cctype>
#include <charconv>
#include <cstdlib>
#include <string>

namespace ropegrad {

namespace {

// from_chars takes no '+'; the other readers of these texts (Python, strtod) do.
std::string_view without_plus(std::string_view text) {
  if (text.size() > 1 && text[0] == '+' && (std::isdigit(static_cast<unsigned char>(text[1])) || text[1] == '.'))
    return text.substr(1);
  return text;
}

}  // namespace

ScannedReal scan_real(std::string_view text) {
  text = without_plus(text);
  ScannedReal out;
  const char* end = text.data() + text.size();
  const auto [ptr, ec] = std::from_chars(text.data(), end, out.value, std::chars_format::general);
  if (text.empty() || ptr != end) return ScannedReal{};
  if (ec == std::errc()) {
    out.status = ScannedReal::Status::Number;
  } else if (ec == std::errc::result_out_of_range) {
    // from_chars leaves the value alone here; strtod (on text from_chars took) says where it rounds.
    out.status = ScannedReal::Status::OutOfRange;
    out.value = std::strtod(std::string(text).c_str(), nullptr);
  } else {
    return ScannedReal{};
  }
  return out;
}

std::optional<double> parse_double(std::string_view text) {
  const ScannedReal r = scan_real(text);
  if (r.status != ScannedReal::Status::Number) return std::nullopt;
  return r.value;
}

std::optional<int64_t> parse_int64(std::string_view text, int base) {
  text = without_plus(text);
  const char* end = text.data() + text.size();
  int64_t n = 0;
  const auto [ptr, ec] = std::from_chars(text.data(), end, n, base);
  if (text.empty() || ptr != end || ec != std::errc()) return std::nullopt;
  return n;
}

}  // namespace ropegrad
