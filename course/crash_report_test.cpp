// The crash report (course/crash_report.h): a child process that finished
// one check and crashes in the next prints the first's line, then a CRASH
// line naming the second, the signal and its meaning; and still dies of it.
#include "course/crash_report.h"

#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <csignal>
#include <cstdio>
#include <string>

namespace {

struct Crashed {
  std::string output;
  int signal = 0;
};

Crashed crash_with(int sig) {
  int out[2];
  if (pipe(out) != 0) return {};
  const pid_t pid = fork();
  if (pid == 0) {
    dup2(out[1], STDOUT_FILENO);
    close(out[0]);
    ropegrad::course::install_crash_report();
    ropegrad::course::crash_report_done("  ok       the first check");
    ropegrad::course::crash_report_start("the second check");
    std::raise(sig);
    _exit(0);  // not reached: the handler dies of the signal
  }
  close(out[1]);
  Crashed c;
  char buf[4096];
  for (ssize_t n; (n = read(out[0], buf, sizeof buf)) > 0;) c.output.append(buf, static_cast<size_t>(n));
  close(out[0]);
  int status = 0;
  waitpid(pid, &status, 0);
  c.signal = WIFSIGNALED(status) ? WTERMSIG(status) : 0;
  return c;
}

TEST(CrashReport, AnAbortShowsTheChecksThatRanAndTheOneRunning) {
  const Crashed c = crash_with(SIGABRT);
  EXPECT_EQ(c.signal, SIGABRT);
  EXPECT_EQ(c.output.rfind("  ok       the first check\n  CRASH    the second check: the process stopped here with "
                           "SIGABRT: ",
                           0),
            0u)
      << c.output;
  EXPECT_NE(c.output.find("written past its end, or freed twice; the checks after this one did not run\n"),
            std::string::npos)
      << c.output;
}

TEST(CrashReport, ASegfaultSaysWhatItMeans) {
  const Crashed c = crash_with(SIGSEGV);
  EXPECT_EQ(c.signal, SIGSEGV);
  EXPECT_NE(c.output.find("  CRASH    the second check: the process stopped here with SIGSEGV: a read or write outside "
                          "the memory the program owns"),
            std::string::npos)
      << c.output;
}

}  // namespace
