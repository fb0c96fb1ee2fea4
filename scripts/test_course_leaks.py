#!/usr/bin/env python3
"""Unit test of scripts/course_leaks.py and scripts/course_registry.py on a tiny
fake tree: python3 scripts/test_course_leaks.py (standard library only)."""
import contextlib
import io
import pathlib
import sys
import tempfile
import unittest

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))
import course_leaks  # noqa: E402
import course_problems  # noqa: E402
import course_registry  # noqa: E402

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
# The library folders, as the real CMakeLists.txt names them (course_registry.library_dirs).
CMAKELISTS = "ropegrad_add_folder(tensor fmt::fmt)\nropegrad_add_folder(nn ropegrad_tensor)\n"

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
            "course/exercises.txt": REGISTRY, "CMakeLists.txt": CMAKELISTS,
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
        by_id, problems = course_registry.all_regions(self.root)
        self.assertEqual(problems, [])
        self.assertEqual(sorted(by_id), ["ex07-norm", "ex12-softmax"])
        self.assertEqual(course_registry.solution_lines(by_id["ex07-norm"]), [
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
        _, problems = course_registry.file_regions("x.cpp", "// BEGIN EXERCISE ex01-a\n// END EXERCISE ex01-b\n")
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


PROBLEMS = """\
[ch07-norm-gap]
title: a computed one
chapter: docs/07.md
answer: integer
value: computed
hint: count.

[ch07-mean]
title: a fixed one
chapter: docs/07.md
answer: number 1%
value: fixed
hint: derive.

[ch07-word]
title: a fixed text
chapter: docs/07.md
answer: text
value: fixed
hint: name it.

[ch07-small]
title: too short to hide
chapter: docs/07.md
answer: integer
value: fixed
hint: count.

[ch12-later]
title: a fixed one of a later chapter
chapter: docs/12.md
answer: integer
value: fixed
hint: count.
"""
ANSWERS = """\
ch07-norm-gap: 3
ch07-mean: 0.52341
ch07-word: gradient
ch07-small: 12
ch12-later: 123456
"""
PROBLEM_CHAPTER = """\
## Problems

**ch07-mean** · What is it?

<!-- problem-solution: ch07-mean -->
??? note "Worked solution (ch07-mean)"

    It is 0.52341.

<!-- end problem-solution -->
The end.
"""


class Problems(unittest.TestCase):
    """The problems' part of strip and leaks (docs/course.md, Problems)."""

    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory()
        self.root = pathlib.Path(self.tmp.name) / "root"
        self.ws = pathlib.Path(self.tmp.name) / "ws"
        files = {"nn/norm.cpp": NORM, "tensor/softmax.cpp": SOFTMAX, "course/exercises.txt": REGISTRY, "CMakeLists.txt": CMAKELISTS,
                 "course/problems.txt": PROBLEMS, "course/problem_answers.txt": ANSWERS}
        write(self.root, files)
        write(self.ws, dict(files, **{
            ".course/stubbed": "ex07-norm\nex12-softmax\n",
            "nn/norm.cpp": "void norm() {\n  // BEGIN EXERCISE ex07-norm\n  stub();\n  // END EXERCISE ex07-norm\n}\n",
            "tensor/softmax.cpp": "// BEGIN EXERCISE ex12-softmax\nstub();\n// END EXERCISE ex12-softmax\n",
            "docs/07.md": PROBLEM_CHAPTER,
        }))

    def tearDown(self):
        self.tmp.cleanup()

    def test_strip_encodes_the_fixed_answers_and_removes_the_rest(self):
        rc, out, _ = run("strip", str(self.ws))
        self.assertEqual(rc, 0, out)
        self.assertIn("1 worked solution(s) of problems", out)
        self.assertFalse((self.ws / "course" / "problem_answers.txt").exists())
        self.assertEqual((self.ws / "docs" / "07.md").read_text(), PROBLEM_CHAPTER.replace(
            PROBLEM_CHAPTER[PROBLEM_CHAPTER.index("<!-- problem-solution"):PROBLEM_CHAPTER.index("The end.")],
            "<!-- worked solution of ch07-mean removed in this workspace: scripts/dev.sh course new -->\n"))
        self.assertEqual((self.ws / ".course" / "problems").read_text().split(),
                         ["ch07-norm-gap", "ch07-mean", "ch07-word", "ch07-small", "ch12-later"])
        answers = (self.ws / ".course" / "answers").read_text()
        self.assertNotIn("0.52341", answers)
        self.assertNotIn("gradient", answers)
        decoded = course_problems.workspace_answers(self.ws)
        self.assertEqual(decoded, {"ch07-mean": "0.52341", "ch07-word": "gradient", "ch07-small": "12",
                                   "ch12-later": "123456"})
        rc, out, _ = run("leaks", str(self.root), str(self.ws))
        self.assertEqual(rc, 0, out)
        self.assertIn("the worked solutions of 5 open problem(s) and 3 fixed answer(s) in plain text "
                      "(1 too short to look for)", out)

    def test_leaks_finds_the_answers_file_a_worked_solution_and_plain_answers(self):
        run("strip", str(self.ws))
        write(self.ws, {
            "course/problem_answers.txt": ANSWERS,
            "docs/07.md": PROBLEM_CHAPTER,
            "notes.txt": "close: 0.52 and 0.5234 but also 0.523409, and 123,456 and a Gradient here\n"
                         "not these: 10.52341 0.52341234e5 0.5 12 gradients 1234567\n",
        })
        rc, out, _ = run("leaks", str(self.root), str(self.ws))
        self.assertEqual(rc, 1)
        self.maxDiff = None
        found = sorted(out.strip().split("\n"))
        self.assertEqual(found, sorted([
            "course leaks: course/problem_answers.txt:0: the problems' reference answers",
            "course leaks: course/problem_answers.txt:2: the fixed answer of ch07-mean in plain text: 0.52341",
            "course leaks: course/problem_answers.txt:3: the fixed answer of ch07-word in plain text: gradient",
            "course leaks: course/problem_answers.txt:5: the fixed answer of ch12-later in plain text: 123456",
            "course leaks: docs/07.md:5: the worked solution of ch07-mean",
            "course leaks: docs/07.md:8: the fixed answer of ch07-mean in plain text: 0.52341",
            "course leaks: notes.txt:1: the fixed answer of ch07-word in plain text: Gradient",
            "course leaks: notes.txt:1: the fixed answer of ch07-mean in plain text: 0.523409",
            "course leaks: notes.txt:1: the fixed answer of ch12-later in plain text: 123,456",
        ]))  # not 0.52 or 0.5234 (fewer digits than the reference), 12 (too short), gradients, 1234567

    def test_with_from_only_later_chapters_are_open(self):
        (self.ws / ".course" / "stubbed").write_text("ex12-softmax\n")
        rc, out, _ = run("strip", str(self.ws))
        self.assertEqual(rc, 0, out)
        self.assertEqual((self.ws / ".course" / "problems").read_text().split(), ["ch12-later"])
        self.assertIn("<!-- problem-solution: ch07-mean -->", (self.ws / "docs" / "07.md").read_text())
        rc, out, _ = run("leaks", str(self.root), str(self.ws))
        self.assertEqual(rc, 0, out)  # chapter 7's answers are not open: its worked solution stays


if __name__ == "__main__":
    unittest.main()
