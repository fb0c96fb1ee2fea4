#!/usr/bin/env python3
"""Unit test of scripts/course_registry.py on tiny fake trees, malformed
registries included: python3 scripts/test_course_registry.py (standard library
only). With ROPEGRAD_COURSE_CHECK=<course-check> (CTest sets it) it also checks
that course-check's C++ reader (course/exercises.cpp) reads every field and the
region files of every exercise of the real tree as this module does."""
import contextlib
import io
import os
import pathlib
import subprocess
import sys
import tempfile
import unittest

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))
import course_registry  # noqa: E402

ROOT = pathlib.Path(__file__).resolve().parent.parent

REGISTRY = """\
# a comment, then a blank line

[ex02-sum]
title: the backward of sum
chapter: docs/02-autograd.md
hint: first line;
  hint:   second line   \r
checks: ignored

[ex07-norm]
  title : RMSNorm forward
chapter: docs/07-rmsnorm.md
"""

CMAKELISTS = """\
function(ropegrad_add_folder name)
endfunction()
ropegrad_add_folder(tensor fmt::fmt)
  ropegrad_add_folder( nn ropegrad_tensor)  # indented, a space after the parenthesis
add_subdirectory(course)
"""

NORM = """\
void norm() {
  // BEGIN EXERCISE ex07-norm
  y = x;
  // END EXERCISE ex07-norm
}
"""


def write(root, files):
    for rel, text in files.items():
        p = pathlib.Path(root) / rel
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_text(text)


def run_cli(root, *args):
    out, err = io.StringIO(), io.StringIO()
    cwd = os.getcwd()
    os.chdir(root)
    try:
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            rc = course_registry.main(["course_registry.py", *args])
    finally:
        os.chdir(cwd)
    return rc, out.getvalue(), err.getvalue()


class Registry(unittest.TestCase):
    def test_fields_in_order(self):
        got = course_registry.parse_exercises(REGISTRY)
        self.assertEqual([(e.id, e.title, e.chapter, e.hint, e.line) for e in got], [
            ("ex02-sum", "the backward of sum", "docs/02-autograd.md", "first line; second line", 3),
            ("ex07-norm", "RMSNorm forward", "docs/07-rmsnorm.md", "", 10)])

    def assert_malformed(self, text, message):
        with self.assertRaises(course_registry.RegistryError) as caught:
            course_registry.parse_exercises(text)
        self.assertEqual(str(caught.exception), message)

    def test_malformed_blocks_name_file_and_line(self):
        ok = "[ex01-a]\ntitle: A\nchapter: docs/01.md\n"
        self.assert_malformed(ok + "[ex1-b]\n", "course/exercises.txt:4: expected [exNN-name], got '[ex1-b]'")
        self.assert_malformed(ok + "[ex01-B]\n", "course/exercises.txt:4: expected [exNN-name], got '[ex01-B]'")
        self.assert_malformed("title: A\n", "course/exercises.txt:1: expected 'key: value', got 'title: A'")
        self.assert_malformed(ok + "just words\n", "course/exercises.txt:4: expected 'key: value', got 'just words'")
        self.assert_malformed(ok + "titel: B\n", "course/exercises.txt:4: unknown key 'titel'")
        self.assert_malformed(ok + "\n[ex01-a]\n", "course/exercises.txt:5: ex01-a again (first at line 1)")
        self.assert_malformed(ok + "[ex02-b]\ntitle: B\n", "course/exercises.txt:4: ex02-b needs a title and a chapter")
        self.assert_malformed(ok + "[ex02-b]\nchapter: docs/02.md\ntitle:\n",
                              "course/exercises.txt:4: ex02-b needs a title and a chapter")


class Tree(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory()
        self.root = pathlib.Path(self.tmp.name)
        write(self.root, {
            "CMakeLists.txt": CMAKELISTS, "course/exercises.txt": REGISTRY,
            "nn/norm.cpp": NORM,
            "nn/fast/norm_fast.h": NORM.replace("y = x;", "y = fast(x);"),
            "tensor/sum.cpp": "// BEGIN EXERCISE ex02-sum\nsum();\n// END EXERCISE ex02-sum\n",
            "tensor/notes.txt": NORM,                 # not a source
            "tests/norm_test.cpp": NORM,              # not a library folder
            "train/trainer.cpp": NORM,                # a folder CMakeLists.txt does not build
            "nn/broken.cpp": "// BEGIN EXERCISE ex07-norm\n// END EXERCISE ex02-sum\n",
            "nn/loose.cpp": "x; // BEGIN EXERCISE ex07-norm\n// END EXERCISE ex07-norm\n",
        })

    def tearDown(self):
        self.tmp.cleanup()

    def test_library_folders_come_from_cmakelists(self):
        self.assertEqual(course_registry.library_dirs(self.root), ["tensor", "nn"])

    def test_regions_and_their_files(self):
        by_id, problems = course_registry.all_regions(self.root)
        self.assertEqual(course_registry.files_of(by_id, "ex07-norm"), ["nn/fast/norm_fast.h", "nn/norm.cpp"])
        self.assertEqual(course_registry.files_of(by_id, "ex02-sum"), ["tensor/sum.cpp"])
        self.assertEqual(course_registry.files_of(by_id, "ex09-none"), [])
        self.assertEqual(problems, ["nn/broken.cpp:2: END EXERCISE ex02-sum without its BEGIN",
                                    "nn/broken.cpp:1: BEGIN EXERCISE ex07-norm is never ended",
                                    "nn/loose.cpp:2: END EXERCISE ex07-norm without its BEGIN"])
        self.assertEqual(course_registry.solution_lines(by_id["ex07-norm"]), ["y = fast(x);", "// ...", "y = x;"])

    def test_command_line(self):
        self.assertEqual(run_cli(self.root, "ids"), (0, "ex02-sum\nex07-norm\n", ""))
        self.assertEqual(run_cli(self.root, "field", "ex07-norm", "title"), (0, "RMSNorm forward\n", ""))
        self.assertEqual(run_cli(self.root, "field", "ex02-sum", "hint"), (0, "first line; second line\n", ""))
        self.assertEqual(run_cli(self.root, "files", "ex07-norm"), (0, "nn/fast/norm_fast.h\nnn/norm.cpp\n", ""))
        self.assertEqual(run_cli(self.root, "region-files"),
                         (0, "nn/fast/norm_fast.h\nnn/norm.cpp\ntensor/sum.cpp\n", ""))
        self.assertEqual(run_cli(self.root, "table")[1],
                         "ex02-sum\tthe backward of sum\tdocs/02-autograd.md\tfirst line; second line\ttensor/sum.cpp\n"
                         "ex07-norm\tRMSNorm forward\tdocs/07-rmsnorm.md\t\tnn/fast/norm_fast.h;nn/norm.cpp\n")
        self.assertEqual(run_cli(self.root, "field", "ex03-none", "title"), (2, "", "course: no exercise 'ex03-none'\n"))
        self.assertEqual(run_cli(self.root, "field", "ex02-sum", "line")[0], 2)
        write(self.root, {"course/exercises.txt": REGISTRY + "oops\n"})
        self.assertEqual(run_cli(self.root, "ids"),
                         (2, "", "course: course/exercises.txt:13: expected 'key: value', got 'oops'\n"))


@unittest.skipUnless(os.environ.get("ROPEGRAD_COURSE_CHECK"), "ROPEGRAD_COURSE_CHECK (course-check's path) not set")
class CxxReaderAgrees(unittest.TestCase):
    def test_every_field_of_every_exercise(self):
        cxx = subprocess.run([os.environ["ROPEGRAD_COURSE_CHECK"], "--registry-table"], capture_output=True,
                             text=True, check=True).stdout.split("\n")
        python = course_registry.table_rows(ROOT) + [""]
        self.assertGreater(len(python), 20)
        for want, got in zip(python, cxx):
            self.assertEqual(got, want)
        self.assertEqual(len(cxx), len(python))


if __name__ == "__main__":
    unittest.main()
