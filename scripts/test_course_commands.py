#!/usr/bin/env python3
"""Unit test of the course commands' Python (scripts/course.py and its modules)
on a tiny fake tree: stubbing a region, the fast forms an exercise removes,
"did you mean", the build's progress line and first error, the usage and the
refused `course new` arguments: python3 scripts/test_course_commands.py
(standard library only)."""
import contextlib
import io
import os
import pathlib
import sys
import tempfile
import unittest

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))
import course  # noqa: E402
import course_build  # noqa: E402
import course_registry  # noqa: E402
import course_stub  # noqa: E402

REGISTRY = """\
[ex02-sum]
title: the backward of sum
chapter: docs/02-autograd.md

[ex07-norm]
title: RMSNorm forward
chapter: docs/07-rmsnorm.md
"""

NORM = """\
#include "tensor/exercise.h"
void norm() {
  // BEGIN EXERCISE ex07-norm
  y = x;
  z = y;
  // END EXERCISE ex07-norm
}
\t// BEGIN EXERCISE ex07-norm
\tw = 1;
\t// END EXERCISE ex07-norm
"""

STUBBED = """\
#include "tensor/exercise.h"
void norm() {
  // BEGIN EXERCISE ex07-norm
  // Your code here (RMSNorm forward; docs/07-rmsnorm.md).
  ::ropegrad::exercise_not_implemented("ex07-norm", "RMSNorm forward", "docs/07-rmsnorm.md");
  // END EXERCISE ex07-norm
}
\t// BEGIN EXERCISE ex07-norm
\t// Your code here (RMSNorm forward; docs/07-rmsnorm.md).
\t::ropegrad::exercise_not_implemented("ex07-norm", "RMSNorm forward", "docs/07-rmsnorm.md");
\t// END EXERCISE ex07-norm
"""

FAST_FORMS = """\
FAST_FORM(Norm, "norm", "ex07-norm ex02-sum", "nn/fast/norm_fast.h nn/fast/norm_fast.cpp", "x")
FAST_FORM(Sum, "sum", "ex02-sum", "tensor/fast/sum_fast.h", "y")
"""


def write(root, files):
    for rel, text in files.items():
        path = pathlib.Path(root) / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)


def run_course(root, *args):
    """(exit status, stdout, stderr) of `course ARGS` run in ROOT."""
    out, err, cwd = io.StringIO(), io.StringIO(), os.getcwd()
    os.chdir(root)
    try:
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            try:
                rc = course.main(list(args))
            except SystemExit as stop:
                rc = stop.code
    finally:
        os.chdir(cwd)
    return rc, out.getvalue(), err.getvalue()


class FakeTree(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory()
        self.root = pathlib.Path(self.tmp.name) / "tree"
        write(self.root, {"course/exercises.txt": REGISTRY, "CMakeLists.txt": "ropegrad_add_folder(nn)\n",
                          "nn/norm.cpp": NORM, "tensor/fast_forms.def": FAST_FORMS,
                          "nn/fast/norm_fast.h": "", "nn/fast/norm_fast.cpp": "", "tensor/fast/sum_fast.h": ""})

    def tearDown(self):
        self.tmp.cleanup()

    def test_stub_replaces_each_region_at_its_indentation_and_removes_its_fast_forms(self):
        self.assertEqual(run_course(self.root, "stub", "ex07-norm"), (0, "", ""))
        self.assertEqual((self.root / "nn/norm.cpp").read_text(), STUBBED)
        self.assertFalse((self.root / "nn/fast/norm_fast.h").exists())
        self.assertTrue((self.root / "tensor/fast/sum_fast.h").exists())

    def test_stub_refuses_an_exercise_without_a_region(self):
        rc, _, err = run_course(self.root, "stub", "ex02-sum")
        self.assertEqual((rc, err), (1, "course: no region marked 'BEGIN EXERCISE ex02-sum' in the sources\n"))

    def test_fast_form_files(self):
        self.assertEqual(course_stub.fast_form_files(self.root, "ex02-sum"),
                         ["nn/fast/norm_fast.cpp", "nn/fast/norm_fast.h", "tensor/fast/sum_fast.h"])
        self.assertEqual(course_stub.fast_form_files(self.root, "ex07-norm"),
                         ["nn/fast/norm_fast.cpp", "nn/fast/norm_fast.h"])
        self.assertEqual(course_stub.fast_form_files(self.root, "ex07"), [])

    def test_did_you_mean(self):
        rc, _, err = run_course(self.root, "check", "ex07-nrom")
        self.assertEqual((rc, err), (2, "course: no exercise 'ex07-nrom'; did you mean ex07-norm? "
                                        "(scripts/dev.sh course list shows them all)\n"))
        rc, _, err = run_course(self.root, "chek")
        self.assertEqual(rc, 2)
        self.assertTrue(err.startswith("course: no command 'chek'; did you mean 'check'?\nCourse mode: "))

    def test_new_refuses_careless_arguments_and_writes_nothing(self):
        full = self.root.parent / "full"
        write(full, {"notes.txt": ""})
        for args, message in [([], "new needs a directory first"), (["--from", "x"], "new needs a directory first"),
                              ([str(full)], "is not empty"), (["ws", "--frm"], "unknown option '--frm'"),
                              (["../ws", "--from"], "--from needs an exercise id"),
                              (["../ws", "--from", "ex0.-norm"], "no exercise 'ex0.-norm'"),
                              (["inside"], "lies inside the repository")]:
            rc, _, err = run_course(self.root, "new", *args)
            self.assertIn(message, err)
            self.assertIn(rc, (1, 2))
        self.assertEqual(sorted(p.name for p in self.root.parent.iterdir()), ["full", "tree"])
        self.assertEqual(os.listdir(full), ["notes.txt"])

    def test_usage(self):
        rc, out, _ = run_course(self.root, "help")
        self.assertEqual(rc, 0)
        self.assertTrue(out.endswith('  ::ropegrad::exercise_not_implemented("<id>", "<title>", "<chapter>");\n'))
        self.assertEqual(run_course(self.root)[0], 2)


class Helpers(unittest.TestCase):
    def test_edit_distance_and_closest(self):
        self.assertEqual(course_registry.edit_distance("kitten", "sitting"), 3)
        self.assertEqual(course_registry.edit_distance("", "abc"), 3)
        names = ["ex07-rmsnorm", "ex07-rmsnorm-backward", "ex08-swiglu"]
        self.assertEqual(course_registry.closest("ex07-rmsnrom", names), ["ex07-rmsnorm"])
        self.assertEqual(course_registry.closest("rms", names), ["ex07-rmsnorm", "ex07-rmsnorm-backward"])
        self.assertEqual(course_registry.closest("ex", [f"ex{k:02d}-long-name" for k in range(7)]), [])
        self.assertEqual(course_registry.closest("zzz", names), [])

    def test_progress_what(self):
        self.assertEqual(course_build.progress_what("[ 10%] Building CXX object CMakeFiles/ropegrad.dir/nn/rmsnorm.cpp.o"),
                         "Building nn/rmsnorm.cpp")
        self.assertEqual(course_build.progress_what("[100%] Linking CXX executable course-check"),
                         "Linking  course-check")

    def test_first_error(self):
        with tempfile.TemporaryDirectory() as tmp:
            log = pathlib.Path(tmp) / "build.log"
            log.write_text("[ 10%] Building\n../../nn/a.cpp:3:1: error: no\n   3 | x\n     | ^\n"
                           "more\nand more\n/r/nn/b.cpp:4:1: error: again\n")
            err = io.StringIO()
            with contextlib.redirect_stderr(err):
                course_build.first_error(log, "/r")
            self.assertEqual(err.getvalue(), "  nn/a.cpp:3:1: error: no\n     3 | x\n       | ^\n  more\n"
                                             "  (and 1 more error lines after it)\n")


if __name__ == "__main__":
    unittest.main()
