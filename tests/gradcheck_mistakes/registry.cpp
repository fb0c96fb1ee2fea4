#include "case.h"

namespace mistakes {
// Filled by each case file's static Register before main runs; read by the
// test only after that (GoogleTest evaluates the parameter range lazily).
std::vector<Case>& registry() {
  static std::vector<Case> cases;
  return cases;
}
}  // namespace mistakes
