// ropegrad::Error — the one exception type of the library.
//
// Every op validates its inputs and throws an Error whose message starts with
// the op's name and names the shapes, dtypes or values involved, e.g.
//   "matmul: shapes [2, 3] and [4, 5] cannot be multiplied (3 != 4)".
#pragma once

#include <stdexcept>
#include <string>

#include <fmt/format.h>
#include <fmt/ranges.h>

namespace ropegrad {

class Error : public std::runtime_error {
 public:
  explicit Error(const std::string& message) : std::runtime_error(message) {}
};

// Throws Error("<op>: <formatted message>").
template <typename... Args>
[[noreturn]] void fail(std::string_view op, fmt::format_string<Args...> format,
                       Args&&... args) {
  throw Error(fmt::format("{}: {}", op, fmt::format(format, std::forward<Args>(args)...)));
}

}  // namespace ropegrad

// RG_CHECK(condition, "op", "message {}", value): throw a ropegrad::Error when
// the condition is false. Used at the top of every op for input validation.
#define RG_CHECK(condition, op, ...)         \
  do {                                       \
    if (!(condition)) {                      \
      ::ropegrad::fail(op, __VA_ARGS__);     \
    }                                        \
  } while (false)
