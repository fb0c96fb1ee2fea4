"""`course new DIR [--from ID]` (scripts/course.py): a workspace, a copy of
this tree with exercise ID and every later one stubbed. Careless arguments are
refused before anything is written: no file the command did not write is ever
overwritten or removed."""
import os
import pathlib
import subprocess
import sys

import course_build
import course_registry
import course_stub
from course_build import fail, say

USAGE = "usage: scripts/dev.sh course new DIR [--from ID]"


def parse_arguments(args, ids):
    """(DIR, the first exercise to stub); stops with a message (exit 2) on careless arguments."""
    directory = args[0] if args else ""
    if not directory or directory.startswith("-"):
        fail(f"course: new needs a directory first; {USAGE}", 2)
    first, rest = ids[0], args[1:]
    while rest:
        if rest[0] != "--from":
            fail(f"course: new: unknown option '{rest[0]}'; {USAGE}", 2)
        if len(rest) < 2 or not rest[1] or rest[1].startswith("-"):
            fail(f"course: --from needs an exercise id (scripts/dev.sh course list shows them); {USAGE}", 2)
        first, rest = rest[1], rest[2:]
        course_stub.require_known(".", first)
    return directory, first


def refuse_unless_new_or_empty(directory, root):
    """Stops (exit 1) unless DIRECTORY is a new or an empty directory outside the tree ROOT."""
    path = pathlib.Path(directory)
    if path.exists() and not path.is_dir():
        fail(f"course: '{directory}' is a file; course new makes a directory there: give a new or an empty directory")
    if path.is_dir() and any_entry(path):
        fail(f"course: the directory '{directory}' is not empty; course new fills only a new or an empty directory")
    # The workspace may not lie inside the tree it copies (symbolic links resolved).
    if (os.path.realpath(directory) + "/").startswith(os.path.realpath(root) + "/"):
        fail(f"course: '{directory}' lies inside the repository it copies ({root}): choose a directory outside it")


def any_entry(path):
    try:
        return any(path.iterdir())
    except OSError:
        return False


def copy_tree(root, directory):
    """The tracked and untracked, not ignored, files when ROOT is a git checkout, else everything but builds."""
    git = ["git", "-C", root]
    if subprocess.run(git + ["rev-parse", "--is-inside-work-tree"], stdout=subprocess.DEVNULL,
                      stderr=subprocess.DEVNULL).returncode == 0:
        files = subprocess.run(git + ["ls-files", "-z", "--cached", "--others", "--exclude-standard"],
                               stdout=subprocess.PIPE).stdout
        # cp --parents keeps each file's folders; a file listed but deleted is skipped.
        subprocess.run(["xargs", "-0", "cp", "--parents", "-t", os.path.abspath(directory)], input=files,
                       cwd=root, stderr=subprocess.DEVNULL)
    else:
        tar = subprocess.Popen(["tar", "-C", root, "--exclude=./build*", "--exclude=./runs", "-cf", "-", "."],
                               stdout=subprocess.PIPE)
        subprocess.run(["tar", "-C", directory, "-xf", "-"], stdin=tar.stdout, check=True)
        tar.wait()


def commit_workspace(message):
    """The workspace as a git repository with one commit: the learner's diffs start from the stubs."""
    quiet = ["git", "-c", "user.name=course", "-c", "user.email=course@localhost"]
    for command in (["git", "init", "-q", "."], ["git", "add", "-A"], quiet + ["commit", "-qm", message]):
        if subprocess.run(command).returncode:
            return


def cmd_new(args):
    root = course_build.tree_root()
    ids = course_registry.exercise_ids(".")
    directory, first = parse_arguments(args, ids)
    refuse_unless_new_or_empty(directory, root)
    os.makedirs(directory, exist_ok=True)
    copy_tree(root, directory)
    os.chdir(directory)
    stubbed = ids[ids.index(first):]
    for exercise_id in stubbed:
        course_stub.stub_or_fail(".", exercise_id)
    os.makedirs(".course", exist_ok=True)
    pathlib.Path(".course/stubbed").write_text("".join(f"{i}\n" for i in stubbed))
    # No answer left in the workspace: the mutation patches (their context is
    # the reference code) and the chapters' collapsed solutions go.
    sys.stdout.flush()
    rc = subprocess.run([sys.executable, "scripts/course_leaks.py", "strip", "."]).returncode
    if rc:
        return rc
    commit_workspace(f"workspace: {len(stubbed)} exercises stubbed from {first}")
    say(f"workspace {directory}: {len(stubbed)} exercises stubbed, from {first} to {stubbed[-1]}")
    say(f"next: cd {directory} && scripts/dev.sh course check {first}")
    if first == ids[0]:
        tokenizer = next((i for i in ids if i.startswith("ex19-")), "")
        say("(or begin as CS336's assignment does, with the tokenizer, which needs no tensor exercise:")
        say(f" scripts/dev.sh course check {tokenizer})")
    return 0
