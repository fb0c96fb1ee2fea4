#!/usr/bin/env python3
"""Unit test of scripts/course_leaks.py and scripts/course_regions.py on a tiny
fake tree: python3 scripts/test_course_leaks.py (standard library only)."""
import contextlib
import io
import pathlib
import sys
import tempfile
import unittest

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))
import course_leaks  # noqa: E402
import course_regions  # noqa: E402

NORM = """\
#include "tensor/exercise.h"
double helper_shared_elsewhere(const double* x, int n);
void norm(const double* x, double* y, int n) {
  // BEGIN EXERCISE ex07-norm
  double total_of_squares = accumulate_squares(x, n);
  const double scale = 1.0 / std::sqrt(total_of_squares / n);
  double helper_shared_elsewhere(const double* x, int n);
  for (int i = 0; i < n; ++i) {
    y[i] = x[i] * scale;
  }
  return;
  // END EXERCISE ex07-norm
}
void norm_backward(const double* x, double* dx, int n) {
    // BEGIN EXERCISE ex07-norm
    dx[0] = x[0] * backward_factor(x, n);
    // END EXERCISE ex07-norm
}
"""
FAST = """\
// a fast form outside every region
void norm_fast(const double* x, double* y, int n) {
  for (int i = 0; i < n; ++i) {
    y[i] = simd::run_best(x, i);
  }
}
"""
SOFTMAX = """\
void softmax(const float* x, float* y, int n) {
  // BEGIN EXERCISE ex12-softmax
  const float m = max_of(x, n);  // the one-pass helper
  y[0] = softmax_first_entry(x, m, n);
  // END EXERCISE ex12-softmax
}
"""
REGISTRY = """\
[ex07-norm]
title: a norm
chapter: docs/07.md

[ex12-softmax]
title: softmax
chapter: docs/12.md
"""
CHAPTER = """\
# Norms

Some prose that mentions `accumulate_squares` but no whole line.

<!-- solution: ex07-norm -->
??? note "ropegrad's solution (ex07-norm)"

    ```cpp
    double total_of_squares = accumulate_squares(x, n);
    ```

<!-- end solution -->

<!-- solution: ex12-softmax -->
??? note "ropegrad's solution (ex12-softmax)"

    ```cpp
    y[0] = softmax_first_entry(x, m, n);
    ```

<!-- end solution -->
The end.
"""


def write(root, files):
    for rel, text in files.items():
        p = pathlib.Path(root) / rel
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_text(text)


def run(*argv):
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        rc = course_leaks.main(list(argv))
    return rc, out.getvalue(), err.getvalue()


class FakeTree(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory()
        self.root = pathlib.Path(self.tmp.name) / "root"
        self.ws = pathlib.Path(self.tmp.name) / "ws"
        write(self.root, {
            "nn/norm.cpp": NORM, "nn/fast/norm_fast.cpp": FAST, "tensor/softmax.cpp": SOFTMAX,
            "tests/not_library.cpp": "double total_of_squares = accumulate_squares(x, n);\n",
            "course/exercises.txt": REGISTRY,
        })
        # a workspace of ex07-norm only; the leaks are planted in its files
        write(self.ws, {
            ".course/stubbed": "ex07-norm\n",
            "nn/norm.cpp": "void norm() {\n  // BEGIN EXERCISE ex07-norm\n  stub();\n  // END EXERCISE ex07-norm\n}\n",
            "docs/07.md": CHAPTER,
            "course/mutations/ex07-norm--wrong.patch": "-  dx[0] = x[0] * backward_factor(x, n);\n+  dx[0] = 0;\n",
            "course/checks/ok.cpp": "  for (int i = 0; i < n; ++i) {\n  y[0] = softmax_first_entry(x, m, n);\n",
            "data/blob.bin": "\x00\x01 const double scale = 1.0 / std::sqrt(total_of_squares / n); \x02",
            ".git/objects/x": "double total_of_squares = accumulate_squares(x, n);\n",
        })

    def tearDown(self):
        self.tmp.cleanup()

    def test_regions_are_dedented_and_joined(self):
        by_id, problems = course_regions.all_regions(self.root)
        self.assertEqual(problems, [])
        self.assertEqual(sorted(by_id), ["ex07-norm", "ex12-softmax"])
        self.assertEqual(course_regions.solution_lines(by_id["ex07-norm"]), [
            "double total_of_squares = accumulate_squares(x, n);",
            "const double scale = 1.0 / std::sqrt(total_of_squares / n);",
            "double helper_shared_elsewhere(const double* x, int n);",
            "for (int i = 0; i < n; ++i) {",
            "  y[i] = x[i] * scale;",
            "}",
            "return;",
            "// ...",
            "dx[0] = x[0] * backward_factor(x, n);",
        ])
        rc, out, _ = run("regions", str(self.root), "ex12-softmax")
        self.assertEqual(rc, 0)
        self.assertEqual(out.split("\n")[0], "== ex12-softmax: tensor/softmax.cpp:2-5")

    def test_marker_problems_are_reported(self):
        _, problems = course_regions.file_regions("x.cpp", "// BEGIN EXERCISE ex01-a\n// END EXERCISE ex01-b\n")
        self.assertEqual(len(problems), 2)

    def test_distinctive_lines(self):
        lines = course_leaks.distinctive_lines(self.root)["ex07-norm"]
        self.assertEqual(sorted(lines), sorted([
            "double total_of_squares = accumulate_squares(x, n);",
            "const double scale = 1.0 / std::sqrt(total_of_squares / n);",
            "y[i] = x[i] * scale;",
            "dx[0] = x[0] * backward_factor(x, n);",
        ]))  # not the loop header (too few words), `return;`, `}` or the declaration found elsewhere
        self.assertEqual(lines["dx[0] = x[0] * backward_factor(x, n);"], ("nn/norm.cpp", 16))

    def test_a_trailing_comment_is_not_part_of_the_key(self):
        self.assertEqual(course_leaks.key("  y[i] = x[i] * scale;  // the gain"), "y[i] = x[i] * scale;")
        self.assertEqual(course_leaks.key("  return out;  // the product of both"), "return out;  // the product of both")
        self.assertTrue(course_leaks.trivial("for (int64_t i = 0; i < n; ++i) {"))
        self.assertFalse(course_leaks.trivial("total += weight[k];"))

    def test_leaks_finds_every_file_but_git_and_only_stubbed_exercises(self):
        rc, out, _ = run("leaks", str(self.root), str(self.ws))
        self.assertEqual(rc, 1)
        found = sorted(l.split(": line of")[0] for l in out.strip().split("\n"))
        self.assertEqual(found, [
            "course leaks: course/mutations/ex07-norm--wrong.patch:1",
            "course leaks: data/blob.bin:1",
            "course leaks: docs/07.md:9",
        ])  # ex12-softmax is not stubbed: its line in course/checks/ok.cpp and the chapter is no leak
        self.assertIn("line of ex07-norm's region: double total_of_squares = accumulate_squares(x, n);", out)

    def test_strip_then_no_leaks(self):
        rc, out, _ = run("strip", str(self.ws))
        self.assertEqual(rc, 0)
        self.assertFalse((self.ws / "course" / "mutations").exists())
        text = (self.ws / "docs" / "07.md").read_text()
        self.assertIn("<!-- solution of ex07-norm removed in this workspace: scripts/dev.sh course new -->\n\n"
                      "<!-- solution: ex12-softmax -->", text)
        self.assertNotIn("accumulate_squares(x, n)", text)
        self.assertIn("softmax_first_entry", text)  # not stubbed: kept
        (self.ws / "data" / "blob.bin").unlink()
        rc, out, _ = run("leaks", str(self.root), str(self.ws))
        self.assertEqual(rc, 0, out)
        self.assertIn("course leaks: none: 4 distinctive line(s) of 1 stubbed exercise(s)", out)

    def test_strip_keeps_an_unended_block_and_fails(self):
        (self.ws / "docs" / "07.md").write_text("<!-- solution: ex07-norm -->\ncode\n")
        rc, _, err = run("strip", str(self.ws))
        self.assertEqual(rc, 1)
        self.assertIn("has no <!-- end solution -->", err)
        self.assertEqual((self.ws / "docs" / "07.md").read_text(), "<!-- solution: ex07-norm -->\ncode\n")

    def test_simd(self):
        rc, out, _ = run("simd", str(self.root))
        self.assertEqual(rc, 1)
        self.assertEqual(out.strip().split("\n"), [
            "course simd: tensor/softmax.cpp:3: ex12-softmax: const float m = max_of(x, n);  // the one-pass helper"])
        (self.root / "tensor" / "softmax.cpp").write_text(SOFTMAX.replace("max_of(x, n)", "x[0]"))
        rc, out, _ = run("simd", str(self.root))
        self.assertEqual(rc, 0, out)  # simd:: in nn/fast/, outside every region, is allowed

    def test_usage(self):
        self.assertEqual(run("leaks", "only-one")[0], 2)


if __name__ == "__main__":
    unittest.main()
