// Temporary files beside an output: PATH.<pid>.<random>.tmp, written whole,
// then renamed over PATH. The name is unique, so two writers never share one
// (issue 20: two encodes into one --out both wrote OUT.tmp), and it names its
// writer, so a later writer of the same PATH can remove what a killed one
// left behind.
//
// The one write-then-rename: write_all into a temporary file, then
// replace_with_tmp (fsync, rename over PATH, fsync the directory);
// write_file_atomically does both for bytes in memory.
#pragma once

#include <string>
#include <string_view>

namespace ropegrad::nn {

// PATH.<pid>.<16 random hex digits>.tmp
std::string unique_tmp_path(const std::string& path);

// Removes every PATH.<pid>.<hex>.tmp whose process is gone (not this one, not
// a live one); returns how many were removed. Other files are left alone.
int remove_stale_tmp_files(const std::string& path);

// All `bytes` of `data` into descriptor `fd` of file `path` (retrying after
// a signal); an error, raised as `op`, names the file and the reason.
void write_all(int fd, const void* data, size_t bytes, const std::string& path, std::string_view op);

// Makes the temporary file `tmp` (open as `fd`, fully written) the file
// `path`: fsync (the bytes are on disk before the rename makes them visible),
// close, rename over `path` (atomic within one file system: a reader sees the
// old file or the new one), then fsync the directory, best effort, so the
// rename itself survives a crash. On an error `tmp` is removed.
void replace_with_tmp(int fd, const std::string& tmp, const std::string& path, std::string_view op);

// `bytes` as the new content of `path`, through a unique temporary file.
void write_file_atomically(const std::string& path, std::string_view bytes, std::string_view op);

}  // namespace ropegrad::nn
