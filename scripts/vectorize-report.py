#!/usr/bin/env python3
"""Which loops of a source file GCC did not vectorise, and why.

    python3 scripts/vectorize-report.py nn/fast/attention_tiled.cpp [more files] [--build build]

Compiles each file again with the flags CMake used (BUILD/compile_commands.json)
plus -fopt-info-vec-all, into a temporary object, and lists every `for` loop
that no instantiation vectorised, with GCC's reasons. Outer loops over rows or
tiles are expected here; an inner loop over a row is the thing to look at. The
reasons that matter most in this code base (docs/appendix-c-performance.md):
  "no vectype for stmt" / "latch block not empty" - a value read through a
      pointer or a captured reference that a store in the loop might alias;
  a loop that is only a running max or sum - a chain the compiler may not split.
"""
import argparse
import collections
import json
import os
import re
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def report(entry, path):
    with tempfile.TemporaryDirectory() as tmp:
        info, obj = os.path.join(tmp, "vec.txt"), os.path.join(tmp, "out.o")
        flags = entry["command"].split(" -o ")[0]  # the compiler and its flags, without the output and input
        cmd = f"{flags} -fopt-info-vec-all={info} -o {obj} -c {path}"
        subprocess.run(cmd, shell=True, check=True, cwd=entry["directory"])
        lines = open(info).read().splitlines() if os.path.exists(info) else []
    vectorised, failed, reasons = set(), set(), collections.defaultdict(set)
    pattern = re.compile(re.escape(path) + r":(\d+):\d+: (.*)")
    for line in lines:
        m = pattern.search(line)
        if not m:
            continue
        at, msg = int(m.group(1)), m.group(2)
        if "loop vectorized" in msg:
            vectorised.add(at)
        elif "couldn't vectorize loop" in msg:
            failed.add(at)
        elif "not vectorized:" in msg and "consecutive inner loops" not in msg and "can throw" not in msg:
            reasons[at].add(re.sub(r"_\d+", "_N", msg.split("not vectorized:")[1].strip())[:70])
    source = open(path).read().splitlines()
    rows = []
    for at in sorted(failed - vectorised):
        text = source[at - 1].strip()
        if text.startswith("for"):
            rows.append(f"{at:6d}  {text[:72]:72s}  {'; '.join(sorted(reasons[at]))}")
    return rows


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("files", nargs="+")
    p.add_argument("--build", default=os.path.join(ROOT, "build"))
    a = p.parse_args()
    db_path = os.path.join(a.build, "compile_commands.json")
    if not os.path.exists(db_path):
        sys.exit(f"vectorize-report: {db_path} not found (configure the build first: scripts/dev.sh build)")
    db = {os.path.realpath(e["file"]): e for e in json.load(open(db_path))}
    for f in a.files:
        path = os.path.realpath(f if os.path.isabs(f) else os.path.join(ROOT, f))
        if path not in db:
            sys.exit(f"vectorize-report: {f} is not compiled in {db_path}")
        print(f"== {os.path.relpath(path, ROOT)}: loops not vectorised")
        for row in report(db[path], path):
            print(row)


if __name__ == "__main__":
    main()
