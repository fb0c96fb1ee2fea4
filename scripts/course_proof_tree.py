"""The tree scripts/course_proof.py edits in place: a backup of every file it
may change, put back (only the files that differ: a copy of an unchanged file
would make the build recompile everything that includes it, tensor/exercise.h
every check), its builds, and the programs it runs, stopped when it stops."""
import filecmp
import os
import pathlib
import re
import shutil
import subprocess
import sys
import tempfile
import threading

import course_build

RUNNING = set()  # the programs running now, to stop when the proof is stopped
RUNNING_LOCK = threading.Lock()
STOPPED = threading.Event()  # once set, no program starts: the proof is putting the sources back


def run(command, cwd=None, env=None, merge=True):
    """(exit status, output) of COMMAND, its stdout and (with MERGE) stderr together."""
    if STOPPED.is_set():
        return 1, ""
    process = subprocess.Popen(command, cwd=cwd, env=env, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                               stderr=subprocess.STDOUT if merge else subprocess.DEVNULL,
                               text=True, errors="replace")
    with RUNNING_LOCK:
        RUNNING.add(process)
    try:
        output, _ = process.communicate()
    except BaseException:  # stopped meanwhile: so is the program
        process.terminate()
        raise
    finally:
        with RUNNING_LOCK:
            RUNNING.discard(process)
    return process.returncode, output


def output_of(command, **kwargs):
    """COMMAND's output, as $(...) gives it: without its trailing newlines, whatever its exit status."""
    return run(command, **kwargs)[1].rstrip("\n")


def stop_running():
    STOPPED.set()
    with RUNNING_LOCK:
        for process in RUNNING:
            process.terminate()


def indented(text):
    """TEXT's lines, each after 8 spaces (a failure's output under its FAIL line)."""
    return "\n".join("        " + line for line in text.split("\n"))


def cut(text, n):
    """The first N bytes of TEXT, as `cut -c1-N` gives them."""
    return text.encode()[:n].decode(errors="ignore")


def field(path, key):
    """The values of PATH's lines "KEY: value", in order."""
    return [m.group(1) for m in re.finditer(rf"^{key}: *(.*)$", pathlib.Path(path).read_text(), re.M)]


class Tree:
    def __init__(self, root, build_dir, files):
        self.root, self.build_dir, self.files = root, build_dir, files
        self.jobs = course_build.jobs()
        self.backup = tempfile.mkdtemp()
        for f in files:
            os.makedirs(os.path.join(self.backup, os.path.dirname(f)), exist_ok=True)
            shutil.copy(f, os.path.join(self.backup, f))
        self.temporaries = []
        self.workers = []  # threads that edit the tree too (course_proof_mutations.py)

    def restore(self, tree=None):
        """Puts back, in TREE (this one by default), every file that differs from its backup."""
        for f in self.files:
            here = os.path.join(tree or self.root, f)
            if not (os.path.isfile(here) and filecmp.cmp(os.path.join(self.backup, f), here, shallow=False)):
                shutil.copy(os.path.join(self.backup, f), here)

    def put_back(self, f):
        shutil.copy(os.path.join(self.backup, f), f)

    def temporary_dir(self):
        """A new directory, removed when the proof ends: mktemp -d's, named as the
        shell proof's were (a check's output may show a path's length)."""
        path = subprocess.run(["mktemp", "-d"], stdout=subprocess.PIPE, text=True, check=True).stdout.strip()
        self.temporaries.append(path)
        return path

    def close(self):
        """Stops what still runs, lets the workers end, and puts every file back."""
        stop_running()
        for thread in self.workers:
            thread.join(timeout=60)
        self.restore()
        for path in [self.backup] + self.temporaries:
            shutil.rmtree(path, ignore_errors=True)

    def run_build(self, target, build_dir=None, jobs=None):
        """(whether TARGET built, the build's output), the output also in BUILD_DIR/course-proof-build.log."""
        build_dir = build_dir or self.build_dir
        rc, output = run(["cmake", "--build", build_dir, f"-j{jobs or self.jobs}", "--target", target])
        pathlib.Path(f"{build_dir}/course-proof-build.log").write_text(output)
        return rc == 0, output

    def build(self):
        """Builds course-check here; a failure prints the lines naming an error (at most 20) on stderr."""
        built, output = self.run_build("course-check")
        errors = [line for line in output.split("\n") if "error" in line][:20]
        if not built and errors:
            course_build.say("\n".join(errors), sys.stderr)
        return built

    def check(self, exercise_id, *args, build_dir=None):
        """(exit status, output) of course-check for EXERCISE_ID."""
        return run([f"{build_dir or self.build_dir}/course/course-check", exercise_id, *args])
