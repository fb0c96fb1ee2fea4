#!/usr/bin/env python3
"""No solution in a workspace: find the reference code of stubbed exercises
wherever it still is, and strip the book's solution blocks.

    course_leaks.py regions ROOT [ID...]    each exercise's solution text (its
                                            regions, see scripts/course_registry.py)
    course_leaks.py leaks ROOT WORKSPACE    exit 1 if a file of WORKSPACE holds a
                                            distinctive line of a stubbed exercise
    course_leaks.py simd ROOT               exit 1 if a region uses SIMD dispatch,
                                            intrinsics or a one-pass/fast helper
    course_leaks.py strip WORKSPACE         remove what a workspace must not hold:
                                            course/mutations/, the solution blocks
                                            of its stubbed exercises, and for the
                                            problems (docs/course.md, Problems): the
                                            worked solutions of its open problems and
                                            course/problem_answers.txt, whose fixed
                                            answers go to .course/answers encoded

Standard library only; regions are found by scripts/course_registry.py (the
rule check_docs.py uses for the book's solution blocks).

Distinctive lines (`leaks`). A line of an exercise's region, stripped of
leading and trailing whitespace and of a trailing comment (what follows
"  //", two spaces then //, when the code before it is not trivial), is
distinctive when
  * it is not trivial: it has at least MIN_CHARS (12) characters and at
    least MIN_WORDS (3) different words, a word being an identifier (compared
    ignoring case) that is not a C++ keyword or built-in type name (KEYWORDS):
    `return out;`, `for (int64_t i = 0; i < n; ++i) {`, `double kept = 0;`
    and `Shape shape = x.shape();` are trivial, `total += weight[k];` is not;
  * it is contained in no line of ROOT's library sources (*.cpp and *.h under
    tensor/ autograd/ nn/ tasks/ tokenizer/) outside that exercise's own
    regions: a line the library also writes elsewhere (in code that stays in
    a workspace, or in another exercise's region) gives nothing away.
WORKSPACE leaks a stubbed exercise (an id of WORKSPACE/.course/stubbed, one per
line) when a line of any of its files (every file, any type, except under
.git/) *contains* one of that exercise's distinctive lines: a patch's "+    x"
line, a chapter's indented block and an inline `x` all count.

Solution blocks (`strip`). The book may show an exercise's reference code in
    <!-- solution: ID -->
    ??? note "ropegrad's solution (ID)"
        ```cpp
        ...
        ```
    <!-- end solution -->
`strip` replaces each such block of a stubbed exercise, in every *.md file of
the workspace, with the one line
    <!-- solution of ID removed in this workspace: scripts/dev.sh course new -->
and deletes course/mutations/ (each patch's context is the reference; the
patches stay in the reference tree, where `course proof` applies them).

Problems (`strip`, `leaks`). A workspace's *open* problems are those of the
chapters from its first stubbed exercise's on, every problem when the course's
first exercise is stubbed (.course/problems, written by `strip`). `strip` replaces the
worked solution of each open problem,
    <!-- problem-solution: ID -->
    ??? note "Worked solution (ID)"
        ...
    <!-- end problem-solution -->
with the line `<!-- worked solution of ID removed in this workspace: scripts/dev.sh
course new -->`, writes the fixed answers encoded to .course/answers
(scripts/course_problems.py) and deletes course/problem_answers.txt. `leaks`
then also fails when the workspace holds course/problem_answers.txt, a worked
solution of an open problem, or a fixed answer of an open problem in plain
text, anywhere in any file: a decimal number (digit groups separated or not,
in any notation) with at least as many significant digits as the reference,
4 or more, that rounds to it; a text answer of 5 characters or more as a
whole word. Shorter answers (a small integer) cannot be hidden and are not
looked for (scripts/course_problems.py leak-forms ROOT ID says which).
"""
import os
import pathlib
import re
import shutil
import sys

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))
import course_problems  # noqa: E402
import course_registry  # noqa: E402

MIN_CHARS = 12
MIN_WORDS = 3
KEYWORDS = set("""alignas alignof and auto bool break case catch char const constexpr const_cast continue decltype
    default delete do double else enum explicit extern false float for friend if inline int int8_t int16_t int32_t
    int64_t uint8_t uint16_t uint32_t uint64_t size_t long mutable namespace new noexcept not nullptr operator or
    private protected public reinterpret_cast return short signed sizeof static static_cast std struct switch
    template this throw true try typedef typename union unsigned using void volatile while""".split())
SIMD = re.compile(r"simd::|\brun_best\b|\brun_avx2\b|(?<![A-Za-z0-9])_mm\w*|__m256|#\s*pragma\s+omp|\bdot_in_double\b|"
                  r"\bmax_of\b|\bsum_of\b|\bfast_exp\b|\bparallel_for\b")
SOLUTION_BEGIN = re.compile(r"^<!-- solution: (" + course_registry.ID + r") -->\s*$")
SOLUTION_END = re.compile(r"^<!-- end solution -->\s*$")
PROBLEM_SOLUTION_BEGIN = re.compile(r"^<!-- problem-solution: (ch\d\d-[a-z0-9-]+) -->\s*$")
PROBLEM_SOLUTION_END = re.compile(r"^<!-- end problem-solution -->\s*$")


def words(s):
    return {w.lower() for w in re.findall(r"[A-Za-z_][A-Za-z0-9_]*", s) if w not in KEYWORDS}


def trivial(s):
    """A stripped region line too common to give a solution away."""
    return len(s) < MIN_CHARS or len(words(s)) < MIN_WORDS


def key(line):
    """What of a region line is looked for: the line stripped of surrounding
    whitespace and of a trailing comment (`code;  // note`: a copy that
    dropped the note still counts), unless the code alone is trivial."""
    s = line.strip()
    code = s.split("  //")[0].rstrip()
    return code if code != s and not trivial(code) else s


def distinctive_lines(root):
    """{id: {stripped line: (file, line number) of its first place in a region}}."""
    root = pathlib.Path(root)
    by_id, problems = course_registry.all_regions(root)
    if problems:
        sys.exit("course leaks: " + "\n".join(problems))
    in_region = {}  # file -> set of line numbers inside (or marking) a region
    for regions in by_id.values():
        for r in regions:
            in_region.setdefault(r.file, set()).update(range(r.begin, r.end + 1))
    outside = []
    for f in course_registry.library_files(root):
        rel = f.relative_to(root).as_posix()
        skip = in_region.get(rel, set())
        outside += [l for n, l in enumerate(f.read_text(errors="replace").split("\n"), 1) if n not in skip]
    outside_text = "\n".join(outside)
    result = {}
    for id_, regions in by_id.items():
        others = "\n".join(l for other, rs in by_id.items() if other != id_ for r in rs for l in r.raw)
        lines = {}
        for r in regions:
            for k, raw in enumerate(r.raw):
                s = key(raw)
                if trivial(s) or s in lines or s in outside_text or s in others:
                    continue
                lines[s] = (r.file, r.begin + 1 + k)
        result[id_] = lines
    return result


def stubbed_ids(workspace):
    f = pathlib.Path(workspace) / ".course" / "stubbed"
    if not f.is_file():
        sys.exit(f"course leaks: {f} does not exist: not a workspace made by scripts/dev.sh course new")
    return [l.strip() for l in f.read_text().split("\n") if l.strip()]


def workspace_files(workspace):
    workspace = pathlib.Path(workspace)
    for dirpath, dirnames, filenames in os.walk(workspace):
        dirnames[:] = sorted(d for d in dirnames if not (d == ".git" and pathlib.Path(dirpath) == workspace))
        for name in sorted(filenames):
            p = pathlib.Path(dirpath) / name
            if p.is_file() and not p.is_symlink():
                yield p


def find_leaks(root, workspace):
    """[(file, line number, id, distinctive line)] of WORKSPACE, and the
    number of distinctive lines looked for."""
    workspace = pathlib.Path(workspace)
    stubbed = set(stubbed_ids(workspace))
    wanted = {}  # first MIN_CHARS characters -> [(line, id)]
    count = 0
    for id_, lines in distinctive_lines(root).items():
        if id_ not in stubbed:
            continue
        for s in lines:
            wanted.setdefault(s[:MIN_CHARS], []).append((s, id_))
            count += 1
    found = []
    for p in workspace_files(workspace):
        text = p.read_bytes().decode("utf-8", errors="replace")
        rel = p.relative_to(workspace).as_posix()
        for n, line in enumerate(text.split("\n"), 1):
            seen = set()
            for i in range(len(line) - MIN_CHARS + 1):
                hits = wanted.get(line[i:i + MIN_CHARS])
                if not hits:
                    continue
                for s, id_ in hits:
                    if (s, id_) not in seen and line.startswith(s, i):
                        seen.add((s, id_))
                        found.append((rel, n, id_, s))
    return found, count


def cmd_regions(root, ids):
    by_id, problems = course_registry.all_regions(root)
    for p in problems:
        print(f"course regions: {p}", file=sys.stderr)
    order = ids or [i for i in course_registry.exercise_ids(root) if i in by_id] + \
        sorted(i for i in by_id if i not in course_registry.exercise_ids(root))
    for id_ in order:
        regions = by_id.get(id_)
        if not regions:
            print(f"course regions: no region of {id_}", file=sys.stderr)
            return 1
        places = ", ".join(f"{r.file}:{r.begin}-{r.end}" for r in regions)
        print(f"== {id_}: {places}")
        for line in course_registry.solution_lines(regions):
            print(line)
    return 1 if problems else 0


def open_problem_ids(workspace):
    f = pathlib.Path(workspace) / ".course" / "problems"
    if not f.is_file():
        sys.exit(f"course leaks: {f} does not exist: make the workspace again (scripts/dev.sh course new)")
    return [l.strip() for l in f.read_text().split("\n") if l.strip()]


def find_problem_leaks(root, workspace):
    """([(file, line, what)], fixed answers looked for, fixed answers too short to look for) of WORKSPACE:
    the answers file, worked solutions of open problems, fixed answers of open problems in plain text."""
    workspace = pathlib.Path(workspace)
    if not (pathlib.Path(root) / "course" / "problems.txt").is_file():
        return [], 0, []  # a tree without problems
    open_ids = set(open_problem_ids(workspace))
    found = []
    if (workspace / "course" / "problem_answers.txt").exists():
        found.append(("course/problem_answers.txt", 0, "the problems' reference answers"))
    refs = course_problems.reference_answers(root) or {}
    texts, numbers, looked, short = [], [], 0, []
    for p in course_problems.parse_registry(root):
        if p.value != "fixed" or p.id not in open_ids or p.id not in refs:
            continue
        key = course_problems.leak_key(p, refs[p.id])
        if key is None:
            short.append(p.id)
            continue
        looked += 1
        if key[0] == "text":
            for form in key[1]:
                texts.append((re.compile(r"(?i)(?<![A-Za-z0-9_])" + re.escape(form) + r"(?![A-Za-z0-9_])"), p.id))
        else:
            numbers.append((p.id, key[1], key[2]))
    for p in workspace_files(workspace):
        rel = p.relative_to(workspace).as_posix()
        if rel.startswith(".course/"):
            continue
        text = p.read_bytes().decode("utf-8", errors="replace")
        for n, line in enumerate(text.split("\n"), 1):
            m = PROBLEM_SOLUTION_BEGIN.match(line)
            if m and m.group(1) in open_ids:
                found.append((rel, n, f"the worked solution of {m.group(1)}"))
            for rx, pid in texts:
                hit = rx.search(line)
                if hit:
                    found.append((rel, n, f"the fixed answer of {pid} in plain text: {hit.group(0)}"))
            if not numbers:
                continue
            for tok in course_problems.NUMBER_TOKEN.finditer(line):
                digits = course_problems.significant_digits(tok.group(0))
                if digits < 4:
                    continue
                x = course_problems.number_of(tok.group(0))
                for pid, v, k in numbers:
                    if digits >= k and course_problems.same_at(x, v, k):
                        found.append((rel, n, f"the fixed answer of {pid} in plain text: {tok.group(0)}"))
    return found, looked, short


def cmd_leaks(root, workspace):
    found, count = find_leaks(root, workspace)
    for rel, n, id_, s in found:
        print(f"course leaks: {rel}:{n}: line of {id_}'s region: {s}")
    problem_found, looked, short = find_problem_leaks(root, workspace)
    for rel, n, what in problem_found:
        print(f"course leaks: {rel}:{n}: {what}")
    if found or problem_found:
        files = sorted({f for f, *_ in found} | {f for f, *_ in problem_found})
        print(f"course leaks: {len(found)} line(s) of reference regions and {len(problem_found)} of problems' "
              f"answers in {len(files)} file(s) of {workspace}", file=sys.stderr)
        return 1
    n_open = len(open_problem_ids(workspace)) if (pathlib.Path(root) / "course" / "problems.txt").is_file() else 0
    print(f"course leaks: none: {count} distinctive line(s) of {len(stubbed_ids(workspace))} stubbed "
          f"exercise(s), the worked solutions of {n_open} open problem(s) and "
          f"{looked} fixed answer(s) in plain text ({len(short)} too short to look for) looked for in "
          f"{sum(1 for _ in workspace_files(workspace))} file(s) of {workspace}")
    return 0


def cmd_simd(root):
    by_id, problems = course_registry.all_regions(root)
    bad = 0
    for id_, regions in by_id.items():
        for r in regions:
            for k, raw in enumerate(r.raw):
                if SIMD.search(raw):
                    print(f"course simd: {r.file}:{r.begin + 1 + k}: {id_}: {raw.strip()}")
                    bad += 1
    for p in problems:
        print(f"course simd: {p}")
    if bad or problems:
        return 1
    print(f"course simd: none in the {sum(len(r) for r in by_id.values())} region(s) of {len(by_id)} exercise(s)")
    return 0


def strip_marked(text, ids, begin, end, marks, removed_line):
    """(text without the blocks between BEGIN and END whose id is in IDS, ids
    removed, problems). MARKS names the two marks in a problem's message;
    REMOVED_LINE(id) is the line left where a block was."""
    out, removed, problems = [], [], []
    lines = text.split("\n")
    i = 0
    while i < len(lines):
        m = begin.match(lines[i])
        if m and m.group(1) in ids:
            j = i + 1
            while j < len(lines) and not end.match(lines[j]) and not begin.match(lines[j]):
                j += 1
            if j == len(lines) or not end.match(lines[j]):
                problems.append((i + 1, f"<!-- {marks[0]}: {m.group(1)} --> has no <!-- {marks[1]} -->"))
                out.append(lines[i])
                i += 1
                continue
            out.append(removed_line(m.group(1)))
            removed.append(m.group(1))
            i = j + 1
            continue
        out.append(lines[i])
        i += 1
    return "\n".join(out), removed, problems


def strip_text(text, stubbed):
    """(text without the solution blocks of stubbed exercises, ids removed, problems)."""
    return strip_marked(text, stubbed, SOLUTION_BEGIN, SOLUTION_END, ("solution", "end solution"),
                        lambda id_: f"<!-- solution of {id_} removed in this workspace: scripts/dev.sh course new -->")


def strip_problem_solutions(text, open_ids):
    """(text without the worked solutions of OPEN_IDS, ids removed, problems)."""
    return strip_marked(text, open_ids, PROBLEM_SOLUTION_BEGIN, PROBLEM_SOLUTION_END,
                        ("problem-solution", "end problem-solution"),
                        lambda id_: f"<!-- worked solution of {id_} removed in this workspace: scripts/dev.sh course new -->")


def cmd_strip(workspace):
    workspace = pathlib.Path(workspace)
    stubbed = set(stubbed_ids(workspace))
    bad = 0
    mutations = workspace / "course" / "mutations"
    if mutations.exists():
        shutil.rmtree(mutations)
    # The problems: fixed answers encoded into .course/answers, the open problems listed in
    # .course/problems, then the plain answers go.
    if (workspace / "course" / "problems.txt").is_file():
        course_problems.cmd_encode(workspace, workspace)
        (workspace / "course" / "problem_answers.txt").unlink(missing_ok=True)
    open_ids = set(open_problem_ids(workspace)) if (workspace / ".course" / "problems").is_file() else set()
    worked = 0
    blocks = 0
    for p in workspace_files(workspace):
        if p.suffix != ".md":
            continue
        text = p.read_text(errors="replace")
        new, removed, problems = strip_text(text, stubbed)
        new, removed_worked, more = strip_problem_solutions(new, open_ids)
        for n, msg in problems + more:
            print(f"course strip: {p.relative_to(workspace).as_posix()}:{n}: {msg}", file=sys.stderr)
            bad += 1
        if removed or removed_worked:
            p.write_text(new)
            blocks += len(removed)
            worked += len(removed_worked)
    print(f"course strip: {blocks} solution block(s), {worked} worked solution(s) of problems, "
          f"course/mutations/ and course/problem_answers.txt removed from {workspace}")
    return 1 if bad else 0


def main(argv):
    usage = __doc__.split("\n\n")[1]
    if len(argv) >= 2 and argv[0] == "regions":
        return cmd_regions(argv[1], argv[2:])
    if len(argv) == 3 and argv[0] == "leaks":
        return cmd_leaks(argv[1], argv[2])
    if len(argv) == 2 and argv[0] == "simd":
        return cmd_simd(argv[1])
    if len(argv) == 2 and argv[0] == "strip":
        return cmd_strip(argv[1])
    print("usage:\n" + usage, file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
