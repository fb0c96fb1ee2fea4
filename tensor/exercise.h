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

}  // namespace ropegrad
