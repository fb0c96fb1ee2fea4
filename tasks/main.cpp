// `ropegrad`: the command-line program. Subcommands:
//   ropegrad gradcheck [--op NAME]   gradcheck report over every registered op
#include <chrono>
#include <cstdio>
#include <cstring>
#include <string>

#include "autograd/op_catalog.h"
#include "autograd/ops.h"

namespace {

void print_usage() {
  std::puts(
      "usage: ropegrad <command> [options]\n"
      "\n"
      "commands:\n"
      "  gradcheck   float64 gradient check of every registered op against central\n"
      "              differences; prints a table of op, shapes, max error, pass/fail\n"
      "\n"
      "Run 'ropegrad <command> --help' for a command's options.");
}

int run_gradcheck(int argc, char** argv) {
  std::string only;
  for (int i = 0; i < argc; ++i) {
    if (!std::strcmp(argv[i], "--help") || !std::strcmp(argv[i], "-h")) {
      std::puts(
          "usage: ropegrad gradcheck [--op NAME]\n"
          "\n"
          "Checks the full Jacobian of every op in autograd/op_catalog.cpp, in float64,\n"
          "with torch.autograd.gradcheck's defaults (eps=1e-6, atol=1e-5, rtol=1e-3).\n"
          "  --op NAME   check only the cases of one op (e.g. matmul)\n"
          "Exit status: 0 when every case passes, 1 otherwise.");
      return 0;
    }
    if (!std::strcmp(argv[i], "--op") && i + 1 < argc) {
      only = argv[++i];
    } else {
      std::fprintf(stderr, "ropegrad gradcheck: unknown argument '%s' (see --help)\n", argv[i]);
      return 2;
    }
  }
  const auto start = std::chrono::steady_clock::now();
  int passed = 0, failed = 0;
  std::string failures;
  fmt::print("| {:<13} | {:<50} | {:>9} | {:<4} |\n", "op", "shapes", "max error", "");
  fmt::print("|{:-<15}|{:-<52}|{:-<11}|{:-<6}|\n", "", "", "", "");
  for (const ropegrad::OpCase& c : ropegrad::op_catalog()) {
    if (!only.empty() && c.op != only) continue;
    ropegrad::GradcheckResult r;
    try {
      r = ropegrad::gradcheck(c.fn, ropegrad::make_inputs(c));
    } catch (const ropegrad::Error& e) {
      r.passed = false;
      r.report = e.what();
    }
    fmt::print("| {:<13} | {:<50} | {:>9.2e} | {:<4} |\n", c.op, c.shapes, r.max_abs_error, r.passed ? "ok" : "FAIL");
    if (r.passed) {
      ++passed;
    } else {
      ++failed;
      failures += fmt::format("\n{} {}:\n{}\n", c.op, c.shapes, r.report);
    }
  }
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  if (!failures.empty()) fmt::print("{}", failures);
  fmt::print("\n{} passed, {} failed ({:.2f} s)\n", passed, failed, seconds);
  if (passed + failed == 0) {
    fmt::print(stderr, "ropegrad gradcheck: no op named '{}'\n", only);
    return 2;
  }
  return failed == 0 ? 0 : 1;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2 || !std::strcmp(argv[1], "--help") || !std::strcmp(argv[1], "-h")) {
    print_usage();
    return argc < 2 ? 2 : 0;
  }
  const std::string command = argv[1];
  try {
    if (command == "gradcheck") return run_gradcheck(argc - 2, argv + 2);
  } catch (const ropegrad::Error& e) {
    std::fprintf(stderr, "ropegrad %s: %s\n", command.c_str(), e.what());
    return 1;
  }
  std::fprintf(stderr, "ropegrad: unknown command '%s'\n\n", command.c_str());
  print_usage();
  return 2;
}
