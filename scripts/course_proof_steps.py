"""The steps of scripts/course_proof.py before the mutations: the reference,
the commands' messages, a fresh workspace, the order walk, every exercise
stubbed at once. Each check prints "  ok    ..." or "  FAIL  ..." and counts."""
import os
import pathlib
import re
import subprocess
import sys
import time

import course_proof_mutations
import course_registry
import course_stub
from course_build import fail, say
from course_proof_tree import indented, output_of, run

CHECK_LINE = re.compile(r"^  (ok|FAIL|TODO|BLOCKED|SKIPPED) ")


def check_lines(output):
    return [line for line in output.split("\n") if CHECK_LINE.match(line)]


def line_count(text):
    """How many lines `echo "$text" | wc -l` counts."""
    return len(text.split("\n"))


class Proof(course_proof_mutations.Mutations):
    def __init__(self, tree, ids):
        self.tree, self.ids = tree, ids
        self.passed = self.failed = 0
        self.course = ["bash", f"{tree.root}/scripts/course.sh"]
        self.order = course_registry.exercise_ids(".")

    def ok(self, message):
        self.passed += 1
        say(f"  ok    {message}")

    def bad(self, message, output=None):
        self.failed += 1
        say(f"  FAIL  {message}")
        if output is not None:
            say(indented(output))

    def position(self, exercise_id):
        return self.order.index(exercise_id) if exercise_id in self.order else -1

    def wanted(self, exercise_id):
        return exercise_id in self.ids

    def run_all(self):
        self.reference()
        self.messages()
        self.tree.restore()
        self.plain_regions()
        self.fresh_workspace()
        first_wanted = self.order_walk()
        self.all_stubbed(first_wanted)
        self.tokenizer_alone()
        self.tree.restore()
        self.mutations()
        self.variants()
        self.final()
        self.tree.build()

    # ---- the reference and the commands ---------------------------------------------------------

    def reference(self):
        if not pathlib.Path(f"{self.tree.build_dir}/CMakeCache.txt").is_file():
            configured = subprocess.run(["cmake", "-S", ".", "-B", self.tree.build_dir, "-DCMAKE_BUILD_TYPE=Release",
                                         "-DROPEGRAD_BENCH=OFF"], stdout=subprocess.DEVNULL)
            if configured.returncode:
                raise SystemExit(configured.returncode)
        say("course proof: the reference passes every check")
        if not self.tree.build():
            fail("course proof: the reference does not build")
        for exercise_id in self.ids:
            rc, output = self.tree.check(exercise_id)
            if rc == 0:
                self.ok(f"{exercise_id}: reference passes")
            else:
                self.bad(f"{exercise_id}: reference fails", output.rstrip("\n"))

    def expect_output(self, label, pattern, command):
        """COMMAND's output (stdout and stderr) has a line matching the regular expression PATTERN."""
        output = output_of(command)
        if re.search(pattern, output, re.M):
            self.ok(label)
        else:
            self.bad(f"{label}: no match for '{pattern}' in:", output)

    def messages(self):
        say("course proof: the commands' messages")
        course, check = self.course, f"{self.tree.build_dir}/course/course-check"
        self.expect_output("a mistyped id gets 'did you mean'", r"did you mean ex07-rmsnorm\?",
                           course + ["check", "ex07-rmsnrom"])
        self.expect_output("check without an id prints its usage", "^usage: scripts/dev.sh course check ID",
                           course + ["check"])
        self.expect_output("an unknown command prints the whole usage", "puts one call in between", course + ["chek"])
        self.expect_output("course-check itself suggests ids", r"did you mean ex07-rmsnorm\?", [check, "ex07-rmsnrom"])
        self.careless_new_arguments()
        self.expect_output("a check in the repository says it checked the reference", "checked the reference solution",
                           course + ["check", "ex13-get-batch"])
        self.one_column_each()
        self.progress_shown()
        self.compile_error_shown()

    def careless_new_arguments(self):
        """course new with careless arguments: each is refused, naming what is wrong, and nothing is written."""
        tmp, new = self.tree.temporary_dir(), self.course + ["new"]
        pathlib.Path(f"{tmp}/afile").touch()
        os.mkdir(f"{tmp}/full")
        pathlib.Path(f"{tmp}/full/notes.txt").touch()
        ws, inside = f"{tmp}/ws", f"{self.tree.root}/build-course-inside"
        for label, pattern, args in [
                ("course new on a file says it is a file", f"'{tmp}/afile' is a file", [f"{tmp}/afile"]),
                ("course new on a full directory says so", "is not empty", [f"{tmp}/full"]),
                ("course new --from without an id says it needs one", "--from needs an exercise id", [ws, "--from"]),
                ("course new with a misspelt option refuses it", "unknown option '--frm'", [ws, "--frm", "ex13-adamw"]),
                ("course new with an option for DIR says DIR comes first", "new needs a directory first",
                 ["--frm", "ex13-adamw"]),
                ("course new --from takes ids literally", "no exercise 'ex2.-zero-adamw'", [ws, "--from", "ex2.-zero-adamw"]),
                ("course new --from '.*' is no pattern", r"no exercise '\.\*'", [ws, "--from", ".*"]),
                ("course new inside the repository is refused", "lies inside the repository", [inside])]:
            self.expect_output(label, pattern, new + args)
        if not os.path.exists(ws) and not os.path.exists("build-course-inside") and os.listdir(f"{tmp}/full") == ["notes.txt"]:
            self.ok("course new refused all of them without writing anything")
        else:
            self.bad("course new wrote something for a refused command")

    def one_column_each(self):
        """status: every title starts in one column; list: every chapter."""
        output = output_of([f"{self.tree.build_dir}/course/course-check", "--status"])
        titles = iter([row.split("\t")[1] for row in course_registry.table_rows(".")])
        rows = [line for line in output.split("\n") if re.match(r"^  ex[0-9]", line)]
        widths = len({line.find(next(titles, "\0")) + 1 for line in rows})
        if widths == 1:
            self.ok("status: every title starts in one column")
        else:
            self.bad(f"status: the titles start in {widths} columns")
            say(output)
        output = output_of(self.course + ["list"])
        widths = len({line.find("docs/") + 1 for line in output.split("\n") if re.match(r"^ex[0-9]", line)})
        if widths == 1:
            self.ok("list: every chapter starts in one column")
        else:
            self.bad(f"list: the chapters start in {widths} columns")
            say(output)

    def progress_shown(self):
        """The build's progress: the tool's lines, and never 8 s or more without a word (docs/course.md's promise)."""
        log = os.path.join(self.tree.temporary_dir(), "progress.log")
        fake_build = ('echo "[ 10%] Building CXX object CMakeFiles/ropegrad.dir/nn/rmsnorm.cpp.o"; sleep 2\n'
                      '  echo "[ 55%] Building CXX object CMakeFiles/ropegrad.dir/nn/rope.cpp.o"; sleep 12\n'
                      '  echo "[100%] Linking CXX executable course-check"; sleep 1')
        start, stamped = time.monotonic(), []
        with subprocess.Popen(self.course + ["with-progress", log, "bash", "-c", fake_build],
                              stdout=subprocess.PIPE, text=True) as process:
            for line in process.stdout:  # each line with the second it came
                stamped.append((int(time.monotonic() - start), line.rstrip("\n")))
        output = "\n".join(f"{t} {line}" for t, line in stamped)
        gaps = [t for (t, _), (before, _) in zip(stamped[1:], stamped) if t - before >= 8]
        if "nn/rmsnorm.cpp" in output and "still at" in output and not gaps:
            self.ok(f"the build shows its progress, never 8 s silent ({line_count(output)} lines over 15 s)")
        else:
            self.bad("the build's progress:", output)

    def compile_error_shown(self):
        """A compile error: its first error with file:line, the log's path, not pages of notes."""
        path = pathlib.Path("nn/rmsnorm.cpp")
        lines = path.read_text().split("\n")
        lines.insert(lines.index("  // BEGIN EXERCISE ex07-rmsnorm") + 1, "  this_is_not_cpp;")
        path.write_text("\n".join(lines))
        output = output_of(self.course + ["check", "ex07-rmsnorm"])
        if (re.search(r"^  nn/rmsnorm\.cpp:[0-9]+:[0-9]+: error: ", output, re.M) and "course-build.log" in output
                and line_count(output) <= 14):
            self.ok(f"a compile error shows its first error and the log's path ({line_count(output)} lines)")
        else:
            self.bad("a compile error's report:", output)

    # ---- a workspace ----------------------------------------------------------------------------

    def plain_regions(self):
        say("course proof: no region holds SIMD dispatch, intrinsics or one-pass helpers")
        rc, output = run([sys.executable, "scripts/course_leaks.py", "simd", "."])
        output = output.rstrip("\n")
        if rc == 0:
            self.ok(f"regions are plain: {output.split(chr(10))[-1]}")
        else:
            self.bad("regions use fast-form machinery:", output)

    def fresh_workspace(self):
        say("course proof: a fresh workspace holds no solution of a stubbed exercise")
        ws = os.path.join(self.tree.temporary_dir(), "ws")
        if run(["bash", "scripts/course.sh", "new", ws])[0] != 0:
            self.bad("course new failed")
            return
        rc, output = run([sys.executable, "scripts/course_leaks.py", "leaks", ".", ws])
        output = output.rstrip("\n")
        if rc == 0:
            self.ok(f"no leak: {output.split(chr(10))[-1]}")
        else:
            self.bad("lines of reference regions in the workspace:", "\n".join(output.split("\n")[:20]))
        fast_left = [f for f in course_stub.fast_form_files(ws) if os.path.exists(os.path.join(ws, f))]
        if not fast_left:
            self.ok("no fast form left in the all-stubbed workspace")
        else:
            self.bad("fast forms left in the workspace: " + "\n".join(fast_left))
        self.fixed_answers_checked(ws)

    def fixed_answers_checked(self, ws):
        """A fixed answer is checked in the workspace from .course/answers (no build needed)."""
        problems = [sys.executable, "scripts/course_problems.py"]
        listing = output_of(problems + ["list"])
        answers = pathlib.Path("course/problem_answers.txt").read_text()
        for pid in re.findall(r"^(ch[0-9][0-9]-[a-z0-9-]*) .*$", listing, re.M):
            if "program" in output_of(problems + ["needs", pid]).split("\n"):
                continue
            ref = "\n".join(m.group(1).split("|")[0] for m in re.finditer(rf"^{pid}: *(.*)$", answers, re.M))
            answer = ["bash", "scripts/course.sh", "answer", pid]
            if run(answer + [ref], cwd=ws)[0] == 0 and run(answer + ["7919"], cwd=ws)[0] != 0:
                self.ok(f"{pid}: its fixed answer is checked in the workspace (right, and 7919 wrong)")
            else:
                self.bad(f"{pid}: the workspace does not check its fixed answer")

    # ---- the order ------------------------------------------------------------------------------

    def stub(self, exercise_id):
        course_stub.stub_or_fail(".", exercise_id)

    def order_walk(self):
        """Exercise k passes with 1..k written and k+1.. stubbed, and says TODO once stubbed; returns
        the position of the first wanted exercise."""
        say("course proof: in course order, exercise k passes with 1..k written and k+1.. stubbed, "
            "and says TODO once stubbed")
        start, rounds = time.monotonic(), 0
        first_wanted = min([p for p in map(self.position, self.ids) if p >= 0], default=len(self.order))
        for i in range(len(self.order) - 1, first_wanted - 1, -1):
            exercise_id = self.order[i]
            if self.wanted(exercise_id):
                rc, output = self.tree.check(exercise_id)
                if rc == 0:
                    self.ok(f"{exercise_id} passes with the {len(self.order) - i - 1} exercises after it stubbed")
                else:
                    self.bad(f"{exercise_id} fails with the exercises after it stubbed (it uses a later one?)",
                             output.rstrip("\n"))
            self.stub(exercise_id)
            rounds += 1
            if not self.tree.build():
                self.bad(f"{exercise_id}: the tree with it and every later exercise stubbed does not build")
                continue
            if self.wanted(exercise_id):
                self.says_todo(exercise_id)
        say(f"course proof: the order walk took {int(time.monotonic() - start)} s ({rounds} stub-and-build rounds)")
        return first_wanted

    def says_todo(self, exercise_id):
        rc, output = self.tree.check(exercise_id)
        lines = check_lines(output)
        todo = sum(1 for line in lines if line.startswith("  TODO "))
        if rc != 0 and lines and todo == len(lines):
            self.ok(f"{exercise_id} stubbed: {todo} of {len(lines)} checks say not written yet")
        else:
            self.bad(f"{exercise_id} stubbed: exit {rc}, {todo} of {len(lines)} checks say not written yet",
                     output.rstrip("\n"))

    def all_stubbed(self, first_wanted):
        say("course proof: every exercise stubbed at once builds; status says not started; checks reach no later stub")
        for i in range(first_wanted - 1, -1, -1):
            self.stub(self.order[i])
        if not self.tree.build():
            self.bad("the workspace with every exercise stubbed does not build")
            return
        output = output_of([f"{self.tree.build_dir}/course/course-check", "--status"])
        not_started, total = sum(1 for line in output.split("\n") if " not started " in line), len(self.order)
        if not_started == total:
            self.ok(f"all {total} stubbed: builds, status says not started")
        else:
            self.bad(f"status: {not_started} of {total} not started")
            say(output)
        for exercise_id in self.ids:
            self.stops_at_no_later_stub(exercise_id)
        self.answers_with_every_exercise_stubbed()

    def stops_at_no_later_stub(self, exercise_id):
        output = self.tree.check(exercise_id)[1].rstrip("\n")
        lines = check_lines(output)
        todo = sum(1 for line in lines if line.startswith("  TODO "))
        blockers = sorted({m.group(1) for line in lines
                           for m in [re.match(r"^  BLOCKED .*: blocked by (ex[0-9a-z-]*)$", line)] if m})
        others = sum(1 for line in lines if not re.match(r"^  (TODO|BLOCKED) ", line))
        later = [b for b in blockers if self.position(b) >= self.position(exercise_id)]
        if not later and others == 0:
            self.ok(f"{exercise_id}: {todo} TODO" + (f", blocked by earlier {','.join(blockers)}" if blockers else ""))
        else:
            self.bad(f"{exercise_id}: blocked by a later exercise or not stopped by a stub:"
                     + ("".join(" " + b for b in later) or f" {others} other lines"), output)

    def answers_with_every_exercise_stubbed(self):
        """The book's problems: with every exercise stubbed each computed answer is computed, or its
        program stops at the stub of an exercise its registry entry names (uses:), which the answer
        command then checks first in a workspace."""
        if not self.tree.run_build("course-answer")[0]:
            self.bad("course-answer does not build with every exercise stubbed")
            return
        program = f"{self.tree.build_dir}/course/course-answer"
        for pid in output_of([program, "--list"]).split():
            needs = output_of([sys.executable, "scripts/course_problems.py", "needs", pid]).split("\n")
            uses = [n for n in needs if n.startswith("ex")]
            rc, output = run([program, pid])
            output = output.rstrip("\n")
            if rc == 0:
                self.ok(f"{pid}: computed with every exercise stubbed")
                continue
            blocker = next(iter(re.findall(r"^blocked by (ex[0-9a-z-]*):.*$", output, re.M)), "")
            if not blocker:
                self.bad(f"{pid}: fails with every exercise stubbed:", output)
            elif blocker in uses:
                self.ok(f"{pid}: blocked by {blocker}, which its uses: names")
            else:
                self.bad(f"{pid}: blocked by {blocker}, which its uses: ({''.join(' ' + u for u in uses)} ) does not name", output)

    def tokenizer_alone(self):
        """CS336's assignment starts with the tokenizer: its exercises need no tensor exercise."""
        tokenizer_ids = [i for i in self.ids if i.startswith("ex19-")]
        if not tokenizer_ids:
            return
        say("course proof: the tokenizer exercises pass with every tensor exercise stubbed")
        for f in self.tree.files:
            if f.startswith("tokenizer/"):
                self.tree.put_back(f)
        if not self.tree.build():
            self.bad("the tree with only the tokenizer written does not build")
            return
        for exercise_id in tokenizer_ids:
            rc, output = self.tree.check(exercise_id)
            if rc == 0:
                self.ok(f"{exercise_id} passes with every tensor exercise stubbed")
            else:
                self.bad(f"{exercise_id} fails with the tensor exercises stubbed", output.rstrip("\n"))
