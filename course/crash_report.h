// When a check crashes course-check (a learner's code writing out of
// bounds, freeing twice, dividing an integer by zero), the C library or the
// kernel prints at most one line, naming nothing of the course. This prints
// instead what the learner would have seen up to then: the line of each check
// that finished, then which check was running, the signal and what it means.
//
//   ok       merge pair in word merges every occurrence left to right
//   CRASH    this rank updates exactly its range with adamw: the process stopped here with SIGABRT (...)
#pragma once

#include <string>

namespace ropegrad::course {

// Installs the handler for SIGSEGV, SIGABRT, SIGBUS, SIGFPE and SIGILL.
void install_crash_report();
// The check now running, as its line names it.
void crash_report_start(const std::string& readable_name);
// A finished check's line, as printed (without the newline).
void crash_report_done(const std::string& line);

}  // namespace ropegrad::course
