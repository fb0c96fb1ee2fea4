// ex13-cosine-schedule: nn::cosine_lr (optim/schedule.cpp).
#include "course/checks/check_util.h"
#include "optim/schedule.h"

namespace ropegrad::course {
namespace {

// PyTorch-free reference values of the course (lr_max 1, lr_min 0.1, warmup 7, cycle 21),
// from tests/fixtures/optim/cosine.npy: rows (t, lr_max, lr_min, warmup, cycle, lr).
void expect_rows(int64_t first, int64_t last) {
  const Tensor rows = load_fixture("optim/cosine");
  for (int64_t i = 0; i < rows.size(0); ++i) {
    const auto t = static_cast<int64_t>(rows.at<double>({i, 0}));
    const auto warmup = static_cast<int64_t>(rows.at<double>({i, 3}));
    const auto cycle = static_cast<int64_t>(rows.at<double>({i, 4}));
    // first/last select the phase: 0 warmup, 1 cosine, 2 after the cycle
    const int phase = t < warmup ? 0 : (t <= cycle ? 1 : 2);
    if (phase < first || phase > last) continue;
    const double got = nn::cosine_lr(t, rows.at<double>({i, 1}), rows.at<double>({i, 2}), warmup, cycle);
    const double want = rows.at<double>({i, 5});
    if (std::abs(got - want) > 1e-12 * std::max(1.0, std::abs(want))) {
      ADD_FAILURE() << "t " << t << " (warmup " << warmup << ", cycle " << cycle << "): lr " << got
                    << ", expected " << want;
      return;
    }
  }
}

TEST(ex13_cosine_schedule, warmup_rises_linearly_from_zero) { expect_rows(0, 0); }
TEST(ex13_cosine_schedule, cosine_phase_ends_exactly_at_lr_min) { expect_rows(1, 1); }
TEST(ex13_cosine_schedule, after_the_cycle_stays_at_lr_min) { expect_rows(2, 2); }

TEST(ex13_cosine_schedule, the_course_reference_values) {
  const double want[] = {0, 0.14285714285714285, 0.2857142857142857, 0.42857142857142855, 0.5714285714285714,
                         0.7142857142857143, 0.8571428571428571, 1.0, 0.9887175604818206, 0.9554359905560885,
                         0.9018241671106134, 0.8305704108364301, 0.7452476826029011, 0.6501344202803414, 0.55,
                         0.44986557971965857, 0.3547523173970989, 0.26942958916356996, 0.19817583288938662,
                         0.14456400944391146, 0.11128243951817937, 0.1, 0.1};
  for (int64_t t = 0; t < 23; ++t) {
    const double got = nn::cosine_lr(t, 1.0, 0.1, 7, 21);
    if (std::abs(got - want[t]) > 1e-12) {
      ADD_FAILURE() << "t " << t << ": lr " << got << ", expected " << want[t];
      return;
    }
  }
}

}  // namespace
}  // namespace ropegrad::course
