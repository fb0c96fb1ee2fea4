// The one whole-file read: every reader of a small file (a .npy, vocab.json,
// a run's config.txt, a training text) takes its bytes through it, so every
// one refuses a directory and an unreadable file in the same words.
#pragma once

#include <string>
#include <string_view>

namespace ropegrad::io {

// The bytes of `path`. Errors, raised as `op`: "'PATH' is a directory, not
// WHAT" and "cannot open 'PATH'", and "reading 'PATH' failed" when the read
// stops early.
std::string read_file(const std::string& path, std::string_view op, std::string_view what = "a file");

}  // namespace ropegrad::io
