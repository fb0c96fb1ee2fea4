#include "io/tmp_file.h"

#include <signal.h>
#include <unistd.h>

#include <cerrno>
#include <filesystem>
#include <random>

#include <fmt/format.h>

#include "io/parse_number.h"

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

}  // namespace ropegrad::nn
