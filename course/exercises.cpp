#include "course/exercises.h"
#include "io/read_file.h"
#include "course/paths.h"

#include <algorithm>
#include <cctype>
#include <filesystem>
#include <sstream>

#include "tensor/error.h"

#ifndef ROPEGRAD_SOURCE_DIR
#error "ROPEGRAD_SOURCE_DIR (the source tree) is set by course/CMakeLists.txt"
#endif

namespace fs = std::filesystem;

namespace ropegrad::course {

namespace {

std::string trim(const std::string& s) {
  const char* const space = " \t\r\f\v";
  const size_t b = s.find_first_not_of(space);
  if (b == std::string::npos) return "";
  return s.substr(b, s.find_last_not_of(space) - b + 1);
}

std::vector<std::string> lines_of(const std::string& text) {
  std::vector<std::string> lines;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  return lines;
}

// "ex", two digits, a dash, then lower-case letters, digits and dashes.
bool is_id(const std::string& s) {
  if (s.size() < 6 || s.compare(0, 2, "ex") != 0 || !std::isdigit(static_cast<unsigned char>(s[2])) ||
      !std::isdigit(static_cast<unsigned char>(s[3])) || s[4] != '-')
    return false;
  return std::all_of(s.begin() + 5, s.end(), [](char c) {
    return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-';
  });
}

// course/exercises.txt, by the rule of scripts/course_registry.py (the
// course's one reader; scripts/test_course_registry.py checks that this one
// reads every field of every exercise alike): blocks of
//   [ex07-rmsnorm]
//   title: RMSNorm forward
//   chapter: docs/07-rmsnorm.md
//   hint: ...                 (may repeat: the lines are joined)
std::vector<Exercise> load() {
  const std::string path = "course/exercises.txt";
  const std::vector<std::string> lines =
      lines_of(io::read_file(std::string(ROPEGRAD_SOURCE_DIR) + "/" + path, "course"));
  std::vector<Exercise> all;
  std::vector<int> first_line;
  for (size_t i = 0; i < lines.size(); ++i) {
    const int number = static_cast<int>(i) + 1;
    const std::string line = trim(lines[i]);
    if (line.empty() || line[0] == '#') continue;
    if (line.front() == '[') {
      const std::string id = line.back() == ']' ? line.substr(1, line.size() - 2) : "";
      RG_CHECK(is_id(id), "course", "{}:{}: expected [exNN-name], got '{}'", path, number, line);
      for (size_t k = 0; k < all.size(); ++k) {
        RG_CHECK(all[k].id != id, "course", "{}:{}: {} again (first at line {})", path, number, id, first_line[k]);
      }
      all.push_back({id, "", "", ""});
      first_line.push_back(number);
      continue;
    }
    const size_t colon = line.find(':');
    RG_CHECK(!all.empty() && colon != std::string::npos, "course", "{}:{}: expected 'key: value', got '{}'", path,
             number, line);
    const std::string key = trim(line.substr(0, colon)), value = trim(line.substr(colon + 1));
    Exercise& e = all.back();
    if (key == "title") e.title = value;
    else if (key == "chapter") e.chapter = value;
    else if (key == "hint") e.hint += (e.hint.empty() ? "" : " ") + value;
    else if (key != "checks") fail("course", "{}:{}: unknown key '{}'", path, number, key);
  }
  for (size_t k = 0; k < all.size(); ++k) {
    RG_CHECK(!all[k].title.empty() && !all[k].chapter.empty(), "course", "{}:{}: {} needs a title and a chapter", path,
             first_line[k], all[k].id);
  }
  return all;
}

// The library folders: those CMakeLists.txt builds with a line
// `ropegrad_add_folder(NAME ...)`.
std::vector<std::string> library_folders() {
  const std::string prefix = "ropegrad_add_folder(";
  std::vector<std::string> out;
  const std::string cmakelists = io::read_file(std::string(ROPEGRAD_SOURCE_DIR) + "/CMakeLists.txt", "course");
  for (const std::string& raw : lines_of(cmakelists)) {
    const std::string line = trim(raw);
    if (line.rfind(prefix, 0) != 0) continue;
    size_t b = line.find_first_not_of(" \t", prefix.size()), e = b;
    while (e < line.size() && (std::isalnum(static_cast<unsigned char>(line[e])) || line[e] == '_')) ++e;
    if (b != std::string::npos && e > b) out.push_back(line.substr(b, e - b));
  }
  return out;
}

// Every C++ source under the library's folders, relative to the tree, in path order.
const std::vector<std::pair<std::string, std::string>>& sources() {
  static const std::vector<std::pair<std::string, std::string>> files = [] {
    std::vector<std::pair<std::string, std::string>> out;
    for (const std::string& dir : library_folders()) {
      const fs::path root = fs::path(ROPEGRAD_SOURCE_DIR) / dir;
      if (!fs::is_directory(root)) continue;
      for (const auto& entry : fs::recursive_directory_iterator(root)) {
        const std::string ext = entry.path().extension().string();
        if (!entry.is_regular_file() || (ext != ".cpp" && ext != ".h")) continue;
        out.emplace_back(fs::relative(entry.path(), ROPEGRAD_SOURCE_DIR).generic_string(),
                         io::read_file(entry.path().string(), "course"));
      }
    }
    std::sort(out.begin(), out.end());
    return out;
  }();
  return files;
}

// Whether TEXT holds a region of ID: a line `// BEGIN EXERCISE ID`, then a
// line `// END EXERCISE ID` before any other BEGIN (both trimmed), the rule of
// scripts/course_registry.py's file_regions.
bool holds_region(const std::string& text, const std::string& id) {
  const std::string begin = "// BEGIN EXERCISE ", end = "// END EXERCISE ";
  std::string open;
  for (const std::string& raw : lines_of(text)) {
    const std::string line = trim(raw);
    if (line.rfind(begin, 0) == 0 && is_id(line.substr(begin.size()))) {
      open = line.substr(begin.size());
    } else if (line.rfind(end, 0) == 0 && is_id(line.substr(end.size()))) {
      if (!open.empty() && open == id && line.substr(end.size()) == id) return true;
      if (open == line.substr(end.size())) open.clear();
    }
  }
  return false;
}

}  // namespace

const std::vector<Exercise>& exercises() {
  static const std::vector<Exercise> all = load();
  return all;
}

const Exercise* find(const std::string& id) {
  for (const Exercise& e : exercises()) {
    if (e.id == id) return &e;
  }
  return nullptr;
}

std::string id_to_suite(std::string id) {
  std::replace(id.begin(), id.end(), '-', '_');
  return id;
}

std::string suite_to_id(std::string suite) {
  std::replace(suite.begin(), suite.end(), '_', '-');
  return suite;
}

std::vector<std::string> files_of(const std::string& id) {
  std::vector<std::string> out;
  for (const auto& [path, text] : sources()) {
    if (holds_region(text, id)) out.push_back(path);
  }
  return out;
}

bool is_stub(const std::string& id) {
  for (const auto& [path, text] : sources()) {
    if (text.find("exercise_not_implemented(\"" + id + "\"") != std::string::npos) return true;
  }
  return false;
}

}  // namespace ropegrad::course
