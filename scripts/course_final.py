"""`course final [--write-reference]` (scripts/course.py): when every exercise
passes, the learner's LM trained on Debian's fortunes with their tokenizer,
against the reference's run at the same seed (course/final/reference.trace)."""
import os
import pathlib
import re
import subprocess
import sys

import course_build
from course_build import fail, say

FORTUNES = pathlib.Path("/usr/share/games/fortunes")
CORPUS_BYTES = 400000


def every_exercise_done(build_dir):
    """True when course-check --status says N of N; else prints its table and says why not."""
    status = subprocess.run([f"{build_dir}/course/course-check", "--status"], stdout=subprocess.PIPE,
                            stderr=subprocess.STDOUT, text=True, errors="replace").stdout
    if re.search(r"^([0-9]+) of \1 exercises done$", status, re.M):
        return True
    say(status.rstrip("\n"))
    say("course final: every exercise must pass first (the table above says which do not)", sys.stderr)
    return False


def write_corpus(out):
    """The corpus: the first 400 kB of the fortunes, files in name order, each
    '%' separator line becoming the special token."""
    text = b""
    for name in sorted(os.listdir(FORTUNES), key=os.fsencode):  # as ls | LC_ALL=C sort
        path = FORTUNES / name
        if not name.startswith(".") and not name.endswith((".dat", ".u8")) and path.is_file():
            text += path.read_bytes()
    lines = text.removesuffix(b"\n").split(b"\n") if text else []
    fortunes = b"".join((b"<|endoftext|>" if line == b"%" else line) + b"\n" for line in lines)
    (out / "fortunes.txt").write_bytes(fortunes)
    (out / "corpus.txt").write_bytes(fortunes[:CORPUS_BYTES])


def cmd_final(args, build_dir):
    course_build.build_checks(build_dir)  # every exercise first: the final run uses all of them
    if not every_exercise_done(build_dir):
        return 1
    with course_build.BuildLock(build_dir):
        if course_build.build_target(build_dir, "course-final"):
            course_build.first_error(f"{build_dir}/course-build.log")
            fail(f"course final: the build failed (all of it in {build_dir}/course-build.log)")
    if not FORTUNES.is_dir():
        fail("course final: Debian's fortunes are missing: apt-get install fortunes")
    out = pathlib.Path("runs/course-final")
    out.mkdir(parents=True, exist_ok=True)
    write_corpus(out)
    # One OpenBLAS kernel and one thread, as the book's outputs: the float32
    # run then repeats on every x86-64 CPU with AVX2 and FMA.
    os.environ.update(OPENBLAS_CORETYPE="Haswell", OPENBLAS_NUM_THREADS="1", ROPEGRAD_NUM_THREADS="1")
    final = [f"{build_dir}/course/course-final", "--corpus", f"{out}/corpus.txt", "--out", str(out)]
    if args[:1] == ["--write-reference"]:
        # The reference's plain forms, which are what a learner writes.
        return subprocess.run(final + ["--write-reference", "course/final/reference.trace"],
                              env={**os.environ, "ROPEGRAD_FAST_FORMS": "0"}).returncode
    return subprocess.run(final + ["--reference", "course/final/reference.trace"]).returncode
