"""Course mode: the learner writes each step; the checks say when it is right.

  scripts/dev.sh course list                    the exercises, in the book's order
  scripts/dev.sh course new DIR [--from ID]     a workspace: a copy of this tree with
                                                exercise ID and every later one stubbed
                                                (all of them without --from)
  scripts/dev.sh course check ID [--verbose]    build what the checks need, run ID's checks
                                                (chapter 21's also under mpirun -np 2 and 3
                                                when build-mpi exists: scripts/dev.sh test-mpi)
  scripts/dev.sh course status                  every exercise: done / failing / blocked / not started
  scripts/dev.sh course final [--write-reference]
                                                when every exercise passes: your LM trained on
                                                Debian's fortunes with your tokenizer, against
                                                the reference's run at the same seed
  scripts/dev.sh course stub ID...              stub exercises in place (undo: git checkout)
  scripts/dev.sh course problems [CHAPTER]      the book's problems (course/problems.txt), of one
                                                chapter (17, or ch17) or all
  scripts/dev.sh course answer ID [VALUE]       the problem, or whether VALUE is its answer: right, or
                                                wrong with a hint (the library computes the answer)
  scripts/dev.sh course proof                   CI: every stub fails its checks, every
                                                mutation in course/mutations is caught

Run from the root of the repository or of a workspace. Each exercise's
reference solution sits between "BEGIN EXERCISE <id>" and "END EXERCISE <id>"
comments; a stub keeps the two markers and puts one call in between:
  ::ropegrad::exercise_not_implemented("<id>", "<title>", "<chapter>");
"""
# The commands' logic, all of it; scripts/course.sh runs this file
# (scripts/course_workspace.py: `new`; scripts/course_final.py: `final`).
import os
import pathlib
import re
import shutil
import subprocess
import sys

import course_build
import course_final
import course_registry
import course_stub
import course_workspace
from course_build import fail, say

SCRIPTS = pathlib.Path(__file__).resolve().parent
COMMANDS = ["list", "new", "check", "status", "final", "stub", "proof", "problems", "answer"]


def build_dir():
    return os.environ.get("ROPEGRAD_COURSE_BUILD") or "build"


def ids():
    return course_registry.exercise_ids(".")


def first_tokenizer_id():
    """Where CS336's assignment begins: the first ex19 (tokenizer) exercise."""
    return next((i for i in ids() if i.startswith("ex19-")), "")


def is_option(word):
    return not word or word.startswith("-")


def run(command, **kwargs):
    """COMMAND's exit status; 127 when there is no such program, as a shell says."""
    try:
        return subprocess.run(command, **kwargs).returncode
    except FileNotFoundError:
        say(f"course: {command[0]}: command not found", sys.stderr)
        return 127


def exec_python(script, *args):
    """Replaces this process by one of the course's other Python scripts."""
    sys.stdout.flush()
    os.execv(sys.executable, [sys.executable, str(SCRIPTS / script), *args])


def cmd_list(_args):
    rows = [["id", "title", "chapter"]] + [row.split("\t")[:3] for row in course_registry.table_rows(".")]
    widths = [max(len(row[k]) for row in rows) for k in (0, 1)]  # columns as wide as their longest entry
    for row in rows:
        say(f"{row[0]:<{widths[0]}}  {row[1]:<{widths[1]}}  {row[2]}")
    say("")
    say(f"Start with {ids()[0]}. Or begin as CS336's assignment does, with the tokenizer: the ex19")
    say(f"exercises need no tensor exercise (docs/19-tokenizer.md), from {first_tokenizer_id()} on.")


def cmd_check(args):
    exercise_id = args[0] if args else ""
    if is_option(exercise_id):
        say("usage: scripts/dev.sh course check ID [--verbose]", sys.stderr)
        fail(f"  ID is an exercise id from scripts/dev.sh course list; the first is {ids()[0]}.", 2)
    course_stub.require_known(".", exercise_id)
    course_build.build_checks(build_dir())
    rc = run([f"{build_dir()}/course/course-check", exercise_id, *args[1:]])
    # Chapter 21's checks ran with threads as ranks; once they pass, the same
    # checks under mpirun too, with real processes, where an MPI build is.
    if rc == 0 and exercise_id.startswith("ex21-"):
        rc = check_under_mpirun([exercise_id, *args[1:]])
    return rc


def check_under_mpirun(args):
    """course-check-mpi of the MPI build (build-mpi, made by scripts/dev.sh test-mpi) as mpirun -np 2 and -np 3."""
    mpi_dir = os.environ.get("ROPEGRAD_COURSE_MPI_BUILD") or "build-mpi"
    cache = pathlib.Path(mpi_dir) / "CMakeCache.txt"
    if (not cache.is_file() or "\nROPEGRAD_MPI:BOOL=ON" not in "\n" + cache.read_text(errors="replace")
            or not shutil.which("mpirun")):
        say("course: these checks ran their ranks as threads; to run them under mpirun too: "
            f"scripts/dev.sh test-mpi (makes {mpi_dir}), then check again")
        return 0
    with course_build.BuildLock(mpi_dir):
        if course_build.build_target(mpi_dir, "course-check-mpi"):
            course_build.first_error(f"{mpi_dir}/course-build.log")
            fail(f"course: the build of course-check-mpi failed (all of it in {mpi_dir}/course-build.log)")
    # Root in containers (OpenMPI refuses it without these); shared memory, no network.
    os.environ.update(OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1", OMPI_MCA_btl="self,vader",
                      OMPI_MCA_btl_vader_single_copy_mechanism="none", ROPEGRAD_NUM_THREADS="1",
                      OPENBLAS_NUM_THREADS="1")
    for ranks in (2, 3):
        say(f"course: the same checks under mpirun -np {ranks} ({mpi_dir}/course/course-check-mpi)")
        rc = run(["mpirun", "-np", str(ranks), "--oversubscribe", f"{mpi_dir}/course/course-check-mpi", *args])
        if rc:
            return rc
    return 0


def cmd_status(_args):
    course_build.build_checks(build_dir())
    return run([f"{build_dir()}/course/course-check", "--status"])


def cmd_answer(args):
    problem_id = args[0] if args else ""
    if is_option(problem_id):
        say("usage: scripts/dev.sh course answer ID [VALUE]", sys.stderr)
        fail("  ID is a problem id from scripts/dev.sh course problems (each chapter's section Problems).", 2)
    problems = str(SCRIPTS / "course_problems.py")
    if run([sys.executable, problems, "known", problem_id]) != 0:
        return 2
    if len(args) < 2:
        exec_python("course_problems.py", "show", problem_id)
    needs = subprocess.run([sys.executable, problems, "needs", problem_id], stdout=subprocess.PIPE, text=True)
    if needs.returncode:
        return needs.returncode
    needs = needs.stdout.split("\n")
    program = f"{build_dir()}/course/course-answer"
    if "program" in needs:
        course_build.configure(build_dir(), sys.stderr)
        if course_build.build_target(build_dir(), "course-answer", sys.stderr):
            course_build.failed_build(f"{build_dir()}/course-build.log")
    require_stubbed_exercises_pass(problem_id, [n for n in needs if re.fullmatch("ex[0-9a-z-]*", n)])
    exec_python("course_problems.py", "answer", "--program", program, *args)


def require_stubbed_exercises_pass(problem_id, exercise_ids):
    """In a workspace the library is the learner's: an answer computed with an
    exercise's code is only as right as that exercise, so its checks must pass first."""
    stubbed_file = pathlib.Path(".course/stubbed")
    if not stubbed_file.is_file():
        return
    stubbed = stubbed_file.read_text().split("\n")
    for exercise_id in exercise_ids:
        if exercise_id not in stubbed:
            continue
        course_build.build_checks(build_dir(), sys.stderr)
        quiet = dict(stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        if run([f"{build_dir()}/course/course-check", exercise_id], **quiet) != 0:
            say(f"course answer: {problem_id} is computed by the library with your {exercise_id}, "
                "whose checks do not all pass yet:", sys.stderr)
            fail(f"  scripts/dev.sh course check {exercise_id}; then ask again", 3)


def cmd_stub(args):
    for exercise_id in args:
        course_stub.require_known(".", exercise_id)
    for exercise_id in args:
        course_stub.stub_or_fail(".", exercise_id)


def cmd_with_build_lock(args):
    """Internal (tests/test_course_lock.sh tests it): COMMAND..., holding the build directory's lock as a build does."""
    with course_build.BuildLock(build_dir()):
        return run(args)


def cmd_unknown(command):
    near = course_registry.closest(command, COMMANDS)[:1]
    say(f"course: no command '{command}'" + (f"; did you mean '{near[0]}'?" if near else ""), sys.stderr)
    say(__doc__, sys.stderr, end="")
    return 2


def dispatch(args):
    command, rest = (args[0] if args else ""), args[1:]
    if command in ("", "help", "-h", "--help"):
        say(__doc__, end="")
        return 2 if not command else 0
    if command == "new":
        return course_workspace.cmd_new(rest)
    if command == "final":
        return course_final.cmd_final(rest, build_dir())
    simple = {"list": cmd_list, "check": cmd_check, "status": cmd_status, "stub": cmd_stub,
              "answer": cmd_answer, "with-build-lock": cmd_with_build_lock}
    if command in simple:
        return simple[command](rest)
    if command == "problems":
        exec_python("course_problems.py", "list", *rest)
    if command == "proof":
        exec_python("course_proof.py")
    if command == "fast-files":  # internal: fast-files [ID], the files of ID's fast forms, or of all
        for f in course_stub.fast_form_files(".", rest[0] if rest else None):
            say(f)
        return 0
    if command == "with-progress":  # internal (scripts/course_proof.py tests it): with-progress LOG COMMAND...
        return course_build.with_progress(rest[0], rest[1:])
    return cmd_unknown(command)


def main(args):
    if not pathlib.Path("course/exercises.txt").is_file():
        fail("course: run this from the repository (or a workspace) root: no course/exercises.txt here", 2)
    try:
        return dispatch(args) or 0
    except course_registry.RegistryError as err:
        fail(f"course: {err}", 2)
    except KeyboardInterrupt:
        return 130


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
