"""How the course commands build (scripts/course.py, scripts/course_proof.py):
cmake with ccache, the build's progress while it runs, its first compiler
error when it fails, and one build per build directory at a time."""
import fcntl
import os
import pathlib
import re
import shutil
import subprocess
import sys
import time

PROGRESS_LINE = re.compile(r"^\[ *[0-9]+(%|/[0-9]+)\] (Building|Linking)")
ERROR_LINE = re.compile(r": (fatal )?error: |undefined reference to")


def say(text, out=None, end="\n"):
    """Print and flush at once: the output of the commands run meanwhile must come after it."""
    out = out or sys.stdout
    out.write(text + end)
    out.flush()


def fail(message, code=1):
    """The command stops here: MESSAGE on stderr, exit status CODE."""
    say(message, sys.stderr)
    raise SystemExit(code)


def tree_root():
    """The current directory as the shell names it ($PWD, when it is this directory), as `pwd` does."""
    logical = os.environ.get("PWD", "")
    if logical.startswith("/") and os.path.samefile(logical, "."):
        return logical
    return os.getcwd()


def jobs():
    """The build's parallel jobs: the CPUs this process may use (nproc)."""
    return len(os.sched_getaffinity(0)) or 2


def ccache_launcher(root):
    """ccache with the tree as its base directory: the compiler sees paths
    relative to the build directory, so an unchanged file hits the cache from
    any tree (the repository, every workspace, wherever they are). Depend mode:
    on a miss ccache takes the headers from the compiler's own -MD file instead
    of running the preprocessor first (7 % of a cold first build's CPU).
    scripts/dev.sh's builds use the same launcher. None without ccache."""
    ccache = shutil.which("ccache")
    if not ccache:
        return None
    return (f"-DCMAKE_CXX_COMPILER_LAUNCHER={shutil.which('cmake')};-E;env;CCACHE_BASEDIR={root};"
            f"CCACHE_NOHASHDIR=1;CCACHE_DEPEND=1;CCACHE_SLOPPINESS=pch_defines,time_macros;{ccache}")


def configure(build_dir, out=None):
    """cmake the build directory the first time: only what the checks need, no benchmarks."""
    if (pathlib.Path(build_dir) / "CMakeCache.txt").is_file():
        return
    launcher = ccache_launcher(tree_root())
    say(f"course: configuring {build_dir}/ (cmake; first time only)", out)
    log = f"{build_dir}/course-configure.log"
    command = ["cmake", "-S", ".", "-B", build_dir] + ([launcher] if launcher else [])
    if with_progress(log, command + ["-DCMAKE_BUILD_TYPE=Release", "-DROPEGRAD_BENCH=OFF"], out) != 0:
        tail = pathlib.Path(log).read_text(errors="replace").splitlines(keepends=True)[-20:]
        sys.stderr.write("".join(tail))
        fail(f"course: cmake failed (all of it in {log})")


def last_progress(log):
    """The build tool's last progress line in LOG ("[ 42%] Building ...", "[3/9] Linking ..."), or ""."""
    try:
        text = pathlib.Path(log).read_text(errors="replace")
    except OSError:
        return ""
    lines = [line for line in text.split("\n") if PROGRESS_LINE.match(line)]
    return lines[-1] if lines else ""


def progress_what(line):
    """What a progress line says is being built, without CMake's noise."""
    what = re.sub(r"^\[[^]]*\] ", "", line, count=1)
    for pattern, replacement in ((r"CMakeFiles/[^ /]*\.dir/", ""), (r"\.o$", ""), (" CXX object", ""),
                                 (" CXX executable", " "), (" CXX static library", " ")):
        what = re.sub(pattern, replacement, what, count=1)
    return what


def with_progress(log, command, out=None):
    """Runs COMMAND with its output in LOG, and shows the build tool's progress
    meanwhile (make's "[ NN%] Building ... x.cpp", ninja's "[N/M]"): on a
    terminal one line rewritten in place, otherwise a line whenever the
    percentage moves on; never more than 8 s without a word. Returns its exit status."""
    out = out or sys.stdout
    tty = out.isatty()
    pathlib.Path(log).parent.mkdir(parents=True, exist_ok=True)
    start = time.monotonic()
    seconds = lambda: int(time.monotonic() - start)  # noqa: E731  whole seconds, as bash's SECONDS
    shown, last_seen, what, printed = 0, "", "", False
    with open(log, "w") as sink:
        process = subprocess.Popen(command, stdin=subprocess.DEVNULL, stdout=sink, stderr=subprocess.STDOUT)
    while process.poll() is None:
        time.sleep(1)
        line, now = last_progress(log), seconds()
        if line and line != last_seen:
            last_seen = line
            percent = re.sub(r"^\[ *([0-9]+(%|/[0-9]+))\].*", r"\1", line)
            what = progress_what(line)
            if tty:
                say(f"\r\033[K  [{percent:>5}] {what}  ({now} s)", out, end="")
                printed, shown = True, now
            elif now - shown >= 3 or not printed:
                say(f"  [{percent:>5}] {what}  ({now} s)", out)
                printed, shown = True, now
        elif now - shown >= 6:  # a poll takes a second: 6 keeps the gaps under 8 s
            if tty:
                say(f"\r\033[K  ... {what or 'working'}  ({now} s)", out, end="")
            else:
                say(f"  ... still at {what or 'the start'}  ({now} s)", out)
            printed, shown = True, now
    rc = process.wait()
    if tty and printed:
        say("\r\033[K", out, end="")
    if printed and rc == 0:
        say(f"  done in {seconds()} s (log: {log})", out)
    return rc


def first_error(log, root=None):
    """The first compiler error of a failed build, on stderr, as
    "file:line:col: error: ..." relative to the tree, with the source line and
    caret the compiler printed under it; then how many more there are."""
    root = root or tree_root()
    lines = pathlib.Path(log).read_text(errors="replace").removesuffix("\n").split("\n")
    start = next((k for k, line in enumerate(lines) if ERROR_LINE.search(line)), None)
    if start is not None:
        say("  " + re.sub(r"^(\.\./)+", "", lines[start].replace(f"{root}/", "")), sys.stderr)
        for line in lines[start + 1:start + 4]:
            if (re.match(r"^[^ ].*:[0-9]+:[0-9]+: ", line)
                    or re.match(r"^(In file included|[^ ].*: In |g?make|ninja|\[)", line)):
                break
            say("  " + line, sys.stderr)
    errors = sum(1 for line in lines if ERROR_LINE.search(line))
    if errors > 1:
        say(f"  (and {errors - 1} more error lines after it)", sys.stderr)


class BuildLock:
    """One build per build directory at a time: two `course check` in one
    workspace would run two builds in one build/, each failing on the other's
    half-written files. The second waits for the first (flock on a lock file in
    the build directory, released by the kernel when the holder dies), and says so."""

    def __init__(self, build_dir, out=None):
        self.build_dir, self.out = build_dir, out

    def __enter__(self):
        pathlib.Path(self.build_dir).mkdir(parents=True, exist_ok=True)
        path = pathlib.Path(self.build_dir) / ".course-build.lock"
        self.file = open(path, "a")
        try:
            fcntl.flock(self.file, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            holder = path.read_text().strip() or "unknown"
            say(f"course: waiting for the build in progress (pid {holder}) in {self.build_dir}/ to finish...",
                self.out)
            fcntl.flock(self.file, fcntl.LOCK_EX)
        path.write_text(f"{os.getpid()}\n")
        return self

    def __exit__(self, *_):
        self.file.close()


def build_target(build_dir, target, out=None):
    """Builds TARGET with its progress shown, its output in BUILD_DIR/course-build.log; its exit status."""
    return with_progress(f"{build_dir}/course-build.log",
                         ["cmake", "--build", build_dir, f"-j{jobs()}", "--target", target], out)


def build_checks(build_dir, out=None):
    """course-check, built (configured first when needed); a failed build stops the command."""
    with BuildLock(build_dir, out):
        configure(build_dir, out)
        if build_target(build_dir, "course-check", out):
            failed_build(f"{build_dir}/course-build.log")


def failed_build(log):
    """Stops the command after a failed build, with the build's first error."""
    say("course: the build failed; the first error:", sys.stderr)
    first_error(log)
    fail(f"course: the compiler's full output is in {log}")
