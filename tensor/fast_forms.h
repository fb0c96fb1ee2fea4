// The one switch for every fast form.
//
// Each kernel a learner writes in the course (an exercise region: the plain
// form the chapter derives, plain loops or tensor ops) may have a fast form
// beside it: SIMD, one-pass fusion, a tiled kernel. A fast form lives in its
// own file under tensor/fast/ or nn/fast/, and is chosen at one dispatch point
// outside every region:
//
//     #if __has_include("nn/fast/rmsnorm_fast.h")
//       if (fast_forms_enabled()) { note_fast_form(FastForm::RmsNorm); return fast::...; }
//     #endif
//       ...the plain form...
//
// so it runs only when its file is there and the switch is on. A learner's
// workspace (scripts/dev.sh course new) has no fast form of any exercise it
// stubs: their files are removed with the solution, and the learner's own
// code is what trains. In the reference tree the switch is on unless
//   * ROPEGRAD_FAST_FORMS=0 (or "off") is set in the environment, or
//   * set_fast_forms(false) was called (the course's checks do: they test the
//     plain form the learner writes).
// Every fast form has a test that it equals the plain form
// (tests/test_fast_forms.cpp): bit for bit where it claims so, else within
// the float32 error bound. docs/appendix-c-performance.md lists them.
#pragma once

#include <array>
#include <atomic>
#include <cstdint>

namespace ropegrad {

// Every fast form, for the counters below and the list in appendix C.
enum class FastForm : int {
  Softmax,          // tensor/fast/softmax_fast.h: SIMD rows, vectorisable exp and max
  RmsNorm,          // nn/fast/rmsnorm_fast.h: rows over the pool, sums in four lanes, AVX2
  SwigluGate,       // nn/fast/swiglu_gate_fast.h: vectorisable sigmoid, both gradients in one pass
  RopeRotation,     // nn/fast/rope_rotate_fast.h: the rotation in one pass over memory
  AttentionScores,  // nn/fast/attention_scores_fast.h: fused score -> softmax rows, AVX2
  TripleBackward,   // nn/fast/triple_scores_fast.h: the triple backward in two vectorised passes
  TiledAttention,   // nn/fast/attention_tiled.h: online softmax over key tiles
  CrossEntropy,     // nn/fast/cross_entropy_fast.h: the backward's rows over the pool, AVX2
  AdamW,            // nn/fast/adamw_fast.h: the update over the pool, AVX2
  Count
};

// Whether fast forms may run: set_fast_forms(), else ROPEGRAD_FAST_FORMS
// ("1"/"on" or "0"/"off"; anything else is an error naming the variable),
// else on.
bool fast_forms_enabled();
void set_fast_forms(bool on);

// How many times each fast form ran since the program started: tests use it
// to see which form a call took (one relaxed increment per call, not per
// element).
void note_fast_form(FastForm form);
int64_t fast_form_runs(FastForm form);
const char* fast_form_name(FastForm form);

// Restores the switch on scope exit (tests, the course's checks).
class FastFormsScope {
 public:
  explicit FastFormsScope(bool on) : before_(fast_forms_enabled()) { set_fast_forms(on); }
  ~FastFormsScope() { set_fast_forms(before_); }
  FastFormsScope(const FastFormsScope&) = delete;
  FastFormsScope& operator=(const FastFormsScope&) = delete;

 private:
  bool before_;
};

}  // namespace ropegrad
