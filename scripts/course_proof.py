"""Proof that course mode works (CI runs it through `scripts/dev.sh course proof`):
  1. the reference passes every check;
  2. the order (course/exercises.txt): walking from the last exercise back to
     the first, stubbing one more each round, exercise k passes with 1..k
     written and k+1.. stubbed, and then, k stubbed too, every check of k
     says "not written yet" (its own stub: none passes on a stub, none hides
     it as a wrong number or as another exercise's stub);
  3. with every exercise stubbed the tree builds, `status` calls each "not
     started", and each exercise's checks reach its own stub or an earlier
     one's, never a later one's; every computed answer of the book's problems
     is computed or stops at an exercise its `uses:` names; the tokenizer's
     (ex19) pass with every tensor exercise stubbed; a fresh workspace holds no
     solution and checks the problems' fixed answers;
  4. every typical wrong solution in course/mutations/*.patch, applied alone,
     is caught by its exercise's checks, with the words its "Expect:" line
     names (and, for one with an "Origin:" line, no line naming another cause
     of course/mutations/causes.txt); every accepted variant, course/mutations/*.variant (another
     algorithm's legitimate order, CS336's own), passes them all.
It edits the sources in place and puts every file back, also when stopped
(Ctrl-C, SIGTERM, SIGHUP). Environment: ROPEGRAD_COURSE_IDS="ex07-rmsnorm ...",
only these exercises; ROPEGRAD_COURSE_MUTATION_IDS, only their mutations;
ROPEGRAD_COURSE_PROOF_WORKERS=1, the mutations in one worker.
"""
import os
import signal
import sys

import course_build
import course_proof_steps as steps
import course_registry
import course_stub
from course_proof_tree import Tree


def interrupted(signum, _frame):
    """A signal ends the proof through the finally below, which puts the sources back."""
    raise SystemExit(128 + signum)


def main():
    root = course_build.tree_root()
    build_dir = os.environ.get("ROPEGRAD_COURSE_BUILD") or "build"
    os.environ["ROPEGRAD_COURSE_BUILD"] = build_dir
    ids = (os.environ.get("ROPEGRAD_COURSE_IDS") or " ".join(course_registry.exercise_ids("."))).split()
    region_files = course_registry.run(["region-files"])
    if not region_files:
        course_build.fail("course proof: no exercise regions in the sources")
    # Stubbing removes an exercise's fast forms: keep them too.
    tree = Tree(root, build_dir, list(dict.fromkeys(region_files + course_stub.fast_form_files("."))))
    for signum in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP):
        signal.signal(signum, interrupted)
    try:
        proof = steps.Proof(tree, ids)
        proof.run_all()
        course_build.say(f"{proof.passed} passed, {proof.failed} failed")
        return 0 if proof.failed == 0 else 1
    finally:
        for signum in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP):
            signal.signal(signum, signal.SIG_IGN)  # a second Ctrl-C must not stop the putting back
        tree.close()


if __name__ == "__main__":
    sys.exit(main())
