"""Stubbing an exercise (scripts/course.py's `new` and `stub`, and
scripts/course_proof.py): each region of it becomes one call that says it is
not written yet, and its fast forms go.

A stub keeps the two markers and puts one call in between, at the BEGIN
line's indentation:

    // BEGIN EXERCISE ex07-rmsnorm
    // Your code here (RMSNorm forward; docs/07-rmsnorm.md).
    ::ropegrad::exercise_not_implemented("ex07-rmsnorm", "RMSNorm forward", "docs/07-rmsnorm.md");
    // END EXERCISE ex07-rmsnorm
"""
import os
import pathlib
import re

import course_registry
from course_build import fail

FAST_FORM = re.compile(r'^FAST_FORM\([A-Za-z0-9]*, "[^"]*", "([^"]*)", "([^"]*)", .*$')


class StubError(Exception):
    """An exercise that cannot be stubbed; the message says why."""


def stub_lines(lines, exercise):
    """LINES (a file's, without their newlines) with every region of EXERCISE replaced by its stub."""
    out, skipping = [], False
    for line in lines:
        begin, end = course_registry.BEGIN.match(line), course_registry.END.match(line)
        if begin and begin.group(2) == exercise.id:
            indent, e = begin.group(1), exercise
            out += [line, f"{indent}// Your code here ({e.title}; {e.chapter}).",
                    f'{indent}::ropegrad::exercise_not_implemented("{e.id}", "{e.title}", "{e.chapter}");']
            skipping = True
        elif skipping and end and end.group(1) == exercise.id:
            out.append(line)
            skipping = False
        elif not skipping:
            out.append(line)
    return out


def stub_file(path, exercise):
    """Stubs EXERCISE's regions in the file at PATH, in place (a new file renamed over it)."""
    text = pathlib.Path(path).read_text()
    lines = text.removesuffix("\n").split("\n") if text else []
    temporary = pathlib.Path(f"{path}.course-tmp")
    temporary.write_text("".join(line + "\n" for line in stub_lines(lines, exercise)))
    os.replace(temporary, path)


def fast_form_files(root=".", exercise_id=None):
    """The files of EXERCISE_ID's fast forms, or of every fast form without one,
    sorted: tensor/fast_forms.def, their one list, gives each form's exercises
    and files. A fast form is a complete solution of its exercises, so a
    workspace has none of those of the exercises it stubs."""
    files = set()
    for line in (pathlib.Path(root) / "tensor/fast_forms.def").read_text().split("\n"):
        m = FAST_FORM.match(line)
        if m and (not exercise_id or f" {exercise_id} " in f" {m.group(1)} "):
            files.update(m.group(2).split())
    return sorted(files)


def stub(root, exercise_id):
    """Replaces every region of EXERCISE_ID under ROOT, in place, by its stub, and removes its fast forms."""
    exercise = course_registry.find(root, exercise_id)
    files = course_registry.files_of(course_registry.all_regions(root)[0], exercise_id)
    if not files:
        raise StubError(f"course: no region marked 'BEGIN EXERCISE {exercise_id}' in the sources")
    for rel in files:
        path = pathlib.Path(root) / rel
        stub_file(path, exercise)
        if '#include "tensor/exercise.h"' not in path.read_text():
            raise StubError(f"course: {rel} has a region of {exercise_id} but does not include tensor/exercise.h")
    for rel in fast_form_files(root, exercise_id):
        (pathlib.Path(root) / rel).unlink(missing_ok=True)


def require_known(root, exercise_id):
    """Stops with 'did you mean' unless EXERCISE_ID is an exercise's id (literally: an id is no pattern)."""
    ids = course_registry.exercise_ids(root)
    if exercise_id in ids:
        return
    near = ", ".join(course_registry.closest(exercise_id, ids))
    if near:
        fail(f"course: no exercise '{exercise_id}'; did you mean {near}? "
             f"(scripts/dev.sh course list shows them all)", 2)
    fail(f"course: no exercise '{exercise_id}' (scripts/dev.sh course list shows them all)", 2)


def stub_or_fail(root, exercise_id):
    """stub(), stopping the command with its message (exit status 1) when it cannot."""
    try:
        stub(root, exercise_id)
    except StubError as err:
        fail(str(err))
