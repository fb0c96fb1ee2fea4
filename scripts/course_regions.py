"""The exercise regions of the library's sources: one rule, shared by
scripts/course_leaks.py and docs/tests/check_docs.py.

Library sources: every *.cpp and *.h file under tensor/, autograd/, nn/,
tasks/ and tokenizer/ (sub-folders included), taken in the order of their
paths relative to the root, compared as strings ("nn/fast/x.cpp" after
"nn/attention.cpp", before "nn/init.cpp").

A region of exercise ID is the lines strictly between a line that is exactly
`// BEGIN EXERCISE ID` and the next line that is exactly `// END EXERCISE ID`,
both allowed leading and trailing whitespace (IDs look like ex07-rmsnorm: "ex",
two digits, a dash, lower-case letters, digits and dashes). Regions do not
nest. A region's lines are dedented by its BEGIN line's indentation: that
prefix is removed from each line that starts with it; a line that does not
(a blank line, a less indented one) loses only its leading whitespace.
Trailing whitespace is dropped.

An exercise's *solution text* is its regions' dedented lines, region after
region in file order and, within a file, in line order, with one line
`// ...` between two regions. That is what a `<!-- solution: ID -->` block of
the book holds.
"""
import pathlib
import re
from dataclasses import dataclass, field

LIBRARY_DIRS = ("tensor", "autograd", "nn", "optim", "io", "catalog", "tokenizer", "tasks", "dist", "train", "cli")
ID = r"ex\d\d-[a-z0-9-]+"
BEGIN = re.compile(rf"^(\s*)// BEGIN EXERCISE ({ID})\s*$")
END = re.compile(rf"^\s*// END EXERCISE ({ID})\s*$")
JOIN = "// ..."


@dataclass
class Region:
    id: str
    file: str          # relative to the root, with "/"
    begin: int         # line number (1-based) of the BEGIN marker
    end: int           # line number of the END marker
    indent: str
    raw: list = field(default_factory=list)   # the lines between the markers, as in the file

    def lines(self):
        """The region's lines, dedented (see the module's docstring)."""
        out = []
        for line in self.raw:
            line = line.rstrip()
            out.append(line[len(self.indent):] if line.startswith(self.indent) else line.lstrip())
        return out


def library_files(root):
    """The library's source files under ROOT, in path order (relative posix paths)."""
    root = pathlib.Path(root)
    files = []
    for d in LIBRARY_DIRS:
        base = root / d
        if base.is_dir():
            files += [p for p in base.rglob("*") if p.is_file() and p.suffix in (".cpp", ".h")]
    return sorted(files, key=lambda p: p.relative_to(root).as_posix())


def file_regions(rel, text):
    """(regions, problems) of one file's text. A problem is a marker without
    its partner, or a region opened inside another."""
    regions, problems, open_ = [], [], None
    for n, line in enumerate(text.split("\n"), 1):
        b, e = BEGIN.match(line), END.match(line)
        if b:
            if open_:
                problems.append(f"{rel}:{n}: BEGIN EXERCISE {b.group(2)} inside the region of {open_.id}")
            open_ = Region(b.group(2), rel, n, 0, b.group(1))
        elif e:
            if not open_ or open_.id != e.group(1):
                problems.append(f"{rel}:{n}: END EXERCISE {e.group(1)} without its BEGIN")
                continue
            open_.end = n
            regions.append(open_)
            open_ = None
        elif open_:
            open_.raw.append(line)
    if open_:
        problems.append(f"{rel}:{open_.begin}: BEGIN EXERCISE {open_.id} is never ended")
    return regions, problems


def all_regions(root):
    """{id: [Region, ...]} in file order, and the list of marker problems."""
    root = pathlib.Path(root)
    by_id, problems = {}, []
    for f in library_files(root):
        rel = f.relative_to(root).as_posix()
        regions, probs = file_regions(rel, f.read_text(errors="replace"))
        problems += probs
        for r in regions:
            by_id.setdefault(r.id, []).append(r)
    return by_id, problems


def solution_lines(regions):
    """An exercise's solution text, as lines (see the module's docstring)."""
    out = []
    for k, r in enumerate(regions):
        if k:
            out.append(JOIN)
        out += r.lines()
    return out


def exercise_ids(root):
    """Exercise ids of course/exercises.txt, in the book's order."""
    text = (pathlib.Path(root) / "course" / "exercises.txt").read_text()
    return re.findall(r"^\[(" + ID + r")\]\s*$", text, re.M)
