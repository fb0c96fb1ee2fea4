// Learning-rate schedules (CS336 assignment 1).
#pragma once

#include <cstdint>

namespace ropegrad::nn {

// Cosine schedule with linear warmup (CS336's get_lr_cosine_schedule), for
// iteration t = 0, 1, ...:
//   t <  Tw:        t / Tw * lr_max                                  (warmup)
//   Tw <= t <= Tc:  lr_min + 1/2 (1 + cos(pi (t - Tw) / (Tc - Tw))) (lr_max - lr_min)
//   t >  Tc:        lr_min
// with Tw = warmup_iters, Tc = cosine_cycle_iters. Requires t >= 0,
// 0 <= lr_min <= lr_max and 0 <= Tw <= Tc; when Tw == Tc the cosine part is
// the single point t == Tw, where it is lr_max.
double cosine_lr(int64_t t, double lr_max, double lr_min, int64_t warmup_iters,
                 int64_t cosine_cycle_iters);

}  // namespace ropegrad::nn
