// Course mode: what an exercise's stub calls until the learner writes it.
//
// The reference solution of every exercise sits in the ordinary sources
// between two marker comments,
//     // BEGIN EXERCISE exNN-name
//     ...the reference code...
//     // END EXERCISE exNN-name
// and `scripts/dev.sh course new DIR` copies the repository with each region
// replaced by a call of exercise_not_implemented (course/exercises.txt gives
// the title and chapter). The library, the CLI and the tests never call it:
// only a learner's workspace does, until the exercise is written.
#pragma once

#include <atomic>
#include <string>

#include "tensor/error.h"

namespace ropegrad {

// The error a stub throws. Its message starts with "not implemented: <id>",
// which course/check_main.cpp reads to tell "not written yet" from "blocked
// by an earlier exercise".
class NotImplemented : public Error {
 public:
  NotImplemented(const std::string& id, const std::string& title, const std::string& chapter)
      : Error("not implemented: " + id + " (" + title + "), see " + chapter), id_(id) {}
  const std::string& id() const { return id_; }

 private:
  std::string id_;
};

[[noreturn]] inline void exercise_not_implemented(const char* id, const char* title, const char* chapter) {
  throw NotImplemented(id, title, chapter);
}

// A few kernels have a performance form beside the simple one a learner
// writes, taken for float32 training data (RoPE's one-pass rotation, the
// SwiGLU gate's one-pass backward; each tested equal to the simple form bit
// for bit). The course's checks (course/check_main.cpp) switch them off, so
// that every check, float32 ones included, runs the code the learner wrote.
inline std::atomic<bool>& reference_forms_only_flag() {
  static std::atomic<bool> flag{false};
  return flag;
}
inline void set_reference_forms_only(bool on) { reference_forms_only_flag().store(on); }
inline bool reference_forms_only() { return reference_forms_only_flag().load(std::memory_order_relaxed); }

}  // namespace ropegrad
