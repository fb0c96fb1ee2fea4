#!/usr/bin/env python3
r"""The book's doc test: what a chapter shows is what the code does.

    check_docs.py --build BUILD_DIR [--regen output|all]
    check_docs.py --regen solutions     rewrite the solution blocks only (no build needed)
    check_docs.py --only static         every check that needs no build (no output blocks,
                                        no CTest labels)
    check_docs.py --build B [--regen all] --match RE
                                        only the blocks whose command RE finds

Checks, each failure naming the file, the block and the first differing line:

* output blocks: a fenced block (or a Markdown table) right after `<!-- output: COMMAND -->` equals
  what COMMAND prints (stdout then stderr, run from the repository root with
  BOOK_ENV: one OpenBLAS kernel and one thread, so float32 runs repeat on every CPU;
  `./build/` in COMMAND means BUILD_DIR). `<!-- output: COMMAND | ignore: RE -->`
  blanks what the regular expression RE matches on both sides first (timings).
  A table takes only the "|" lines of the output; the figures
  `![...](figures/X.svg)` right after the block of a run with `--out DIR` must
  equal DIR/loss_curves.svg (a sweep's, or scripts/experiments.sh's:
  DIR/loss_vs_step.svg, and DIR/loss_vs_time.svg for a name ending in "-time"); `<!-- figure: COMMAND -->` right before an image
  means COMMAND draws it into {out}, byte for byte. A block line that is exactly `...` stands for any number of program lines.
  `<!-- regen: COMMAND -->` marks a block produced by a long run: it is checked
  only by `--regen all` (scripts/dev.sh docs-regen), which rewrites it;
  `--regen output` rewrites the `output` blocks instead of comparing them.
  An output mark indented inside an admonition (a problem's worked solution,
  4 spaces) marks the equally indented fenced block after it.
* sources: a fenced block right after `<!-- source: FILE -->` is FILE.
* solutions: the book never shows an exercise region's code outside a
  collapsed solution block, in exactly this form (scripts/course_leaks.py
  strip removes it from a workspace, for the exercises stubbed there):

      <!-- solution: ID -->
      ??? note "ropegrad's solution (ID)"

          ```cpp
          CODE
          ```

      <!-- end solution -->

  CODE (each line indented by 4 spaces, blank lines empty) is ID's solution
  text, defined in scripts/course_registry.py: the lines of each region of ID
  (between `// BEGIN EXERCISE ID` and `// END EXERCISE ID` in the *.cpp and
  *.h files under tensor/ autograd/ nn/ tasks/ tokenizer/, files in path
  order), each region dedented by its BEGIN line's indentation, regions
  joined by a line `// ...`. ID is an exercise of course/exercises.txt, has one
  block in the whole book, in the chapter the registry names. Outside these
  blocks no file of the book (docs/*.md, README.md) holds a distinctive line
  of a region (scripts/course_leaks.py's rule: the line a workspace must not
  hold; in a workspace, the exercises of .course/stubbed are skipped). `--regen solutions` (and `--regen output|all`) rewrite the blocks
  from the sources.
* links: every relative link in docs/ and README.md names an existing file,
  nothing points outside the repository, and every repository path written
  in inline code (`nn/rope.h`) exists.
* rendering (what the site shows, docs/tests/browser_check.py checks it in
  the browser): no heading holds maths (the table of contents shows it as raw
  TeX), no two `$$` blocks on adjacent lines (they typeset as one formula
  with a `$` in it), no `\_` inside `\text{}` (shown with its backslash), no
  control character (a `\v` lost from `\varepsilon`),
  no numbered list right after a bullet list (Python-Markdown merges it into
  the bullets and drops the numbers), no display formula at the margin inside
  a list item followed by the item's indented text (the list ends at the
  formula and the text falls out of it).
* numbered chapters: start with "After this chapter you can", end with their
  test command `ctest --test-dir build -L chNN` (the label from the table in
  docs/README.md); no plain-text "chapter N" outside a link. Every chapter
  and appendix ends with links to the previous and the next file in reading
  order.
* the label table in docs/README.md names labels CTest knows, and the README's
  commands agree with it.
* nothing in the sources, tests, scripts or docs names the specification or
  the texts the project was written from (appendix A stands in for them).
* docs/course.md's table of exercises is course/exercises.txt, in order, with
  the files that hold each exercise's regions.
* counts: a number written right after `<!-- count: NAME -->` (`There are
  <!-- count: exercises -->34 exercises`) is what the sources count today:
  `exercises` (course/exercises.txt's entries), `mutations` (the
  course/mutations/*.patch files), `check-files` (course/checks/ex*.cpp), and
  `before:ID` (the exercises before ID in course/exercises.txt). A count that
  drifts fails here, naming the file and the number it should be.
* problems (docs/course.md, Problems): each numbered chapter from 1 on ends
  with a section `## Problems` stating exactly its problems of
  course/problems.txt, in order, 3 to 8, each `**ID**` followed by its
  collapsed worked solution (`<!-- problem-solution: ID -->` ... `<!-- end
  problem-solution -->`, which scripts/course_leaks.py strip removes from a
  workspace), and a computed answer's solution shows `course-answer --explain ID`.
"""
import argparse
import os
import pathlib
import re
import subprocess
import sys
import tempfile

ROOT = pathlib.Path(__file__).resolve().parents[2]
DOCS = ROOT / "docs"
sys.path.insert(0, str(ROOT / "scripts"))
import course_leaks  # noqa: E402
import course_problems  # noqa: E402
import course_registry  # noqa: E402
MARK = re.compile(r"^( *)<!-- (output|regen): (.*?)(?: \| ignore: (.*?))? -->\s*$")
FENCE = re.compile(r"^(```+|~~~+)")


def chapters():
    """The book's files in reading order: chapters, then appendices."""
    files = sorted(DOCS.glob("[0-9][0-9]-*.md"))
    return files + sorted(DOCS.glob("appendix-*.md"))


# Float32 training runs depend on the order in which OpenBLAS sums (it picks a
# kernel from the CPU) and on how ropegrad splits GEMMs over its threads; the
# last bits that differ grow over hundreds of steps into a different fourth
# digit of the loss. The book's outputs are therefore printed with one kernel
# and one thread, which every x86-64 CPU with AVX2 and FMA (2013 on) runs
# identically: the same command prints the same numbers on every such machine.
BOOK_ENV = {"OPENBLAS_CORETYPE": "Haswell", "OPENBLAS_NUM_THREADS": "1", "ROPEGRAD_NUM_THREADS": "1"}
# Blocks whose numbers come from float32 training (the others are exact or float64).
TRAINING_RUN = re.compile(r"ropegrad (compare|train|sweep)|eval_table\.py|generate_example\.sh")


def book_kernel_runs_here():
    """Whether this CPU can run BOOK_ENV's OpenBLAS kernel (x86-64, AVX2, FMA)."""
    try:
        cpuinfo = pathlib.Path("/proc/cpuinfo").read_text()
    except OSError:
        return False
    flags = re.search(r"^flags\s*:(.*)$", cpuinfo, re.M)
    return bool(flags) and {"avx2", "fma"} <= set(flags.group(1).split())


BOOK_KERNEL = book_kernel_runs_here()
NOT_COMPARED = []  # training-run blocks this CPU cannot reproduce


def run(cmd, build, timeout=600):
    """COMMAND's output lines; TIMEOUT seconds at most (a regen block's long
    run gets an hour: on a busy 2-core machine a sweep takes far longer than
    the ten minutes an output block may)."""
    cmd = re.sub(r"\./build(?=/|\s|$)", str(build), cmd)  # ./build/x and a bare ./build argument
    env = dict(os.environ, **BOOK_ENV) if BOOK_KERNEL else dict(os.environ)
    p = subprocess.run(["bash", "-c", cmd], cwd=ROOT, env=env, capture_output=True, text=True, timeout=timeout)
    if p.returncode in (126, 127):
        # a program that is not built (or not executable): never let --regen
        # write the shell's complaint into a chapter
        sys.exit(f"check_docs: `{cmd}` could not run ({p.stderr.strip()}); build every target first "
                 f"(cmake --build {build} -j2)")
    return (p.stdout + p.stderr).rstrip("\n").split("\n")


def first_diff(want, got):
    """(block line, wanted, got) of the first mismatch, or None. A block line
    that is exactly "..." stands for any number of program lines."""
    g = 0
    for i, w in enumerate(want):
        if w == "...":
            rest = want[i + 1:]
            if not rest:
                return None
            # resume at the next program line equal to the next block line
            while g < len(got) and got[g] != rest[0]:
                g += 1
            continue
        have = got[g] if g < len(got) else "<end of output>"
        if w != have:
            return i + 1, w, have
        g += 1
    if g < len(got):
        return len(want) + 1, "<end of block>", got[g]
    return None


def block_at(lines, i, indent=""):
    """(first, end, body, table) of the block starting at line i: a fenced
    block (body between the fences) or a Markdown table (its "|" lines).
    INDENT: the block sits inside an admonition (a problem's worked solution),
    every line indented by it; the body is returned without it."""
    line = lines[i] if i < len(lines) else ""
    m = FENCE.match(line[len(indent):]) if line.startswith(indent) else None
    if m:
        end = i + 1
        while end < len(lines) and not lines[end].startswith(indent + m.group(1)):
            end += 1
        body = [l[len(indent):] if l.startswith(indent) else l.lstrip() for l in lines[i + 1:end]]
        return i + 1, end + 1, body, False
    end = i
    while end < len(lines) and lines[end].startswith("|"):
        end += 1
    if end == i:
        return None
    return i, end, lines[i:end], True


def figures_after(lines, end):
    """docs paths of the `![...](figures/X.svg)` images right after a block
    (blank lines between them allowed)."""
    figures = []
    for line in lines[end:end + 8]:
        m = re.match(r"!\[[^\]]*\]\((figures/[^)]+\.svg)\)", line)
        if m:
            figures.append(DOCS / m.group(1))
        elif line.strip():
            break
    return figures


def curves_of(figure, run_dir, cmd):
    """The plot of RUN_DIR that FIGURE shows: a name ending in "-time" is a
    sweep's loss against training time; else a sweep's loss against the step,
    or a train/compare run's loss curves."""
    if figure.stem.endswith("-time"):
        return run_dir / "loss_vs_time.svg"
    if "ropegrad sweep" in cmd or "experiments.sh" in cmd:
        return run_dir / "loss_vs_step.svg"
    return run_dir / "loss_curves.svg"


FIGURE_MARK = re.compile(r"^<!-- figure: (.*) -->\s*$")


def figure_mark(path, n, line, nxt, build, regen, errors):
    """`<!-- figure: COMMAND -->` before `![...](figures/X.svg)`: COMMAND writes
    the figure to {out}, which must equal docs/figures/X.svg byte for byte."""
    m = FIGURE_MARK.match(line)
    if not m:
        return
    where = f"{path.relative_to(ROOT)}:{n}"
    img = re.match(r"!\[[^\]]*\]\((figures/[^)]+)\)", nxt)
    if not img:
        errors.append(f"{where}: the figure mark is not followed by an image")
        return
    figure = DOCS / img.group(1)
    with tempfile.TemporaryDirectory() as tmp:
        drawn = pathlib.Path(tmp) / figure.name
        run(m.group(1).replace("{out}", str(drawn)), build)
        if not drawn.exists():
            errors.append(f"{where}: `{m.group(1)}` drew no figure")
        elif regen:
            if drawn.read_bytes() != figure.read_bytes():
                figure.write_bytes(drawn.read_bytes())
                print(f"{where}: wrote {figure.relative_to(ROOT)}")
        elif drawn.read_bytes() != figure.read_bytes():
            errors.append(f"{where}: {figure.relative_to(ROOT)} differs from what `{m.group(1)}` draws")


SOURCE_MARK = re.compile(r"^<!-- source: (\S+) -->\s*$")


def source_blocks(path, errors):
    """`<!-- source: FILE -->` before a fenced block: the block is FILE."""
    lines = path.read_text().split("\n")
    for n, line in enumerate(lines, 1):
        m = SOURCE_MARK.match(line)
        if not m:
            continue
        block = block_at(lines, n)
        want = (ROOT / m.group(1)).read_text().rstrip("\n").split("\n")
        d = first_diff(block[2] if block else [], want)
        if d:
            errors.append(f"{path.relative_to(ROOT)}:{n}: block differs from {m.group(1)} at its line {d[0]}:\n"
                          f"    text: {d[1]}\n    file: {d[2]}")


def output_blocks(path, build, regen, errors, match=None):
    """MATCH (a regular expression): only the blocks whose command it finds."""
    source_blocks(path, errors)
    lines = path.read_text().split("\n")
    for n, line in enumerate(lines, 1):
        if match is None:
            figure_mark(path, n, line, lines[n] if n < len(lines) else "", build, regen, errors)
    out, i, changed = [], 0, False
    while i < len(lines):
        m = MARK.match(lines[i])
        out.append(lines[i])
        i += 1
        if not m:
            continue
        indent, kind, cmd, ignore = m.groups()
        where = f"{path.relative_to(ROOT)}:{i}"
        block = block_at(lines, i, indent)
        if not block:
            errors.append(f"{where}: the {kind} mark is not followed by a fenced block or a table")
            continue
        first, end, want, table = block
        if (kind == "regen" and regen != "all") or (match and not re.search(match, cmd)):
            out.extend(lines[i:end])
            i = end
            continue
        if not BOOK_KERNEL and TRAINING_RUN.search(cmd):
            NOT_COMPARED.append(where)
            out.extend(lines[i:end])
            i = end
            continue
        got = run(cmd, build, 3600 if kind == "regen" else 600)
        if table:  # a table block holds only the table lines of the output
            got = [x for x in got if x.startswith("|")]
        # a run that writes loss curves (--out DIR) draws the figures below it
        run_dir = re.search(r"--out (\S+)", cmd)
        drawn = []  # (figure in docs/, the plot the run drew)
        if run_dir:
            d = pathlib.Path(run_dir.group(1).replace("./build/", f"{build}/"))
            d = d if d.is_absolute() else ROOT / d
            drawn = [(f, curves_of(f, d, cmd)) for f in figures_after(lines, end)]
        w, g = want, got
        if ignore:
            w = [x if x == "..." else re.sub(ignore, "<ignored>", x) for x in want]
            g = [re.sub(ignore, "<ignored>", x) for x in got]
        d = first_diff(w, g)
        if regen and d:
            out.extend(lines[i:first])
            out.extend((indent + x) if x else "" for x in got)
            out.extend(lines[end - 1:end] if not table else [])
            changed = True
            print(f"{where}: rewritten ({cmd})")
        if regen:
            for figure, curves in drawn:
                if curves.exists():
                    figure.write_bytes(curves.read_bytes())
                    print(f"{where}: wrote {figure.relative_to(ROOT)}")
            if not d:
                out.extend(lines[i:end])
        else:
            if d:
                n, a, b = d
                errors.append(f"{where}: block `{cmd}` differs at its line {n}:\n"
                              f"    chapter: {a}\n    program: {b}")
            for figure, curves in drawn:
                if not curves.exists() or curves.read_bytes() != figure.read_bytes():
                    errors.append(f"{where}: {figure.relative_to(ROOT)} differs from the {curves.name} this run drew")
            out.extend(lines[i:end])
        i = end
    if regen and changed:
        path.write_text("\n".join(out))


SOLUTION_BEGIN = re.compile(r"^<!-- solution: (\S+) -->\s*$")
SOLUTION_END = "<!-- end solution -->"


def solution_block(id_, code):
    """The lines of ID's solution block around CODE (its lines)."""
    return ([f"<!-- solution: {id_} -->", f"??? note \"ropegrad's solution ({id_})\"", "", "    ```cpp"] +
            [("    " + line) if line else "" for line in code] + ["    ```", "", SOLUTION_END])


def solution_blocks(path, regen, errors, seen):
    """`<!-- solution: ID -->` blocks: exactly solution_block(ID, ID's solution
    text); with regen, rewritten so. SEEN maps an id to where its block is."""
    by_id, problems = course_registry.all_regions(ROOT)
    errors.extend(f"sources: {p}" for p in problems)
    chapter_of = {e.id: e.chapter for e in course_registry.exercises(ROOT)}
    rel = path.relative_to(ROOT).as_posix()
    lines = path.read_text().split("\n")
    out, i, changed = [], 0, False
    while i < len(lines):
        m = SOLUTION_BEGIN.match(lines[i])
        if not m:
            out.append(lines[i])
            i += 1
            continue
        id_, where = m.group(1), f"{rel}:{i + 1}"
        end = i + 1
        while end < len(lines) and lines[end].strip() != SOLUTION_END and not SOLUTION_BEGIN.match(lines[end]):
            end += 1
        if end == len(lines) or lines[end].strip() != SOLUTION_END:
            errors.append(f"{where}: solution block of {id_} without `{SOLUTION_END}`")
            out.append(lines[i])
            i += 1
            continue
        if id_ not in by_id:
            errors.append(f"{where}: solution block of {id_}, which has no region in the sources")
            out.extend(lines[i:end + 1])
            i = end + 1
            continue
        if id_ in seen:
            errors.append(f"{where}: a second solution block of {id_} (the first is at {seen[id_]})")
        seen[id_] = where
        if chapter_of.get(id_) != rel:
            errors.append(f"{where}: the solution block of {id_} belongs in {chapter_of.get(id_)} "
                          f"(its chapter in course/exercises.txt)")
        want = solution_block(id_, course_registry.solution_lines(by_id[id_]))
        have = lines[i:end + 1]
        if have != want:
            if regen:
                changed = True
                print(f"{where}: solution block of {id_} rewritten")
            else:
                d = first_diff(have, want)
                errors.append(f"{where}: solution block of {id_} differs from the sources at its line {d[0]}:\n"
                              f"    text:    {d[1]}\n    sources: {d[2]}")
        out.extend(want if regen else have)
        i = end + 1
    if changed:
        path.write_text("\n".join(out))


def no_region_code(files, errors):
    """Outside solution blocks, no book file holds a distinctive line of an
    exercise region (what scripts/course_leaks.py leaks looks for)."""
    stubbed = ROOT / ".course" / "stubbed"  # in a workspace, a stubbed region is the stub: nothing to hide
    skip = set(stubbed.read_text().split()) if stubbed.is_file() else set()
    wanted = {}
    for id_, lines in course_leaks.distinctive_lines(ROOT).items():
        if id_ in skip:
            continue
        for s in lines:
            wanted.setdefault(s[:course_leaks.MIN_CHARS], []).append((s, id_))
    for f in files:
        inside = False
        for n, line in enumerate(f.read_text().split("\n"), 1):
            if SOLUTION_BEGIN.match(line):
                inside = True
            elif line.strip() == SOLUTION_END:
                inside = False
            if inside:
                continue
            for k in range(len(line) - course_leaks.MIN_CHARS + 1):
                for s, id_ in wanted.get(line[k:k + course_leaks.MIN_CHARS], ()):
                    if line.startswith(s, k):
                        errors.append(f"{f.relative_to(ROOT)}:{n}: shows a line of {id_}'s region outside its "
                                      f"solution block: {s}")


LINK = re.compile(r"\]\(([^)\s]+)\)")


def strip_code(text):
    """Text with fenced blocks and inline code removed (line count kept)."""
    res, fence = [], None
    for line in text.split("\n"):
        m = FENCE.match(line.lstrip())
        if fence:
            res.append("")
            if m and m.group(1).startswith(fence):
                fence = None
            continue
        if m:
            fence = m.group(1)
            res.append("")
            continue
        res.append(re.sub(r"`[^`]*`", "``", line))
    return res


PATH_IN_CODE = re.compile(r"`((?:tensor|autograd|nn|optim|io|catalog|tokenizer|tasks|dist|train|cli|tests|bench|docs|scripts)/[\w./-]+\.(?:h|cpp|py|md|sh|txt|svg))`")


def links(path, errors):
    # file names in inline code (`nn/rope.h`) must exist as well
    for n, line in enumerate(path.read_text().split("\n"), 1):
        for name in PATH_IN_CODE.findall(line):
            if not (ROOT / name).exists():
                errors.append(f"{path.relative_to(ROOT)}:{n}: names `{name}`, which does not exist")
    for n, line in enumerate(strip_code(path.read_text()), 1):
        for target in LINK.findall(line):
            if re.match(r"[a-z]+:", target) or target.startswith("#"):
                continue
            file = target.split("#")[0]
            dest = (path.parent / file).resolve()
            if ROOT not in dest.parents and dest != ROOT:
                errors.append(f"{path.relative_to(ROOT)}:{n}: link `{target}` points outside the repository")
            elif not dest.exists():
                errors.append(f"{path.relative_to(ROOT)}:{n}: link `{target}` names a missing file")
        if "shared/SPEC" in line or re.search(r"\bseed \d{3}\b", line):
            errors.append(f"{path.relative_to(ROOT)}:{n}: names a source outside the book: {line.strip()}")


def rendering(path, errors):
    """Markdown that the site renders wrongly (see the docstring)."""
    rel = path.relative_to(ROOT)
    text = path.read_text()
    for n, line in enumerate(text.split("\n"), 1):
        control = re.search(r"[\x00-\x08\x0b-\x1f\x7f]", line)
        if control:
            errors.append(f"{rel}:{n}: a control character, {control.group(0)!r}")
    lines = strip_code(text)
    prev_item = None  # "bullet" while inside a bullet list (items and their continuation lines)
    for n, line in enumerate(lines, 1):
        if re.match(r"#{1,6} ", line) and re.search(r"(?<!\\)\$", line):
            errors.append(f"{rel}:{n}: a heading with maths, which the table of contents shows as raw TeX: {line}")
        if n > 1 and line.lstrip().startswith("$$") and lines[n - 2].rstrip().endswith("$$") \
                and lines[n - 2].strip() != "$$":
            errors.append(f"{rel}:{n}: a $$ block right after another one: they typeset as one formula "
                          f"showing a `$` (one block, with \\begin{{aligned}}, or a blank line between)")
        if re.search(r"\\text\{[^}]*\\_", line):
            errors.append(f"{rel}:{n}: \\_ inside \\text{{}}, which MathJax shows with its backslash (write _)")
        if prev_item == "bullet" and line.rstrip() == "$$":
            # a display formula at the margin ends the list: text indented after it falls out of the item
            close = next((k for k in range(n, len(lines)) if lines[k].strip() == "$$"), None)
            after = next((l for l in lines[close + 1:] if l.strip()), "") if close is not None else ""
            if after.startswith(" "):
                errors.append(f"{rel}:{n}: a display formula at the margin inside a list item ends the list, and "
                              f"the indented text after it falls out of it: indent the formula by 4 spaces, and "
                              f"its item's lines after it too")
        if re.match(r"[-*+] ", line):
            prev_item = "bullet"
        elif re.match(r"\d+\. ", line):
            if prev_item == "bullet":
                errors.append(f"{rel}:{n}: a numbered list right after a bullet list: the site merges it into the "
                              f"bullets and drops the numbers")
            prev_item = "number"
        elif line.strip() and not line.startswith(" "):
            prev_item = None


def course_table(errors):
    """docs/course.md's table of exercises lists every exercise of
    course/exercises.txt, in order, with the files that hold its regions."""
    ids = course_registry.exercise_ids(ROOT)
    rows = re.findall(r"^\| `(ex[0-9a-z-]+)` \|[^|]*\| ([^|]*) \|", (DOCS / "course.md").read_text(), re.M)
    if [r[0] for r in rows] != ids:
        errors.append(f"docs/course.md: the exercise table lists {[r[0] for r in rows]}, "
                      f"course/exercises.txt {ids}")
        return
    by_id, _ = course_registry.all_regions(ROOT)  # solution_blocks reports the marker problems
    for exercise, cell in rows:
        have = sorted(course_registry.files_of(by_id, exercise))
        shown = sorted(re.findall(r"`([^`]+)`", cell))
        if have != shown:
            errors.append(f"docs/course.md: {exercise} is written in {have}, the table says {shown}")


COUNT_MARK = re.compile(r"<!-- count: ([a-z-]+(?::[0-9a-z-]+)?) -->(\d*)")


def source_counts():
    """What a `<!-- count: NAME -->` mark may count, from the sources."""
    ids = course_registry.exercise_ids(ROOT)
    counts = {"exercises": len(ids),
              "mutations": len(list((ROOT / "course" / "mutations").glob("*.patch"))),
              "check-files": len(list((ROOT / "course" / "checks").glob("ex*.cpp")))}
    counts.update({f"before:{id_}": k for k, id_ in enumerate(ids)})
    return counts


def counts(files, errors):
    """Every `<!-- count: NAME -->N` says today's count (see the docstring)."""
    have = source_counts()
    for f in files:
        for n, line in enumerate(f.read_text().split("\n"), 1):
            for name, number in COUNT_MARK.findall(line):
                where = f"{f.relative_to(ROOT)}:{n}"
                if name not in have:
                    errors.append(f"{where}: `<!-- count: {name} -->` counts nothing known "
                                  f"(exercises, mutations, check-files, before:ID)")
                elif number != str(have[name]):
                    errors.append(f"{where}: `<!-- count: {name} -->` is followed by {number or 'no number'}; "
                                  f"the sources count {have[name]}")


PROBLEM_LEAD = re.compile(r"^\*\*(ch\d\d-[a-z0-9-]+)\*\*")
PROBLEM_SOLUTION_BEGIN = re.compile(r"^<!-- problem-solution: (\S+) -->\s*$")
PROBLEM_SOLUTION_END = "<!-- end problem-solution -->"


def problem_sections(files, errors):
    """Each numbered chapter from 1 on ends with a section `## Problems` (its
    last, before the footer) that states the problems course/problems.txt
    gives it, in order, 3 to 8, each a paragraph starting `**ID**`, followed by
    its worked solution:

        <!-- problem-solution: ID -->
        ??? note "Worked solution (ID)"

            ...indented by 4 spaces...

        <!-- end problem-solution -->

    and a computed answer's solution shows `course-answer --explain ID`."""
    registry = course_problems.parse_registry(ROOT)
    known = {p.id: p for p in registry}
    by_chapter = {}
    for p in registry:
        by_chapter.setdefault(p.chapter, []).append(p.id)
    for f in files:
        rel = f.relative_to(ROOT).as_posix()
        lines = f.read_text().split("\n")
        want = by_chapter.get(rel, [])
        numbered = re.match(r"(\d\d)-", f.name)
        heads = [n for n, l in enumerate(lines) if l.startswith("## ")]
        starts = [n for n in heads if lines[n].rstrip() == "## Problems"]
        if not numbered or int(numbered.group(1)) == 0:
            if starts or want:
                errors.append(f"{rel}: only the numbered chapters from 1 on have a section Problems")
            continue
        if len(starts) != 1:
            errors.append(f"{rel}: has {len(starts)} sections '## Problems' (one, the last, is wanted)")
            continue
        start = starts[0]
        if heads[-1] != start:
            errors.append(f"{rel}:{heads[-1] + 1}: '{lines[heads[-1]]}' follows the section Problems, which must be last")
        end = next((n for n in range(start, len(lines))
                    if lines[n].strip() == "---" or lines[n].startswith("This chapter's test")), len(lines))
        ids, solutions, n = [], {}, start
        while n < end:
            line = lines[n]
            m = PROBLEM_LEAD.match(line)
            if m:
                ids.append((m.group(1), n))
            b = PROBLEM_SOLUTION_BEGIN.match(line)
            if b:
                pid, j = b.group(1), n + 1
                while j < end and lines[j].strip() != PROBLEM_SOLUTION_END and not PROBLEM_SOLUTION_BEGIN.match(lines[j]):
                    j += 1
                where = f"{rel}:{n + 1}"
                if j >= end or lines[j].strip() != PROBLEM_SOLUTION_END:
                    errors.append(f"{where}: the worked solution of {pid} has no `{PROBLEM_SOLUTION_END}`")
                    n += 1
                    continue
                body = lines[n + 1:j]
                if body[:2] != [f'??? note "Worked solution ({pid})"', ""]:
                    errors.append(f"{where}: the worked solution of {pid} must start with the line "
                                  f'`??? note "Worked solution ({pid})"` and a blank line')
                bad = [k for k, l in enumerate(body[2:], n + 4) if l and not l.startswith("    ")]
                if bad:
                    errors.append(f"{rel}:{bad[0]}: a worked solution's lines are indented by 4 spaces (the note's body)")
                if pid in solutions:
                    errors.append(f"{where}: a second worked solution of {pid}")
                solutions[pid] = (n, body)
                n = j + 1
                continue
            n += 1
        got = [i for i, _ in ids]
        if got != want:
            errors.append(f"{rel}: the section Problems states {got}, course/problems.txt gives this chapter {want}")
        if not 3 <= len(got) <= 8:
            errors.append(f"{rel}: the section Problems has {len(got)} problems (3 to 8 wanted)")
        for k, (pid, at) in enumerate(ids):
            nxt = ids[k + 1][1] if k + 1 < len(ids) else end
            if pid not in solutions:
                errors.append(f"{rel}:{at + 1}: {pid} has no worked solution (<!-- problem-solution: {pid} -->)")
                continue
            pos, body = solutions[pid]
            if not at < pos < nxt:
                errors.append(f"{rel}:{pos + 1}: the worked solution of {pid} is not right after its statement")
            if pid in known and known[pid].value == "computed" and \
                    f"    <!-- output: ./build/course/course-answer --explain {pid} -->" not in body:
                errors.append(f"{rel}:{pos + 1}: the worked solution of the computed {pid} does not show "
                              f"`./build/course/course-answer --explain {pid}` (an output block)")
        for pid in solutions:
            if pid not in got:
                errors.append(f"{rel}: a worked solution of {pid}, which the section does not state")
        for n, line in enumerate(lines):
            if (PROBLEM_SOLUTION_BEGIN.match(line) or PROBLEM_LEAD.match(line)) and not start <= n < end:
                errors.append(f"{rel}:{n + 1}: a problem or worked solution outside the section Problems")


OUTSIDE = re.compile(r"SPEC\.md|/work/shared|\.\./shared|shared/seeds")


def nothing_points_outside(errors):
    """No source, script, test or doc names the specification or sources the
    project was written from: the repository stands alone (the book's
    appendix A holds the formulas and names the sources)."""
    me = pathlib.Path(__file__).resolve()
    for folder in ("tensor", "autograd", "nn", "optim", "io", "catalog", "tokenizer", "tasks", "dist", "train", "cli", "tests", "course", "bench", "examples",
                   "scripts", "fuzz", "docs", "cmake", ".ci"):
        for f in sorted((ROOT / folder).rglob("*")):
            if f.is_file() and f.resolve() != me and f.suffix in (".cpp", ".h", ".py", ".sh", ".md", ".txt", ".in", ""):
                for n, line in enumerate(f.read_text(errors="replace").split("\n"), 1):
                    if OUTSIDE.search(line):
                        errors.append(f"{f.relative_to(ROOT)}:{n}: names a file outside the repository: {line.strip()}")
    for f in (ROOT / "CMakeLists.txt", ROOT / "README.md", ROOT / "mkdocs.yml"):
        for n, line in enumerate(f.read_text().split("\n"), 1):
            if OUTSIDE.search(line):
                errors.append(f"{f.relative_to(ROOT)}:{n}: names a file outside the repository: {line.strip()}")


def label_table():
    """chapter file -> label, from the table in docs/README.md."""
    table = {}
    for line in (DOCS / "README.md").read_text().split("\n"):
        m = re.match(r"\|\s*\[[^\]]*\]\(([^)]+\.md)\)\s*\|\s*`([a-z0-9]+)`\s*\|", line)
        if m:
            table[m.group(1)] = m.group(2)
    return table


def chapter_shape(files, table, errors):
    # every chapter and appendix ends linking the files before and after it in reading order
    for i, f in enumerate(files):
        body = [l for l in f.read_text().split("\n") if l.strip()]
        tail = "\n".join(body[-3:])
        prev = files[i - 1].name if i > 0 else None
        nxt = files[i + 1].name if i + 1 < len(files) else None
        for name, what in ((prev, "previous"), (nxt, "next")):
            if name and f"]({name})" not in tail:
                errors.append(f"{f.relative_to(ROOT)}: the last lines do not link the {what} chapter, {name}")
    numbered = [f for f in files if re.match(r"\d\d-", f.name)]
    for k, f in enumerate(numbered):
        rel = f.relative_to(ROOT)
        text = f.read_text()
        body = [l for l in text.split("\n") if l.strip()]
        if not any(l.startswith("After this chapter you can") for l in body[:6]):
            errors.append(f"{rel}: does not start with \"After this chapter you can ...\"")
        label = table.get(f.name)
        if not label:
            errors.append(f"{rel}: has no row in the label table of docs/README.md")
        elif f"ctest --test-dir build -L {label} " not in text:
            errors.append(f"{rel}: does not end with its test command `ctest --test-dir build -L {label} ...`")
        for n, line in enumerate(strip_code(text), 1):
            plain = LINK.sub("](x)", re.sub(r"\[[^\]]*\]\([^)]*\)", "", line))
            m = re.search(r"\b[Cc]hapters? \d+", plain)
            if m:
                errors.append(f"{rel}:{n}: plain-text \"{m.group(0)}\" should be a link")


def labels_known(build, table, errors):
    p = subprocess.run(["ctest", "--test-dir", str(build), "--print-labels"], capture_output=True, text=True)
    known = set(l.strip() for l in p.stdout.split("\n")[1:] if l.strip())
    for chapter, label in table.items():
        if label not in known:
            errors.append(f"docs/README.md: label `{label}` of {chapter} is not a CTest label ({' '.join(sorted(known))})")
    readme = (ROOT / "README.md").read_text()
    for label in re.findall(r"ctest --test-dir build -L (\S+)", readme):
        if label not in known:
            errors.append(f"README.md: `ctest -L {label}` names no CTest label")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--build")
    ap.add_argument("--regen", choices=["output", "all", "solutions"],
                    help="rewrite blocks instead of comparing: the output ones (and the solutions), all, "
                         "or the solution blocks only (no build needed)")
    ap.add_argument("--only", choices=["static"], help="only the checks that need no build")
    ap.add_argument("--match", metavar="RE",
                    help="only the output and regen blocks whose command RE finds (e.g. with --regen all: "
                         "rerun one chapter's long runs, 'experiments.sh norm')")
    args = ap.parse_args()
    if not args.build and args.only != "static" and args.regen != "solutions":
        ap.error("--build is required, except with --only static or --regen solutions")
    build = pathlib.Path(args.build).resolve() if args.build else None
    errors = []
    files = chapters()
    others = [DOCS / "course.md", DOCS / "README.md", ROOT / "README.md"]
    seen = {}
    for f in files + others:
        solution_blocks(f, bool(args.regen), errors, seen)
    if args.regen == "solutions":
        for e in errors:
            print(e)
        return 1 if errors else 0
    for f in files + others:
        if args.only == "static":
            source_blocks(f, errors)
        else:
            output_blocks(f, build, args.regen, errors, args.match)
    if args.regen or args.match:
        for e in errors:
            print(e)
        return 1 if errors else 0
    no_region_code(files + others, errors)
    for f in files + others:
        links(f, errors)
        rendering(f, errors)
    table = label_table()
    chapter_shape(files, table, errors)
    problem_sections(files, errors)
    course_table(errors)
    counts(files + others, errors)
    nothing_points_outside(errors)
    if build:
        labels_known(build, table, errors)
    for e in errors:
        print(e)
    if NOT_COMPARED:
        print(f"check_docs: NOT COMPARED on this CPU (it cannot run OpenBLAS's {BOOK_ENV['OPENBLAS_CORETYPE']} kernel, "
              f"which the book's float32 training runs were printed with): {' '.join(NOT_COMPARED)}")
    print(f"check_docs: {len(files)} files, {len(errors)} problem(s)")
    return 1 if errors else 0


if __name__ == "__main__":
    sys.exit(main())
