// libFuzzer target: nn::load_safetensors on arbitrary bytes (header JSON,
// offsets, dtypes, checksums). A ropegrad::Error is the expected answer.
#include "fuzz/fuzz_util.h"
#include "io/safetensors.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string& path = ropegrad::fuzz::write_input(data, size, ".safetensors");
  try {
    (void)ropegrad::nn::load_safetensors(path);
  } catch (const ropegrad::Error&) {
  }
  return 0;
}
