// docs/course.md: the message a learner's workspace prints for an exercise
// not written yet. Reads the exercise's title and chapter from
// course/exercises.txt (as `scripts/dev.sh course new` does for the stub it
// writes), then calls the stub's function and prints the error.
// Usage (from the repository root): snippet_course not-implemented EXERCISE_ID
#include <fstream>
#include <iostream>
#include <string>

#include "tensor/exercise.h"

int main(int argc, char** argv) {
  const std::string what = argc > 1 ? argv[1] : "";
  if (what != "not-implemented" || argc < 3) {
    std::cerr << "usage: snippet_course not-implemented EXERCISE_ID\n";
    return 2;
  }
  const std::string id = argv[2];
  std::ifstream registry("course/exercises.txt");
  std::string line, title, chapter;
  bool in_block = false;
  while (std::getline(registry, line)) {
    if (line.rfind('[', 0) == 0) in_block = line == "[" + id + "]";
    if (in_block && line.rfind("title: ", 0) == 0) title = line.substr(7);
    if (in_block && line.rfind("chapter: ", 0) == 0) chapter = line.substr(9);
  }
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
