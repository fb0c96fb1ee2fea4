// libFuzzer target: a run's config.txt (tasks::parse_run_config), read from
// memory: every value is checked whole and against its range.
#include <string_view>

#include "train/run_files.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  try {
    (void)ropegrad::tasks::parse_run_config(std::string_view(reinterpret_cast<const char*>(data), size), "fuzz");
  } catch (const ropegrad::Error&) {
  }
  return 0;
}
