// Temporary files beside an output: PATH.<pid>.<random>.tmp, written whole,
// then renamed over PATH. The name is unique, so two writers never share one
// (issue 20: two encodes into one --out both wrote OUT.tmp), and it names its
// writer, so a later writer of the same PATH can remove what a killed one
// left behind.
#pragma once

#include <string>

namespace ropegrad::nn {

// PATH.<pid>.<16 random hex digits>.tmp
std::string unique_tmp_path(const std::string& path);

// Removes every PATH.<pid>.<hex>.tmp whose process is gone (not this one, not
// a live one); returns how many were removed. Other files are left alone.
int remove_stale_tmp_files(const std::string& path);

}  // namespace ropegrad::nn
