#include "course/exercises.h"
#include "io/read_file.h"
#include "course/paths.h"

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "tensor/error.h"

#ifndef ROPEGRAD_SOURCE_DIR
#error "ROPEGRAD_SOURCE_DIR (the source tree) is set by course/CMakeLists.txt"
#endif

namespace fs = std::filesystem;

namespace ropegrad::course {

namespace {

std::string trim(const std::string& s) {
  const size_t b = s.find_first_not_of(" \t\r");
  if (b == std::string::npos) return "";
  return s.substr(b, s.find_last_not_of(" \t\r") - b + 1);
}

// course/exercises.txt: blocks of
//   [ex07-rmsnorm]
//   title: RMSNorm forward
//   chapter: docs/07-rmsnorm.md
//   hint: ...                 (may repeat: the lines are joined)
std::vector<Exercise> load() {
  const std::string path = std::string(ROPEGRAD_SOURCE_DIR) + "/course/exercises.txt";
  std::ifstream in(path);
  RG_CHECK(in.good(), "course", "cannot read {}", path);
  std::vector<Exercise> all;
  std::string line;
  for (int number = 1; std::getline(in, line); ++number) {
    line = trim(line);
    if (line.empty() || line[0] == '#') continue;
    if (line.front() == '[') {
      RG_CHECK(line.back() == ']', "course", "{}:{}: expected [exNN-name], got '{}'", path, number, line);
      all.push_back({line.substr(1, line.size() - 2), "", "", ""});
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
  for (const Exercise& e : all) {
    RG_CHECK(!e.title.empty() && !e.chapter.empty(), "course", "{}: {} needs a title and a chapter", path, e.id);
  }
  return all;
}

// Every C++ source under the library's folders, relative to the tree.
const std::vector<std::pair<std::string, std::string>>& sources() {
  static const std::vector<std::pair<std::string, std::string>> files = [] {
    std::vector<std::pair<std::string, std::string>> out;
    for (const char* dir : {"tensor", "autograd", "nn", "optim", "io", "catalog", "tokenizer", "tasks", "dist", "train", "cli"}) {
      const fs::path root = fs::path(ROPEGRAD_SOURCE_DIR) / dir;
      if (!fs::is_directory(root)) continue;
      for (const auto& entry : fs::recursive_directory_iterator(root)) {
        const std::string ext = entry.path().extension().string();
        if (!entry.is_regular_file() || (ext != ".cpp" && ext != ".h")) continue;
        out.emplace_back(fs::relative(entry.path(), ROPEGRAD_SOURCE_DIR).string(),
                         io::read_file(entry.path().string(), "course"));
      }
    }
    std::sort(out.begin(), out.end());
    return out;
  }();
  return files;
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
    if (text.find("BEGIN EXERCISE " + id + "\n") != std::string::npos ||
        text.find("BEGIN EXERCISE " + id + " ") != std::string::npos) {
      out.push_back(path);
    }
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
