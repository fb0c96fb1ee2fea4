// Levenshtein distance: the fewest insertions, deletions and substitutions
// that turn a into b ("kitten" -> "sitting": 3). The "did you mean" of flags,
// commands and course ids.
#pragma once

#include <cstddef>
#include <string_view>

namespace ropegrad {

size_t edit_distance(std::string_view a, std::string_view b);

}  // namespace ropegrad
