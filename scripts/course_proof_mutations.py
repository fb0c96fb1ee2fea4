"""The steps of scripts/course_proof.py after the order: every typical wrong
solution (course/mutations/*.patch) is caught, every accepted variant
(*.variant) passes, and the final check trains as its committed trace."""
import glob
import os
import pathlib
import re
import shutil
import subprocess
import threading

import course_build
from course_build import say
from course_proof_tree import cut, field, indented, run


def causes():
    """The causes a check may name (course/mutations/causes.txt), without comments and blank lines."""
    lines = pathlib.Path("course/mutations/causes.txt").read_text().split("\n")
    return [line for line in lines if line and not line.startswith("#")]


def shown_in_doc(doc, name):
    """The lines of DOC's fenced block right after "<!-- mutation-output: NAME -->"."""
    marker, found, in_block, shown = f"<!-- mutation-output: {name} -->", False, False, []
    for line in pathlib.Path(doc).read_text().split("\n"):
        if line == marker:
            found = True
        elif found and line.startswith("```"):
            if in_block:
                break
            in_block = True
        elif found and in_block:
            shown.append(line)
    return shown


class Mutations:
    def mutation_patches(self):
        wanted = (os.environ.get("ROPEGRAD_COURSE_MUTATION_IDS") or " ".join(self.ids)).split()
        return [p for p in sorted(glob.glob("course/mutations/*.patch")) if (field(p, "Exercise") or [""])[0] in wanted]

    def check_mutation(self, tree, build_dir, patch):
        """One mutation in TREE with its build in BUILD_DIR: applied alone, built, checked, put back.
        Its lines: an ok or FAIL line (and the output of a failure)."""
        exercise_id, expect = (field(patch, "Exercise") or [""])[0], (field(patch, "Expect") or [""])[0]
        name = os.path.basename(patch).removesuffix(".patch")
        if run(["git", "apply", f"{self.tree.root}/{patch}"], cwd=tree, merge=False)[0] != 0:
            return [f"  FAIL  {name}: does not apply"]
        built, build_output = self.tree.run_build("course-check", build_dir, jobs=1)
        if not built:
            errors = [line for line in build_output.split("\n") if "error" in line][:20]
            lines = [f"  FAIL  {name}: does not build"] + (["\n".join("        " + e for e in errors)] if errors else [])
        else:
            lines = [self.verdict(patch, name, exercise_id, expect, build_dir)]
        lines += self.docs_still_shown(name, exercise_id, build_dir)
        self.tree.restore(tree)
        return lines

    def verdict(self, patch, name, exercise_id, expect, build_dir):
        rc, output = self.tree.check(exercise_id, "--verbose", build_dir=build_dir)
        output = output.rstrip("\n")
        # A mistake written without sight of the checks ("Origin:"): every line
        # that names a cause (course/mutations/causes.txt) names the expected one.
        others = []
        if re.search("^Origin:", pathlib.Path(patch).read_text(), re.M):
            for cause in causes():
                others += [cut(f"[{cause}] {line}", 200) for line in output.split("\n") if not line.startswith("hint:")
                           and cause.lower() in line.lower() and expect.lower() not in line.lower()]
        # A check that crashed the process (course-check's CRASH line) failed too.
        fails = [line for line in output.split("\n") if line.startswith("  FAIL ") or line.startswith("  CRASH ")]
        if rc != 0 and fails and expect.lower() in output.lower() and not others:
            return f"  ok    {name}: caught by {exercise_id} ({re.sub(r'^ *FAIL *', '', cut(fails[0], 110))})"
        if others:
            return (f"  FAIL  {name}: a line names a cause other than the expected '{expect}':\n"
                    + indented("\n".join(others[:5])))
        return (f"  FAIL  {name}: not caught by {exercise_id} as expected (exit {rc}, expected the words '{expect}')\n"
                + indented(output))

    def docs_still_shown(self, name, exercise_id, build_dir):
        """A chapter that shows this mutation's output (a fenced block right after
        "<!-- mutation-output: NAME -->") must show lines the check still prints."""
        lines = []
        for doc in sorted(glob.glob("docs/*.md")):
            if f"<!-- mutation-output: {name} -->" not in pathlib.Path(doc).read_text():
                continue
            printed = self.tree.check(exercise_id, build_dir=build_dir)[1].rstrip("\n").split("\n")
            missing = [line for line in shown_in_doc(doc, name) or [""] if line != "..." and line not in printed]
            if not missing:
                lines.append(f"  ok    {doc} shows what {name} prints")
            else:
                lines.append(f"  FAIL  {doc}: lines for {name} that the check no longer prints:\n"
                             + indented("\n".join(missing)))
        return lines

    def second_tree(self):
        """A copy of the tree for the second worker (copied before any worker applies a patch here) and its
        build directory, configured with ccache based in it; None when that build fails."""
        copy = self.tree.temporary_dir()
        files = subprocess.run(["git", "ls-files", "-co", "--exclude-standard", "-z"], stdout=subprocess.PIPE).stdout
        tar = subprocess.Popen(["tar", "--null", "-T", "-", "-cf", "-"], stdin=subprocess.PIPE, stdout=subprocess.PIPE)
        untar = subprocess.Popen(["tar", "-C", copy, "-xf", "-"], stdin=tar.stdout)
        tar.stdout.close()
        tar.communicate(files)
        untar.wait()
        return copy

    def worker(self, w, workers, patches, lines):
        tree, build_dir = self.tree.root, self.tree.build_dir
        if w > 0:
            tree = self.copy
            build_dir = f"{tree}/build"
            launcher = course_build.ccache_launcher(tree)
            configure = ["cmake", "-S", tree, "-B", build_dir] + ([launcher] if launcher else [])
            if (run(configure + ["-DCMAKE_BUILD_TYPE=Release", "-DROPEGRAD_BENCH=OFF"], merge=False)[0] != 0
                    or not self.tree.run_build("course-check", build_dir, jobs=1)[0]):
                lines.append("  FAIL  the second worker's tree does not build")
                return
        for patch in patches[w::workers]:
            lines += self.check_mutation(tree, build_dir, patch)

    def mutations(self):
        """Each mutation rebuilds one file on one core: two workers, the second in a
        copy of the tree with its own build (from ccache, when present, in a minute),
        halve the time. ROPEGRAD_COURSE_PROOF_WORKERS=1: one, in this tree."""
        say("course proof: every typical wrong solution is caught")
        patches = self.mutation_patches()
        default = 2 if len(patches) >= 20 and self.tree.jobs >= 2 else 1
        workers = min(int(os.environ.get("ROPEGRAD_COURSE_PROOF_WORKERS") or default), 2)
        self.copy = self.second_tree() if workers > 1 else None
        logs = [[] for _ in range(workers)]
        threads = [threading.Thread(target=self.worker, args=(w, workers, patches, logs[w]), daemon=True)
                   for w in range(workers)]
        self.tree.workers += threads
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
        lines = "\n".join(line for log in logs for line in log).split("\n") if any(logs) else []
        for log in logs:
            for line in log:
                say(line)
        caught = sum(1 for line in lines if re.match(r"^  ok    .*: caught by ", line))
        # Every mutation has its line: a worker that stopped early would skip some silently.
        checked = sum(1 for line in lines if re.match(
            r"^  (ok    [^ ]+: caught by|FAIL  [^ ]+: (does not|not caught|a line names))", line))
        if checked != len(patches):
            self.bad(f"only {checked} of {len(patches)} mutations were checked (a worker stopped early)")
        self.passed += sum(1 for line in lines if line.startswith("  ok    "))
        self.failed += sum(1 for line in lines if line.startswith("  FAIL  "))
        if self.copy:
            shutil.rmtree(self.copy, ignore_errors=True)
        self.tree.restore()
        say(f"course proof: {caught} of {len(patches)} mutations caught")

    def variants(self):
        say("course proof: every accepted variant passes its exercise's checks")
        for variant in sorted(glob.glob("course/mutations/*.variant")):
            exercise_id = (field(variant, "Exercise") or [""])[0]
            if not self.wanted(exercise_id):
                continue
            name = os.path.basename(variant).removesuffix(".variant")
            if run(["git", "apply", variant], merge=False)[0] != 0:
                self.bad(f"{name}: does not apply")
                continue
            if not self.tree.build():
                self.bad(f"{name}: does not build")
            else:
                rc, output = self.tree.check(exercise_id)
                if rc == 0:
                    self.ok(f"{name}: accepted by {exercise_id} ({chr(10).join(cut(v, 80) for v in field(variant, 'Variant'))})")
                else:
                    self.bad(f"{name}: a legitimate variant fails {exercise_id}", output.rstrip("\n"))
            self.tree.restore()

    def final(self):
        """The final check: the reference (fast forms on) trains as its committed
        trace, and a wrong RMSNorm backward is named as such."""
        say("course proof: the final check")
        if os.environ.get("ROPEGRAD_COURSE_IDS") or os.environ.get("ROPEGRAD_COURSE_MUTATION_IDS"):
            return
        rc, output = run(self.course + ["final"])
        last = output.rstrip("\n").split("\n")
        if rc == 0:
            self.ok(f"course final passes on the reference: {cut(last[-1], 100)}")
        else:
            self.bad("course final fails on the reference", "\n".join(last[-8:]))
        # (course-final itself: `course final` would first refuse, ex07 failing its checks.)
        subprocess.run(["git", "apply", "course/mutations/ex07-rmsnorm--no-mean-term.patch"], check=True)
        self.tree.run_build("course-final")
        env = {**os.environ, "ROPEGRAD_FAST_FORMS": "0", "OPENBLAS_CORETYPE": "Haswell", "OPENBLAS_NUM_THREADS": "1",
               "ROPEGRAD_NUM_THREADS": "1"}
        build_dir = self.tree.build_dir
        rc, output = run([f"{build_dir}/course/course-final", "--corpus", "runs/course-final/corpus.txt",
                          "--out", f"{build_dir}/course-final-mutated", "--reference", "course/final/reference.trace"],
                         env=env)
        output = output.rstrip("\n")
        if rc != 0 and "ln_final (RMSNorm, ex07-rmsnorm) passes back" in output:
            leaves = next((line for line in output.split("\n") if "leaves the reference" in line), "")
            self.ok(f"course final names RMSNorm for ex07-rmsnorm--no-mean-term: {cut(leaves, 110)}")
        else:
            self.bad(f"course final does not name RMSNorm for ex07-rmsnorm--no-mean-term (exit {rc})",
                     "\n".join(output.split("\n")[-8:]))
        self.tree.restore()
