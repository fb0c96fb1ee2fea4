// The course's exercises, as course/exercises.txt lists them, and where their
// regions sit in the sources. Read at run time from the source tree the
// checks were built from (a learner's workspace, or the repository itself),
// by the rule of scripts/course_registry.py, the course's one reader:
// scripts/test_course_registry.py checks that both read every field and the
// region files of every exercise alike (course-check --registry-table).
#pragma once

#include <string>
#include <vector>

namespace ropegrad::course {

struct Exercise {
  std::string id;       // "ex07-rmsnorm"
  std::string title;    // "RMSNorm forward"
  std::string chapter;  // "docs/07-rmsnorm.md"
  std::string hint;     // one or two sentences
};

// Every exercise, in the book's order.
const std::vector<Exercise>& exercises();

// The exercise with this id, or nullptr.
const Exercise* find(const std::string& id);

// "ex07-rmsnorm" <-> "ex07_rmsnorm" (the GoogleTest suite of its checks).
std::string id_to_suite(std::string id);
std::string suite_to_id(std::string suite);

// The source files (relative to the tree) holding a region of this exercise.
std::vector<std::string> files_of(const std::string& id);

// True while a region of this exercise is still the stub that
// `course new` wrote (the learner has not started it).
bool is_stub(const std::string& id);

}  // namespace ropegrad::course
