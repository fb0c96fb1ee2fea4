// docs/course.md: the message a learner's workspace prints for an exercise
// not written yet. Asks the course's one reader of course/exercises.txt,
// scripts/course_registry.py, for the exercise's title and chapter (as
// `scripts/dev.sh course new` does for the stub it writes), then calls the
// stub's function and prints the error.
// Usage (from the repository root): snippet_course not-implemented EXERCISE_ID
#include <cstdio>
#include <iostream>
#include <string>

#include "tensor/exercise.h"

// One field of one exercise: `python3 scripts/course_registry.py field ID KEY`'s
// line, or "" when it fails (no such exercise, a malformed registry).
static std::string registry_field(const std::string& id, const std::string& key) {
  const std::string command = "python3 scripts/course_registry.py field '" + id + "' " + key + " 2>/dev/null";
  FILE* pipe = popen(command.c_str(), "r");
  if (pipe == nullptr) return "";
  std::string out;
  char buffer[256];
  while (std::fgets(buffer, sizeof buffer, pipe) != nullptr) out += buffer;
  if (pclose(pipe) != 0) return "";
  while (!out.empty() && out.back() == '\n') out.pop_back();
  return out;
}

int main(int argc, char** argv) {
  const std::string what = argc > 1 ? argv[1] : "";
  if (what != "not-implemented" || argc < 3) {
    std::cerr << "usage: snippet_course not-implemented EXERCISE_ID\n";
    return 2;
  }
  const std::string id = argv[2];
  if (id.find('\'') != std::string::npos) {  // it goes inside '...' on the command line
    std::cerr << "snippet_course: no exercise '" << id << "' in course/exercises.txt\n";
    return 1;
  }
  const std::string title = registry_field(id, "title");
  const std::string chapter = registry_field(id, "chapter");
  if (title.empty() || chapter.empty()) {
    std::cerr << "snippet_course: no exercise '" << id << "' in course/exercises.txt\n";
    return 1;
  }
  try {
    ::ropegrad::exercise_not_implemented(id.c_str(), title.c_str(), chapter.c_str());
  } catch (const ::ropegrad::NotImplemented& e) {
    std::cout << e.what() << "\n";
  }
  return 0;
}
