// libFuzzer target: a run's metrics.csv and time.csv (the input split at its
// first 0x00), read as `train --resume` and `ropegrad sweep` read them:
// tasks::read_run_csv (every field by its rule in train/run_files.h), the rows
// a resume keeps (read_metrics_rows), and a sweep point's row of the table
// (read_sweep_row, beside a valid outcome.txt).
#include "fuzz/fuzz_util.h"
#include "train/run_files.h"
#include "train/sweep.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string& dir = ropegrad::fuzz::input_dir("metrics");
  static const bool outcome = [&] {
    const char text[] = "steps=4\ndiverged_at=0\ndiverged_because=\nmetric=accuracy\n";
    ropegrad::fuzz::write_named(dir, "outcome.txt", reinterpret_cast<const uint8_t*>(text), sizeof text - 1);
    return true;
  }();
  (void)outcome;
  const auto [metrics, times] = ropegrad::fuzz::split_at_nul(data, size);
  const std::string metrics_path = ropegrad::fuzz::write_named(dir, "metrics.csv", metrics.first, metrics.second);
  const std::string times_path = ropegrad::fuzz::write_named(dir, "time.csv", times.first, times.second);
  for (const std::string& path : {metrics_path, times_path}) {
    try {
      (void)ropegrad::tasks::read_run_csv(path, "fuzz");
      (void)ropegrad::tasks::read_metrics_rows(path, 3);
    } catch (const ropegrad::Error&) {
    }
  }
  try {
    ropegrad::tasks::SweepPoint point;
    point.index = 1;
    point.label = "lr=1e-3";
    point.dir = dir;
    (void)ropegrad::tasks::read_sweep_row(point);
  } catch (const ropegrad::Error&) {
  }
  return 0;
}
