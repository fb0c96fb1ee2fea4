#include "course/crash_report.h"

#include <unistd.h>

#include <csignal>
#include <cstdio>
#include <algorithm>
#include <cstring>
#include <string>
#include <vector>

namespace ropegrad::course {
namespace {

// Filled between checks, read by the handler: the lines are whole strings by then.
std::vector<std::string> g_done;
char g_running[512] = "";

void say(const char* s) {
  size_t left = std::strlen(s);
  while (left > 0) {
    const ssize_t n = ::write(STDOUT_FILENO, s, left);
    if (n <= 0) return;
    s += n, left -= static_cast<size_t>(n);
  }
}

const char* meaning(int sig) {
  switch (sig) {
    case SIGSEGV: return "SIGSEGV: a read or write outside the memory the program owns (an index past an end?)";
    case SIGABRT:
      return "SIGABRT: the program aborted; when the line above is the C library's (\"double free\", \"corrupted\"), "
             "memory next to a buffer was written past its end, or freed twice";
    case SIGBUS: return "SIGBUS: a read or write at an address no memory backs";
    case SIGFPE: return "SIGFPE: an integer division by zero (or of the lowest value by -1)";
    case SIGILL: return "SIGILL: an instruction the processor cannot run";
    default: return "a signal";
  }
}

void on_crash(int sig) {
  for (const std::string& line : g_done) {
    say(line.c_str());
    say("\n");
  }
  say("  CRASH    ");
  say(g_running[0] ? g_running : "(before the first check)");
  say(": the process stopped here with ");
  say(meaning(sig));
  say("; the checks after this one did not run\n");
  std::signal(sig, SIG_DFL);
  std::raise(sig);
}

}  // namespace

void install_crash_report() {
  for (int sig : {SIGSEGV, SIGABRT, SIGBUS, SIGFPE, SIGILL}) std::signal(sig, on_crash);
}

void crash_report_start(const std::string& readable_name) {
  std::fflush(stdout);  // what was printed before this check (the exercise's header) is out before any crash
  const size_t n = std::min(readable_name.size(), sizeof g_running - 1);
  std::memcpy(g_running, readable_name.data(), n);
  g_running[n] = '\0';
}

void crash_report_done(const std::string& line) { g_done.push_back(line); }

}  // namespace ropegrad::course
