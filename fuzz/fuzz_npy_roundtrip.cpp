// libFuzzer target: an .npy load -> save -> load round trip. Whatever
// load_npy accepts, save_npy must write and load_npy read back as the same
// tensor (shape, and every value; '<i4' and '<u2' come back as int64, as they
// were read). A ropegrad::Error from the first load is the expected answer to
// bad input; one from save_npy or the second load, a difference, a crash or a
// sanitizer report (issue 20: a shape whose byte stride overflows int64 was
// read, then save_npy overflowed) is a bug.
#include <cstdlib>
#include <cstring>

#include "fuzz/fuzz_util.h"
#include "io/npy.h"
#include "tensor/kernels.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace ropegrad;
  const std::string& path = fuzz::write_input(data, size, ".rt.npy");
  Tensor first;
  try {
    first = nn::load_npy(path);
  } catch (const Error&) {
    return 0;
  }
  nn::save_npy(path + ".out", first);  // throws (and so aborts the fuzzer) on a bug
  const Tensor second = nn::load_npy(path + ".out");
  if (second.dtype() != first.dtype() || second.shape() != first.shape()) std::abort();
  const size_t bytes = static_cast<size_t>(first.numel()) * element_size(first.dtype());
  if (bytes > 0 && std::memcmp(kernels::contiguous(first).raw_data(), second.raw_data(), bytes) != 0) std::abort();
  return 0;
}
