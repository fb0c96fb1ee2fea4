#include "io/tmp_file.h"

#include <fcntl.h>
#include <signal.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <random>

#include <fmt/format.h>

#include "tensor/parse_number.h"
#include "tensor/error.h"

namespace ropegrad::nn {

std::string unique_tmp_path(const std::string& path) {
  static thread_local std::mt19937_64 rng(std::random_device{}() ^ (static_cast<uint64_t>(::getpid()) << 32));
  return fmt::format("{}.{}.{:016x}.tmp", path, ::getpid(), rng());
}

int remove_stale_tmp_files(const std::string& path) {
  namespace fs = std::filesystem;
  const fs::path p(path);
  const std::string prefix = p.filename().string() + ".";
  const fs::path dir = p.parent_path().empty() ? fs::path(".") : p.parent_path();
  std::error_code error;
  int removed = 0;
  for (fs::directory_iterator it(dir, error), end; !error && it != end; it.increment(error)) {
    const std::string name = it->path().filename().string();
    // PREFIX <pid> . <hex> .tmp
    if (name.size() <= prefix.size() + 4 || name.compare(0, prefix.size(), prefix) != 0 ||
        name.compare(name.size() - 4, 4, ".tmp") != 0)
      continue;
    const std::string_view middle(name.data() + prefix.size(), name.size() - prefix.size() - 4);
    const size_t dot = middle.find('.');
    if (dot == std::string_view::npos || dot == 0 || dot + 1 == middle.size()) continue;
    const std::optional<int64_t> pid = parse_int64(middle.substr(0, dot));
    if (!pid || *pid <= 0 || middle[0] == '+') continue;
    if (middle.substr(dot + 1).find_first_not_of("0123456789abcdef") != std::string_view::npos) continue;
    if (*pid == ::getpid()) continue;
    if (::kill(static_cast<pid_t>(*pid), 0) == 0 || errno != ESRCH) continue;  // alive (or not ours to judge)
    std::error_code ignored;
    if (fs::remove_all(it->path(), ignored) > 0) ++removed;  // a file, or a directory written whole (tokenize train)
  }
  return removed;
}

void write_all(int fd, const void* data, size_t bytes, const std::string& path, std::string_view op) {
  const auto* p = static_cast<const char*>(data);
  while (bytes > 0) {
    const ssize_t n = ::write(fd, p, bytes);
    if (n < 0 && errno == EINTR) continue;
    RG_CHECK(n > 0, std::string(op), "writing '{}' failed: {}", path, std::strerror(errno));
    p += n;
    bytes -= static_cast<size_t>(n);
  }
}

void replace_with_tmp(int fd, const std::string& tmp, const std::string& path, std::string_view op) {
  const auto fail_and_remove = [&](std::string_view what) {
    const std::string why = std::strerror(errno);
    ::unlink(tmp.c_str());
    fail(std::string(op), "{} '{}' failed: {}", what, tmp, why);
  };
  if (::fsync(fd) != 0) {
    ::close(fd);
    fail_and_remove("fsync of");
  }
  if (::close(fd) != 0) fail_and_remove("closing");
  if (std::rename(tmp.c_str(), path.c_str()) != 0) {
    const std::string why = std::strerror(errno);
    ::unlink(tmp.c_str());
    fail(std::string(op), "cannot rename '{}' to '{}': {}", tmp, path, why);
  }
  std::filesystem::path dir = std::filesystem::path(path).parent_path();
  if (dir.empty()) dir = ".";
  const int dir_fd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (dir_fd >= 0) {
    (void)::fsync(dir_fd);  // some file systems refuse to fsync a directory
    ::close(dir_fd);
  }
}

void write_file_atomically(const std::string& path, std::string_view bytes, std::string_view op) {
  const std::string tmp = unique_tmp_path(path);
  const int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  RG_CHECK(fd >= 0, std::string(op), "cannot write '{}': {}", tmp, std::strerror(errno));
  try {
    write_all(fd, bytes.data(), bytes.size(), tmp, op);
  } catch (...) {
    ::close(fd);
    ::unlink(tmp.c_str());
    throw;
  }
  replace_with_tmp(fd, tmp, path, op);
}

}  // namespace ropegrad::nn
