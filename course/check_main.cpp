// course-check: runs one exercise's checks and says, one line each, what is
// right and what kind of wrong.
//
//   course-check ex07-rmsnorm      the checks of one exercise; exit 0 only if all pass
//   course-check --status          every exercise: done / failing / blocked / not started
//   course-check --list            the exercises, in order
//   course-check --gtest_...       plain GoogleTest (CTest runs the checks this way)
//
// course-check-mpi (the MPI build) is this program with chapter 21's checks
// only, run as `mpirun -np N course-check-mpi ex21-...`: their ranks are the
// job's processes (course/checks/rank_groups.h); rank 0 prints.
//
// An exercise's checks are the GoogleTest suite named after it with '-' as
// '_' (ex07-rmsnorm -> TEST(ex07_rmsnorm, ...)), in course/checks/. A check
// that fails because an exercise's stub threw is reported as "not written
// yet" when the stub is this exercise's and "blocked by <id>" when it is an
// earlier one's, never as a wrong number. A gradient check whose function's
// forward check failed is "skipped" (check_util.h: COURSE_AFTER_FORWARD),
// naming that check: the forward's error would be diagnosed as a gradient's.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <map>
#include <optional>
#include <cctype>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "course/crash_report.h"
#include "course/exercises.h"
#include "course/paths.h"
#include "course/tool_options.h"
#include "io/flags.h"
#include "tensor/storage.h"
#ifdef ROPEGRAD_COURSE_MPI
#include "course/mpi_world.h"
#endif
#include "tensor/exercise.h"
#include "tensor/fast_forms.h"

namespace fs = std::filesystem;
using ropegrad::course::Exercise;

namespace {

// ---- what one run of checks found ---------------------------------------------------------------

enum class Verdict { Pass, Fail, NotWritten, Blocked, Skipped };

struct CheckLine {
  std::string suite, name;
  Verdict verdict = Verdict::Pass;
  std::string detail;      // the first lines of the failure, or the blocking id
  std::string blocked_by;  // exercise id, when Blocked
};

// "forward_matches_torch_float32" -> "forward matches torch float32"
std::string readable(std::string name) {
  std::replace(name.begin(), name.end(), '_', ' ');
  return name;
}

// The id in the first "not implemented: exNN-name" of a failure message.
std::optional<std::string> stub_id(const std::string& message) {
  const std::string marker = "not implemented: ex";
  const size_t at = message.find(marker);
  if (at == std::string::npos) return std::nullopt;
  size_t end = at + marker.size() - 2;  // at "ex"
  while (end < message.size() && (std::isalnum(static_cast<unsigned char>(message[end])) || message[end] == '-')) ++end;
  return message.substr(at + marker.size() - 2, end - (at + marker.size() - 2));
}

// Up to `lines` lines of a failure message, without GoogleTest's file:line prefix.
std::string first_lines(const std::string& message, int lines) {
  std::istringstream in(message);
  std::string line, out;
  for (int n = 0; n < lines && std::getline(in, line);) {
    // GoogleTest's own "Value of: ... Actual: ... Expected: ..." says less than the check's words.
    if (line.empty() || line.rfind("Value of:", 0) == 0 || line.rfind("  Actual:", 0) == 0 ||
        line.rfind("Expected:", 0) == 0 || line.rfind("Which is:", 0) == 0 || line == "Failed")
      continue;
    out += (out.empty() ? "" : "\n        ") + line;
    ++n;
  }
  return out;
}

// An error a check did not catch itself reaches GoogleTest as "C++ exception
// with description \"...\" thrown in the test body."; the learner reads it
// as every check's own errors read: "raised an error: ...".
std::string plain_error(const std::string& message) {
  const std::string head = "C++ exception with description \"", tail = "\" thrown in the test body.";
  if (message.rfind(head, 0) != 0 || message.size() < head.size() + tail.size() ||
      message.compare(message.size() - tail.size(), tail.size(), tail) != 0)
    return message;
  return "raised an error: " + message.substr(head.size(), message.size() - head.size() - tail.size());
}

// A check's line as printed (without the newline).
std::string line_text(const CheckLine& l) {
  switch (l.verdict) {
    case Verdict::Pass: return fmt::format("  ok       {}", readable(l.name));
    case Verdict::Fail: return fmt::format("  FAIL     {}: {}", readable(l.name), l.detail);
    case Verdict::NotWritten: return fmt::format("  TODO     {}: not written yet", readable(l.name));
    case Verdict::Blocked: return fmt::format("  BLOCKED  {}: blocked by {}", readable(l.name), l.blocked_by);
    case Verdict::Skipped: return fmt::format("  SKIPPED  {}: {}", readable(l.name), l.detail);
  }
  return "";
}

class Collector : public ::testing::EmptyTestEventListener {
 public:
  explicit Collector(int detail_lines) : detail_lines_(detail_lines) {}
  std::vector<CheckLine> lines;

 private:
  void OnTestStart(const ::testing::TestInfo& info) override {
    current_ = CheckLine{};
    current_.suite = info.test_suite_name();
    current_.name = info.name();
    ropegrad::course::crash_report_start(readable(current_.name));
    messages_.clear();
    skipped_.clear();
  }
  void OnTestPartResult(const ::testing::TestPartResult& r) override {
    if (r.failed()) messages_.push_back(r.message());
    if (r.skipped()) skipped_ = r.message();
  }
  void OnTestEnd(const ::testing::TestInfo& info) override {
    if (info.result()->Skipped() && !info.result()->Failed()) {
      current_.verdict = Verdict::Skipped;
      current_.detail = first_lines(skipped_, 1);
      finish();
      return;
    }
    if (!info.result()->Failed()) {
      finish();
      return;
    }
    const std::string own = ropegrad::course::suite_to_id(current_.suite);
    for (const std::string& m : messages_) {
      if (auto id = stub_id(m)) {
        current_.verdict = *id == own ? Verdict::NotWritten : Verdict::Blocked;
        current_.blocked_by = *id;
        current_.detail = first_lines(m, 1);
        finish();
        return;
      }
    }
    current_.verdict = Verdict::Fail;
    current_.detail = messages_.empty() ? "failed" : first_lines(plain_error(messages_.front()), detail_lines_);
    finish();
  }
  // The line is kept, and handed to the crash report as it will be printed.
  void finish() {
    lines.push_back(current_);
    ropegrad::course::crash_report_done(line_text(current_));
  }
  int detail_lines_;
  CheckLine current_;
  std::vector<std::string> messages_;
  std::string skipped_;
};

// Runs the GoogleTest suites matching `filter` with the default printer off.
std::vector<CheckLine> run_checks(const std::string& filter, int detail_lines) {
  ::testing::GTEST_FLAG(filter) = filter;
  ::testing::TestEventListeners& listeners = ::testing::UnitTest::GetInstance()->listeners();
  delete listeners.Release(listeners.default_result_printer());
  auto* collector = new Collector(detail_lines);
  listeners.Append(collector);  // owned by GoogleTest from here on
  if (RUN_ALL_TESTS() != 0) {
    // the failures are in the collected lines
  }
  return collector->lines;
}

// ---- the commands -----------------------------------------------------------------------------

std::string where_to_write(const Exercise& e) {
  const std::vector<std::string> files = ropegrad::course::files_of(e.id);
  if (files.empty()) return "(no region marked " + e.id + " in the sources)";
  std::string s;
  for (const std::string& f : files) s += (s.empty() ? "" : ", ") + f;
  return s;
}

// A workspace (scripts/dev.sh course new) lists the exercises it stubbed.
bool in_workspace() { return fs::exists(fs::path(ROPEGRAD_SOURCE_DIR) / ".course" / "stubbed"); }

int check_one(const Exercise& e, bool verbose) {
  const auto& all = ropegrad::course::exercises();
  fmt::print("{}  {}  ({})\n", e.id, e.title, e.chapter);
  // In the repository itself (no workspace) the region holds the reference
  // solution unless it was stubbed in place (course stub): say which ran.
  const bool reference = !in_workspace() && !ropegrad::course::is_stub(e.id);
  fmt::print("  you write: {}\n", where_to_write(e));
  if (reference) {
    fmt::print("  note: this is the repository, not a workspace: the checks run its reference solution (or your\n"
               "  changes to it); to write the exercise yourself: scripts/dev.sh course new DIR\n");
  }
  const std::vector<CheckLine> lines = run_checks(ropegrad::course::id_to_suite(e.id) + ".*", verbose ? 40 : 1);
  if (lines.empty()) {
    fmt::print("  no checks found for {} (course/checks/{}.cpp)\n", e.id, ropegrad::course::id_to_suite(e.id));
    return 1;
  }
  int passed = 0;
  std::set<std::string> blockers;
  bool not_written = false;
  for (const CheckLine& l : lines) {
    fmt::print("{}\n", line_text(l));
    passed += l.verdict == Verdict::Pass;
    not_written = not_written || l.verdict == Verdict::NotWritten;
    if (l.verdict == Verdict::Blocked) blockers.insert(l.blocked_by);
  }
  fmt::print("{}: {} of {} checks pass\n", e.id, passed, lines.size());
  if (!blockers.empty()) {
    for (const std::string& b : blockers) {
      const Exercise* be = ropegrad::course::find(b);
      fmt::print("blocked by {}{}: write it first (scripts/dev.sh course check {})\n", b,
                 be ? " (" + be->title + ", " + be->chapter + ")" : "", b);
    }
    return 1;
  }
  if (not_written) {
    fmt::print("not implemented yet: write the region marked 'BEGIN EXERCISE {}' in {}\n", e.id, where_to_write(e));
    if (!e.hint.empty()) fmt::print("hint: {}\n", e.hint);
    return 1;
  }
  if (passed != static_cast<int>(lines.size())) {
    if (!e.hint.empty()) fmt::print("hint: {}\n", e.hint);
    if (!verbose) fmt::print("(scripts/dev.sh course check {} --verbose shows each failure in full)\n", e.id);
    return 1;
  }
  if (reference) {
    fmt::print("{}: checked the reference solution (this is not a workspace)\n", e.id);
    return 0;
  }
  auto it = std::find_if(all.begin(), all.end(), [&](const Exercise& x) { return x.id == e.id; });
  if (it != all.end() && std::next(it) != all.end()) {
    const Exercise& next = *std::next(it);
    fmt::print("{} is done. Next: {} ({}, {}): scripts/dev.sh course check {}\n", e.id, next.id, next.title,
               next.chapter, next.id);
  } else {
    fmt::print("{} is done. That was the last exercise.\n", e.id);
  }
  return 0;
}

int status() {
  // One run of every suite; then group the lines by exercise.
  const std::vector<CheckLine> lines = run_checks("ex*", 1);
  std::map<std::string, std::vector<const CheckLine*>> by_id;
  for (const CheckLine& l : lines) by_id[ropegrad::course::suite_to_id(l.suite)].push_back(&l);
  int done = 0;
  const auto& all = ropegrad::course::exercises();
  std::vector<std::string> states;
  for (const Exercise& e : all) {
    const auto& ls = by_id[e.id];
    const size_t passed = std::count_if(ls.begin(), ls.end(), [](const CheckLine* l) { return l->verdict == Verdict::Pass; });
    std::string state;
    if (ropegrad::course::is_stub(e.id)) {
      state = "not started";
    } else if (ls.empty()) {
      state = "no checks";
    } else if (passed == ls.size()) {
      state = "done";
      ++done;
    } else {
      auto blocked = std::find_if(ls.begin(), ls.end(), [](const CheckLine* l) { return l->verdict == Verdict::Blocked; });
      state = blocked != ls.end() ? "blocked by " + (*blocked)->blocked_by
                                  : fmt::format("failing ({} of {} checks pass)", passed, ls.size());
    }
    states.push_back(state);
  }
  // Columns as wide as their longest entry.
  size_t id_width = 2, state_width = 5;
  for (size_t i = 0; i < all.size(); ++i) {
    id_width = std::max(id_width, all[i].id.size());
    state_width = std::max(state_width, states[i].size());
  }
  fmt::print("  {:<{}}  {:<{}}  {}\n", "id", id_width, "state", state_width, "title");
  for (size_t i = 0; i < all.size(); ++i)
    fmt::print("  {:<{}}  {:<{}}  {}\n", all[i].id, id_width, states[i], state_width, all[i].title);
  fmt::print("{} of {} exercises done\n", done, all.size());
  // A workspace (scripts/dev.sh course new) lists the exercises it stubbed;
  // their fast forms were removed with them (tensor/fast_forms.h).
  std::ifstream stubbed(fs::path(ROPEGRAD_SOURCE_DIR) / ".course" / "stubbed");
  if (!stubbed) {
    fmt::print("This is the reference tree, not a workspace: the checks ran the reference solution of every exercise\n"
               "not stubbed in place. To write them yourself: scripts/dev.sh course new DIR\n");
  } else {
    int n = 0;
    for (std::string line; std::getline(stubbed, line);) n += !line.empty();
    fmt::print("This workspace has no fast form of the {} exercises it stubbed: ropegrad train, the examples and these\n"
               "checks run your code for them. When all pass: scripts/dev.sh course final\n",
               n);
  }
  return 0;
}

int list() {
  size_t id_width = 2, title_width = 5;
  for (const Exercise& e : ropegrad::course::exercises()) {
    id_width = std::max(id_width, e.id.size());
    title_width = std::max(title_width, e.title.size());
  }
  for (const Exercise& e : ropegrad::course::exercises()) {
    fmt::print("{:<{}}  {:<{}}  {}\n", e.id, id_width, e.title, title_width, e.chapter);
  }
  return 0;
}

// Every exercise as course-check reads it, one a line: id, title, chapter,
// hint and its region files joined by ';', tab-separated, as
// `scripts/course_registry.py table` prints them (scripts/test_course_registry.py
// compares the two: one rule, two readers).
int registry_table() {
  for (const Exercise& e : ropegrad::course::exercises()) {
    std::string files;
    for (const std::string& f : ropegrad::course::files_of(e.id)) files += (files.empty() ? "" : ";") + f;
    fmt::print("{}\t{}\t{}\t{}\t{}\n", e.id, e.title, e.chapter, e.hint, files);
  }
  return 0;
}

// The ids a mistyped `id` may have meant: the closest by edit distance (at
// most 2 edits, 3 from 10 characters on: io/flags.h's did you mean, as the
// commands'), else those containing it (up to 6).
std::vector<std::string> did_you_mean(const std::string& id) {
  std::vector<std::string> ids, containing;
  for (const Exercise& e : ropegrad::course::exercises()) {
    ids.push_back(e.id);
    if (!id.empty() && e.id.find(id) != std::string::npos) containing.push_back(e.id);
  }
  if (const std::string near = ropegrad::flags::closest(id, ids); !near.empty()) return {near};
  if (containing.size() <= 6) return containing;
  return {};
}

}  // namespace

int main(int argc, char** argv) {
#ifdef ROPEGRAD_COURSE_MPI
  ropegrad::course::start_mpi_world();  // course-check-mpi: chapter 21's checks under mpirun
#endif
  // --help is this program's (GoogleTest would print its own): the table's, before GoogleTest reads the words.
  for (int i = 1; i < argc; ++i) {
    if (std::string(argv[i]) == "--help" || std::string(argv[i]) == "-h") {
      return ropegrad::course::read_check_options({argv[i]}).has_value() ? 1 : 0;
    }
  }
  ::testing::InitGoogleTest(&argc, argv);
  ropegrad::set_fast_forms(false);  // every check runs the plain form, the code the learner wrote (tensor/fast_forms.h)
  const std::vector<std::string> args(argv + 1, argv + argc);
  if (args.empty()) return RUN_ALL_TESTS();  // plain GoogleTest (CTest); InitGoogleTest took its own flags
  ropegrad::course::install_crash_report();  // a crash still shows the checks' lines, and which one was running
  ropegrad::set_fill_fresh_storage_with_nan(true);  // an element never written reads nan, the same every run
  std::optional<ropegrad::course::CheckOptions> options;
  try {
    options = ropegrad::course::read_check_options(args);  // the one flag reader (course/tool_options.h)
  } catch (const std::exception& ex) {
    fmt::print(stderr, "{}\n", ex.what());  // names course-check already
    return 2;
  }
  if (!options) return 0;  // --help
  using Action = ropegrad::course::CheckOptions::Action;
  try {
    if (options->action == Action::List) return list();
    if (options->action == Action::Status) return status();
    if (options->action == Action::RegistryTable) return registry_table();  // for the test, not the learner
    const Exercise* e = ropegrad::course::find(options->id);
    if (e == nullptr) {
      const std::vector<std::string> near = did_you_mean(options->id);
      std::string guess;
      for (const std::string& n : near) guess += (guess.empty() ? "" : ", ") + n;
      fmt::print(stderr, "course-check: no exercise '{}'{} (course-check --list shows them)\n", options->id,
                 guess.empty() ? "" : "; did you mean " + guess + "?");
      return 2;
    }
    return check_one(*e, options->verbose);
  } catch (const std::exception& ex) {
    fmt::print(stderr, "course-check: {}\n", ex.what());
    return 2;
  }
}
