// Where the tree of this build is: its root and its test fixtures. Defined in
// a file CMake generates in the build directory (course/CMakeLists.txt), not
// passed as compile flags, so that every other file of course-check compiles
// alike in every tree (the repository, each workspace) and the compiler cache
// serves it from any of them.
#pragma once

namespace ropegrad::course {

extern const char* const kSourceDir;    // the tree's root
extern const char* const kFixturesDir;  // <root>/tests/fixtures

}  // namespace ropegrad::course
