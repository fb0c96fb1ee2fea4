"""The course's one reader of course/exercises.txt and its one rule for
exercise regions, used by every course command (scripts/course.py,
scripts/course_proof.py and the other Python scripts by import; the book's
snippet docs/snippets/course.cpp through the command line below;
course/exercises.cpp, the C++ reader course-check needs at run time, is held
to the same answers by scripts/test_course_registry.py). Its edit distance is
the one every "did you mean" uses.

The registry, course/exercises.txt: blocks of

    [ex07-rmsnorm]
    title: RMSNorm forward
    chapter: docs/07-rmsnorm.md
    hint: ...            (may repeat: the lines are joined by one space)

Lines are trimmed; blank lines and lines starting with `#` are skipped. An id
looks like ex07-rmsnorm: "ex", two digits, a dash, lower-case letters, digits
and dashes. Keys are title, chapter, hint and checks (ignored); every block
needs a title and a chapter. Anything else is an error naming file and line.

Library sources: every *.cpp and *.h file under the library folders (those
CMakeLists.txt builds with a line `ropegrad_add_folder(NAME ...)`),
sub-folders included, taken in the order of their paths relative to the root,
compared as strings ("nn/fast/x.cpp" after "nn/attention.cpp", before
"nn/init.cpp").

A region of exercise ID is the lines strictly between a line that is exactly
`// BEGIN EXERCISE ID` and the next line that is exactly `// END EXERCISE ID`,
both allowed leading and trailing whitespace. Regions do not nest. A region's
lines are dedented by its BEGIN line's indentation: that prefix is removed
from each line that starts with it; a line that does not (a blank line, a less
indented one) loses only its leading whitespace. Trailing whitespace is
dropped.

An exercise's *solution text* is its regions' dedented lines, region after
region in file order and, within a file, in line order, with one line
`// ...` between two regions. That is what a `<!-- solution: ID -->` block of
the book holds.

Command line (run from the repository's or a workspace's root):
    python3 scripts/course_registry.py ids              the exercise ids, in order
    python3 scripts/course_registry.py field ID KEY     one field (title, chapter, hint) of one exercise
    python3 scripts/course_registry.py files ID         the files holding a region of ID
    python3 scripts/course_registry.py region-files     the files holding any region
    python3 scripts/course_registry.py table            id, title, chapter, hint and files (';'), tab-separated
A malformed registry or an unknown id prints an error and exits 2.
"""
import pathlib
import re
import sys
from dataclasses import dataclass, field

ID = r"ex\d\d-[a-z0-9-]+"
BEGIN = re.compile(rf"^(\s*)// BEGIN EXERCISE ({ID})\s*$")
END = re.compile(rf"^\s*// END EXERCISE ({ID})\s*$")
JOIN = "// ..."
REGISTRY = "course/exercises.txt"
KEYS = ("title", "chapter", "hint", "checks")
SPACE = " \t\r\f\v"  # what a line and a key and a value are trimmed of


class RegistryError(Exception):
    """A malformed course/exercises.txt; the message names file and line."""


@dataclass
class Exercise:
    id: str        # "ex07-rmsnorm"
    title: str     # "RMSNorm forward"
    chapter: str   # "docs/07-rmsnorm.md"
    hint: str      # its hint lines, joined by one space
    line: int      # where its [id] line is


def parse_exercises(text, path=REGISTRY):
    """[Exercise] of a registry's TEXT, in order; RegistryError names PATH:line."""
    all_, seen = [], {}
    for number, raw in enumerate(text.split("\n"), 1):
        line = raw.strip(SPACE)
        if not line or line.startswith("#"):
            continue
        if line.startswith("["):
            m = re.fullmatch(rf"\[({ID})\]", line)
            if not m:
                raise RegistryError(f"{path}:{number}: expected [exNN-name], got '{line}'")
            if m.group(1) in seen:
                raise RegistryError(f"{path}:{number}: {m.group(1)} again (first at line {seen[m.group(1)]})")
            seen[m.group(1)] = number
            all_.append(Exercise(m.group(1), "", "", "", number))
            continue
        key, colon, value = line.partition(":")
        if not all_ or not colon:
            raise RegistryError(f"{path}:{number}: expected 'key: value', got '{line}'")
        key, value, e = key.strip(SPACE), value.strip(SPACE), all_[-1]
        if key not in KEYS:
            raise RegistryError(f"{path}:{number}: unknown key '{key}'")
        if key == "title":
            e.title = value
        elif key == "chapter":
            e.chapter = value
        elif key == "hint":
            e.hint += (" " if e.hint else "") + value
    for e in all_:
        if not e.title or not e.chapter:
            raise RegistryError(f"{path}:{e.line}: {e.id} needs a title and a chapter")
    return all_


def exercises(root):
    """[Exercise] of ROOT's course/exercises.txt, in the book's order."""
    path = pathlib.Path(root) / REGISTRY
    try:
        text = path.read_text()
    except OSError as err:
        raise RegistryError(f"{REGISTRY}: cannot read it ({err.strerror})") from None
    return parse_exercises(text)


def exercise_ids(root):
    """The exercise ids of course/exercises.txt, in the book's order."""
    return [e.id for e in exercises(root)]


def find(root, id_):
    """The Exercise ID, or None."""
    return next((e for e in exercises(root) if e.id == id_), None)


# ---- regions ------------------------------------------------------------------------------------

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


def library_dirs(root):
    """The library folders, as CMakeLists.txt's `ropegrad_add_folder(NAME ...)` lines name them."""
    text = (pathlib.Path(root) / "CMakeLists.txt").read_text()
    return re.findall(r"^\s*ropegrad_add_folder\(\s*([A-Za-z0-9_]+)", text, re.M)


def library_files(root):
    """The library's source files under ROOT, in path order (paths, sorted as relative posix paths)."""
    root = pathlib.Path(root)
    files = []
    for d in library_dirs(root):
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


def files_of(by_id, id_):
    """The files (relative, in path order) holding a region of ID, each once."""
    return list(dict.fromkeys(r.file for r in by_id.get(id_, [])))


def solution_lines(regions):
    """An exercise's solution text, as lines (see the module's docstring)."""
    out = []
    for k, r in enumerate(regions):
        if k:
            out.append(JOIN)
        out += r.lines()
    return out


# ---- "did you mean" ------------------------------------------------------------------------------

def edit_distance(a, b):
    """Levenshtein distance: the fewest insertions, deletions and substitutions from A to B."""
    prev = list(range(len(b) + 1))
    for i, ca in enumerate(a, 1):
        cur = [i]
        for j, cb in enumerate(b, 1):
            cur.append(min(prev[j] + 1, cur[j - 1] + 1, prev[j - 1] + (ca != cb)))
        prev = cur
    return prev[-1]


def closest(word, names):
    """The names to suggest for a mistyped WORD: the closest one when it is near
    enough to be a typo (at most 2 edits, 3 for a word of 10 or more
    characters), else every name containing WORD when at most six do, else []."""
    if not names:
        return []
    best = min(names, key=lambda name: edit_distance(word, name))  # the first of the closest
    if edit_distance(word, best) <= (3 if len(word) >= 10 else 2):
        return [best]
    containing = [name for name in names if word and word in name]
    return containing if len(containing) <= 6 else []


# ---- the command line ---------------------------------------------------------------------------

def table_rows(root):
    """Every exercise as id, title, chapter, hint and its region files joined by ';'."""
    by_id, _ = all_regions(root)
    return ["\t".join([e.id, e.title, e.chapter, e.hint, ";".join(files_of(by_id, e.id))])
            for e in exercises(root)]


def run(args, root="."):
    """The lines a command prints; RegistryError or KeyError on a bad registry or id."""
    if args == ["ids"]:
        return exercise_ids(root)
    if len(args) == 3 and args[0] == "field" and args[2] in ("title", "chapter", "hint"):
        e = find(root, args[1])
        if e is None:
            raise KeyError(args[1])
        return [getattr(e, args[2])]
    if len(args) == 2 and args[0] == "files":
        return files_of(all_regions(root)[0], args[1])
    if args == ["region-files"]:
        by_id, _ = all_regions(root)
        return sorted({r.file for regions in by_id.values() for r in regions})
    if args == ["table"]:
        return table_rows(root)
    raise ValueError("usage: course_registry.py ids | field ID title|chapter|hint | files ID | region-files | table")


def main(argv):
    try:
        lines = run(argv[1:])
    except RegistryError as err:
        print(f"course: {err}", file=sys.stderr)
        return 2
    except KeyError as err:
        print(f"course: no exercise {err}", file=sys.stderr)
        return 2
    except ValueError as err:
        print(err, file=sys.stderr)
        return 2
    for line in lines:
        print(line)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
