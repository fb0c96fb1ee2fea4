#include "optim/schedule.h"
#include "tensor/exercise.h"

#include <cmath>
#include <numbers>

#include "tensor/error.h"

namespace ropegrad::nn {

double cosine_lr(int64_t t, double lr_max, double lr_min, int64_t warmup_iters,
                 int64_t cosine_cycle_iters) {
  RG_CHECK(t >= 0, "cosine_lr", "iteration t must be >= 0, got {}", t);
  RG_CHECK(std::isfinite(lr_max) && lr_max >= 0, "cosine_lr",
           "lr_max must be finite and >= 0, got {}", lr_max);
  RG_CHECK(std::isfinite(lr_min) && lr_min >= 0 && lr_min <= lr_max, "cosine_lr",
           "lr_min must be in [0, lr_max = {}], got {}", lr_max, lr_min);
  RG_CHECK(warmup_iters >= 0, "cosine_lr", "warmup_iters must be >= 0, got {}", warmup_iters);
  RG_CHECK(cosine_cycle_iters >= warmup_iters, "cosine_lr",
           "cosine_cycle_iters ({}) must be >= warmup_iters ({})", cosine_cycle_iters,
           warmup_iters);
  // BEGIN EXERCISE ex13-cosine-schedule
  const auto td = static_cast<double>(t);
  const auto tw = static_cast<double>(warmup_iters);
  const auto tc = static_cast<double>(cosine_cycle_iters);
  if (t < warmup_iters) return td / tw * lr_max;
  if (t > cosine_cycle_iters) return lr_min;
  if (warmup_iters == cosine_cycle_iters) return lr_max;  // cos(0): avoids 0 / 0
  return lr_min +
         0.5 * (1 + std::cos(std::numbers::pi * (td - tw) / (tc - tw))) * (lr_max - lr_min);
  // END EXERCISE ex13-cosine-schedule
}

}  // namespace ropegrad::nn
