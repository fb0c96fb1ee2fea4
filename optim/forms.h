// optim/'s kernels that have a fast form (tensor/fast_forms.def): AdamW's
// update in its plain form (its exercise region, optim/optim.cpp, namespace
// plain), its fast form (optim/fast/, namespace fast), and the one place that
// chooses between them (tensor/fast_forms.h). Internal to optim/.
#pragma once

#include <cstdint>

#include "optim/optim.h"
#include "tensor/fast_forms.h"
#include "fast_forms_present.h"  // ROPEGRAD_HAS_<Name>, generated from tensor/fast_forms.def
#if ROPEGRAD_HAS_AdamW
#include "optim/fast/adamw_fast.h"
#endif

namespace ropegrad::nn {

namespace plain {
template <typename T>
void adamw_update(T* p, const T* g, T* m, T* v, int64_t n, const AdamStepScalars<T>& c);
}  // namespace plain

// The fast form when its file is here (ROPEGRAD_HAS_AdamW) and the switch is
// on (counted), else the plain form.
template <typename T>
void adamw_update(T* p, const T* g, T* m, T* v, int64_t n, const AdamStepScalars<T>& c) {
#if ROPEGRAD_HAS_AdamW
  if (fast_forms_enabled()) {
    note_fast_form(FastForm::AdamW);
    return fast::adamw_update<T>(p, g, m, v, n, c);
  }
#endif
  plain::adamw_update<T>(p, g, m, v, n, c);
}

}  // namespace ropegrad::nn
