// libFuzzer target: a run's dp.csv and dp_buckets.csv (the input split at its
// first 0x00), read as `ropegrad dp-simulate --run DIR` reads them
// (tasks::profile_from_run: every field by its rule in train/run_files.h),
// then simulated on 1 and 1024 ranks: a number that passed the rules must not
// overflow the simulation's arithmetic.
#include "fuzz/fuzz_util.h"
#include "train/dp_simulate.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string& dir = ropegrad::fuzz::input_dir("dp");
  const auto [steps, buckets] = ropegrad::fuzz::split_at_nul(data, size);
  ropegrad::fuzz::write_named(dir, "dp.csv", steps.first, steps.second);
  ropegrad::fuzz::write_named(dir, "dp_buckets.csv", buckets.first, buckets.second);
  try {
    const ropegrad::tasks::BackwardProfile profile = ropegrad::tasks::profile_from_run(dir);
    for (const int64_t ranks : {1, 1024}) (void)ropegrad::tasks::simulate_step(profile, {}, ranks);
  } catch (const ropegrad::Error&) {
  }
  return 0;
}
