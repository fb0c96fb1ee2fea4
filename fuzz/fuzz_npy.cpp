// libFuzzer target: nn::load_npy on arbitrary bytes. A ropegrad::Error is the
// expected answer to bad input; a crash, a sanitizer report, a hang or an
// allocation the file cannot back is a bug.
#include "fuzz/fuzz_util.h"
#include "io/npy.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string& path = ropegrad::fuzz::write_input(data, size, ".npy");
  try {
    const ropegrad::Tensor t = ropegrad::nn::load_npy(path);
    ropegrad::nn::save_npy(path + ".out", t);  // what was read can be written back
  } catch (const ropegrad::Error&) {
  }
  return 0;
}
