#!/usr/bin/env python3
"""The book's problems: check an answer, list them, and test every answer check.

    course_problems.py list [CHAPTER]             every problem: id, title, chapter (NN or a docs path)
    course_problems.py show ID                    the problem's summary, its kind of answer, the command
    course_problems.py answer [--program P] ID VALUE...
                                                  right or wrong, with a hint when wrong; exit 0 when right,
                                                  1 when wrong, 2 for a bad id or value, 3 when the answer
                                                  cannot be computed here (an exercise it needs is a stub)
    course_problems.py known ID                   exit 0 for a problem id, else 2 with the closest ids
    course_problems.py needs ID                   "program" when the answer is computed by course-answer,
                                                  then the exercises it uses (one per line)
    course_problems.py selftest --program P [ID...]
                                                  every problem: its reference answer is right, a wrong
                                                  value is wrong, each catalogued mistake gets its hint
    course_problems.py encode ROOT WORKSPACE      (course new) write WORKSPACE/.course/answers and
                                                  WORKSPACE/.course/problems
    course_problems.py leak-forms ROOT ID         what a leak check looks for of a fixed answer

The registry is course/problems.txt (its header says the format). Where an
answer comes from:
  * `value: computed`: the library computes it when the command runs: the
    program course-answer (course/answers.cpp, built from the tree you are in)
    prints it, and the variants a mistake names;
  * `value: fixed`: a derivation's result, stored in course/problem_answers.txt,
    which `course new` removes from a workspace; the workspace gets the fixed
    answers encoded in .course/answers (XOR with a SHA-256 stream of the id:
    not readable by grep, and `scripts/course_leaks.py leaks` checks that no
    fixed answer of an open problem is left in plain text).
course/problem_answers.txt also holds the reference answer of every computed
problem, as the worked solution derives it: `selftest` (CTest problems.answers)
checks it against what the library computes, so a library change that moves
an answer is noticed.

A value may be an arithmetic expression: 2*8*512*768, 1/3, log(32), 2**53+1,
e/(1+e), 4.513e12, 1,557,611,200 (commas or underscores between digit groups).
Standard library only.
"""
import ast
import hashlib
import math
import os
import pathlib
import re
import subprocess
import sys

import course_registry  # scripts/, next to this file

KINDS = ("integer", "number", "ints", "text")


class Problem:
    def __init__(self, pid):
        self.id = pid
        self.title = ""
        self.chapter = ""
        self.statement = []
        self.kind = ""
        self.rel = None    # number: relative tolerance
        self.abs = None    # number: absolute tolerance
        self.unit = ""
        self.value = ""    # computed | fixed
        self.uses = []
        self.measure = ""
        self.hint = []
        self.mistakes = []  # (kind, arg, message): ("ratio", 2.0, ...), ("value", 8192, ...), ("variant", "tied", ...),
        #                     ("text", "pre", ...)

    def tolerance_text(self):
        if self.kind == "number":
            if self.rel is not None:
                return f"within {fmt_percent(self.rel)} of the answer"
            return f"within {self.abs:g} of the answer"
        if self.kind == "integer":
            return "exactly the answer"
        if self.kind == "ints":
            return "exactly the answer's list"
        return "the answer"


def fmt_percent(r):
    p = r * 100
    return f"{p:g}%"


def root_of(path=None):
    p = pathlib.Path(path or os.getcwd()).resolve()
    return p


def parse_registry(root):
    """[Problem] in the registry's order; exits on a malformed registry."""
    path = pathlib.Path(root) / "course" / "problems.txt"
    if not path.is_file():
        sys.exit(f"course problems: no {path}: run this from the repository (or a workspace) root")
    problems, cur, errors = [], None, []
    for n, line in enumerate(path.read_text().split("\n"), 1):
        if not line.strip() or line.startswith("#"):
            continue
        m = re.match(r"^\[(ch\d\d-[a-z0-9-]+)\]$", line)
        if m:
            cur = Problem(m.group(1))
            problems.append(cur)
            continue
        m = re.match(r"^([a-z]+):\s*(.*)$", line)
        if not m or cur is None:
            errors.append(f"course/problems.txt:{n}: not 'key: value' inside a [chNN-name] block: {line}")
            continue
        key, val = m.group(1), m.group(2).strip()
        if key == "title":
            cur.title = val
        elif key == "chapter":
            cur.chapter = val
        elif key == "statement":
            cur.statement.append(val)
        elif key == "answer":
            parts = val.split()
            cur.kind = parts[0] if parts else ""
            if cur.kind not in KINDS:
                errors.append(f"course/problems.txt:{n}: answer kind '{cur.kind}' is not one of {', '.join(KINDS)}")
            elif cur.kind == "number":
                if len(parts) == 2 and parts[1].endswith("%"):
                    cur.rel = float(parts[1][:-1]) / 100
                elif len(parts) == 3 and parts[1] == "abs":
                    cur.abs = float(parts[2])
                else:
                    errors.append(f"course/problems.txt:{n}: a number needs a tolerance: 'number 1%' or 'number abs 1e-6'")
        elif key == "unit":
            cur.unit = val
        elif key == "value":
            if val not in ("computed", "fixed"):
                errors.append(f"course/problems.txt:{n}: value must be computed or fixed, got '{val}'")
            cur.value = val
        elif key == "uses":
            cur.uses = val.split()
        elif key == "measure":
            cur.measure = val
        elif key == "hint":
            cur.hint.append(val)
        elif key == "mistake":
            mm = re.match(r"^(ratio|value|variant|text)\s+(\S+):\s*(.+)$", val)
            if not mm:
                errors.append(f"course/problems.txt:{n}: a mistake is 'ratio R: message', 'value V: message', "
                              f"'variant NAME: message' or 'text T: message'")
                continue
            kind, arg, msg = mm.groups()
            if kind in ("ratio", "value"):
                try:
                    arg = safe_eval(arg)
                except ValueError as e:
                    errors.append(f"course/problems.txt:{n}: ratio {arg}: {e}")
                    continue
            cur.mistakes.append((kind, arg, msg))
        else:
            errors.append(f"course/problems.txt:{n}: unknown key '{key}'")
    for p in problems:
        for field in ("title", "chapter", "kind", "value"):
            if not getattr(p, field):
                errors.append(f"course/problems.txt: [{p.id}] has no {field if field != 'kind' else 'answer'}")
        if not p.hint:
            errors.append(f"course/problems.txt: [{p.id}] has no hint")
        if p.value == "fixed" and any(k == "variant" for k, _, _ in p.mistakes):
            errors.append(f"course/problems.txt: [{p.id}] is fixed: its mistakes can be ratios or texts, not variants")
    ids = [p.id for p in problems]
    for d in sorted({i for i in ids if ids.count(i) > 1}):
        errors.append(f"course/problems.txt: [{d}] appears twice")
    if errors:
        sys.exit("\n".join(errors))
    return problems


def reference_answers(root):
    """{id: text} from course/problem_answers.txt, or None when there is none (a workspace)."""
    path = pathlib.Path(root) / "course" / "problem_answers.txt"
    if not path.is_file():
        return None
    out = {}
    for line in path.read_text().split("\n"):
        if not line.strip() or line.startswith("#"):
            continue
        m = re.match(r"^(ch\d\d-[a-z0-9-]+):\s*(.+?)\s*$", line)
        if m:
            out[m.group(1)] = m.group(2)
    return out


# ---- values -------------------------------------------------------------------------------------------

NAMES = {"e": math.e, "pi": math.pi, "inf": math.inf}
FUNCS = {"log": math.log, "ln": math.log, "log2": math.log2, "log10": math.log10, "exp": math.exp,
         "sqrt": math.sqrt, "cos": math.cos, "sin": math.sin, "tan": math.tan, "atan": math.atan,
         "cbrt": lambda x: math.copysign(abs(x) ** (1 / 3), x), "abs": abs, "floor": math.floor, "ceil": math.ceil}


def safe_eval(text):
    """The value of an arithmetic expression (int where it stays integral); ValueError otherwise."""
    s = text.strip().replace("\u2212", "-").replace("×", "*").replace("^", "**")
    s = re.sub(r"(?<=\d)[,_](?=\d{3}(?!\d))", "", s)  # 1,557,611,200 and 1_000
    s = re.sub(r"(?<=\d) (?=\d{3}(?!\d))", "", s)     # 1 557 611 200
    if not s:
        raise ValueError("no value")
    try:
        tree = ast.parse(s, mode="eval")
    except SyntaxError:
        raise ValueError(f"'{text}' is not a number or an arithmetic expression")

    def ev(node):
        if isinstance(node, ast.Expression):
            return ev(node.body)
        if isinstance(node, ast.Constant) and isinstance(node.value, (int, float)) and not isinstance(node.value, bool):
            return node.value
        if isinstance(node, ast.Name) and node.id in NAMES:
            return NAMES[node.id]
        if isinstance(node, ast.UnaryOp) and isinstance(node.op, (ast.UAdd, ast.USub)):
            v = ev(node.operand)
            return v if isinstance(node.op, ast.UAdd) else -v
        if isinstance(node, ast.BinOp) and isinstance(node.op, (ast.Add, ast.Sub, ast.Mult, ast.Div, ast.Pow)):
            a, b = ev(node.left), ev(node.right)
            if isinstance(node.op, ast.Add):
                return a + b
            if isinstance(node.op, ast.Sub):
                return a - b
            if isinstance(node.op, ast.Mult):
                return a * b
            if isinstance(node.op, ast.Div):
                if b == 0:
                    raise ValueError("division by zero")
                q = a / b
                return int(q) if isinstance(a, int) and isinstance(b, int) and a % b == 0 else q
            if abs(b) > 4096:
                raise ValueError("exponent too large")
            return a ** b
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id in FUNCS \
                and len(node.args) == 1 and not node.keywords:
            return FUNCS[node.func.id](ev(node.args[0]))
        raise ValueError(f"'{text}' is not a number or an arithmetic expression "
                         f"(numbers, + - * / ** ( ), e, pi, log, exp, sqrt, ...)")

    try:
        v = ev(tree)
    except (OverflowError, ZeroDivisionError, TypeError) as err:
        raise ValueError(f"'{text}': {err}")
    if isinstance(v, complex):
        raise ValueError(f"'{text}' is not a real number")
    return v


def norm_text(s):
    s = s.strip().strip("'\"`").strip()
    return re.sub(r"\s+", " ", s).lower()


def parse_value(problem, words):
    """The learner's value (words joined by spaces) as the kind wants it; ValueError with the reason."""
    text = " ".join(words).strip()
    if not text:
        raise ValueError("no value")
    if problem.kind == "text":
        return norm_text(text)
    if problem.kind == "ints":
        inner = text.strip().strip("[]()").strip()
        parts = [p for p in re.split(r"[\s,]+", inner) if p]
        if not parts:
            raise ValueError("no integers")
        out = []
        for p in parts:
            v = safe_eval(p)
            if isinstance(v, float):
                if not v.is_integer():
                    raise ValueError(f"'{p}' is not an integer")
                v = int(v)
            out.append(v)
        return out
    v = safe_eval(text)
    if problem.kind == "integer":
        if isinstance(v, float):
            if not math.isfinite(v) or not v.is_integer():
                raise ValueError(f"'{text}' is not an integer (the answer is a whole number)")
            if abs(v) > 2 ** 53:
                raise ValueError(f"'{text}' is too large to give in floating point: write all its digits")
            v = int(v)
        return v
    if not math.isfinite(v):
        raise ValueError(f"'{text}' is not finite")
    return float(v)


def parse_expected(problem, text):
    """A reference or computed value (the program's or the file's text) as the kind wants it."""
    if problem.kind == "text":
        return [norm_text(t) for t in text.split("|")]
    return parse_value(problem, [text])


def matches(problem, got, want):
    """Whether GOT is right against WANT (both parsed)."""
    if problem.kind == "text":
        return got in want
    if problem.kind in ("integer", "ints"):
        return got == want
    if problem.rel is not None:
        return abs(got - want) <= problem.rel * abs(want)
    return abs(got - want) <= problem.abs


def near(problem, got, value):
    """Whether GOT equals VALUE (a mistake's value) within the problem's tolerance."""
    if problem.kind in ("integer", "ints"):
        if isinstance(value, float):
            return abs(got - value) <= 1e-9 * max(1.0, abs(value))
        return got == value
    return matches(problem, got, value)


def shown(problem, want):
    """WANT as printed after 'right:'."""
    if problem.kind == "text":
        return want[0]
    if problem.kind == "ints":
        return "[" + ", ".join(str(v) for v in want) + "]"
    if problem.kind == "integer":
        return f"{want:,}"
    return f"{want:.6g}"


# ---- where the expected value comes from ----------------------------------------------------------------

class Blocked(Exception):
    pass


def keystream(pid, n):
    out, counter = b"", 0
    seed = hashlib.sha256(f"ropegrad problem {pid}".encode()).digest()
    while len(out) < n:
        out += hashlib.sha256(seed + counter.to_bytes(4, "little")).digest()
        counter += 1
    return out[:n]


def encode(pid, text):
    data = text.encode()
    return bytes(a ^ b for a, b in zip(data, keystream(pid, len(data)))).hex()


def decode(pid, hexed):
    data = bytes.fromhex(hexed)
    return bytes(a ^ b for a, b in zip(data, keystream(pid, len(data)))).decode()


def workspace_answers(root):
    path = pathlib.Path(root) / ".course" / "answers"
    if not path.is_file():
        return None
    out = {}
    for line in path.read_text().split("\n"):
        parts = line.split()
        if len(parts) == 2 and not line.startswith("#"):
            out[parts[0]] = decode(parts[0], parts[1])
    return out


def fixed_answer(root, problem):
    refs = reference_answers(root)
    if refs is not None and problem.id in refs:
        return refs[problem.id]
    ws = workspace_answers(root)
    if ws is not None and problem.id in ws:
        return ws[problem.id]
    sys.exit(f"course answer: the fixed answer of {problem.id} is neither in course/problem_answers.txt nor in "
             f".course/answers: make the workspace again (scripts/dev.sh course new)")


def run_program(program, args):
    """stdout of `course-answer ARGS`; Blocked when an exercise it runs is a stub."""
    if not program or not pathlib.Path(program).is_file():
        sys.exit(f"course answer: the program course-answer is not built ({program}); "
                 f"scripts/dev.sh course answer builds it")
    p = subprocess.run([program] + args, capture_output=True, text=True)
    if p.returncode == 3:
        raise Blocked(p.stderr.strip())
    if p.returncode != 0:
        sys.exit(f"course answer: {' '.join([program] + args)} failed (exit {p.returncode}):\n{p.stderr.strip()}")
    return p.stdout.strip()


def expected(root, problem, program):
    if problem.value == "fixed":
        return parse_expected(problem, fixed_answer(root, problem))
    return parse_expected(problem, run_program(program, [problem.id]))


def variant_value(problem, program, name):
    return parse_expected(problem, run_program(program, [problem.id, "--variant", name]))


# ---- commands ------------------------------------------------------------------------------------------

def find(problems, pid):
    for p in problems:
        if p.id == pid:
            return p
    return None


def unknown(problems, pid):
    ids = [p.id for p in problems]
    lev = course_registry.edit_distance  # the course's one edit distance
    best = min(ids, key=lambda i: lev(pid, i)) if ids else None
    if best and lev(pid, best) <= (3 if len(pid) >= 10 else 2):
        near_ids = [best]
    else:
        near_ids = [i for i in ids if pid and pid in i][:6]
    if near_ids:
        print(f"course answer: no problem '{pid}'; did you mean {', '.join(near_ids)}? "
              f"(scripts/dev.sh course problems lists them)", file=sys.stderr)
    else:
        print(f"course answer: no problem '{pid}' (scripts/dev.sh course problems lists them)", file=sys.stderr)
    return 2


def chapter_of(arg):
    """'17', 'ch17' or a docs path -> the docs path prefix to match."""
    m = re.match(r"^(?:ch)?(\d{1,2})$", arg)
    if m:
        return f"docs/{int(m.group(1)):02d}-"
    return arg


def cmd_list(root, args):
    problems = parse_registry(root)
    if args:
        want = chapter_of(args[0])
        problems = [p for p in problems if p.chapter.startswith(want)]
        if not problems:
            print(f"course problems: none in '{args[0]}'", file=sys.stderr)
            return 2
    rows = [("id", "title", "chapter")] + [(p.id, p.title, p.chapter) for p in problems]
    w0 = max(len(r[0]) for r in rows)
    w1 = max(len(r[1]) for r in rows)
    for r in rows:
        print(f"{r[0]:<{w0}}  {r[1]:<{w1}}  {r[2]}")
    print()
    print(f"{len(problems)} problems. Read one: scripts/dev.sh course answer ID; answer it: "
          f"scripts/dev.sh course answer ID VALUE")
    return 0


KIND_TEXT = {
    "integer": "an integer (an expression is fine: 2*8*512*768; commas allowed: 1,024)",
    "ints": "integers, space or comma separated: 20 60 1 5",
    "text": "a short text",
}


def how_to_answer(p):
    if p.kind == "number":
        return f"a number, {p.tolerance_text()} (an expression is fine: 1/3, log(32), 2.5e-3)"
    return KIND_TEXT[p.kind]


def cmd_show(root, pid):
    problems = parse_registry(root)
    p = find(problems, pid)
    if p is None:
        return unknown(problems, pid)
    print(f"{p.id}  {p.title}  ({p.chapter}, section Problems)")
    for line in p.statement:
        print(f"  {line}")
    print(f"  answer: {how_to_answer(p)}{', in ' + p.unit if p.unit else ''}")
    print(f"  check it: scripts/dev.sh course answer {p.id} VALUE")
    if p.measure:
        print(f"  measure it with the library: {p.measure}")
    return 0


def verdict(root, p, words, program):
    """(exit status, lines): the answer's verdict."""
    try:
        got = parse_value(p, words)
    except ValueError as err:
        return 2, [f"course answer: {p.id}: {err}; the answer is {how_to_answer(p)}"]
    try:
        want = expected(root, p, program)
    except Blocked as err:
        return 3, blocked_lines(p, str(err))
    unit = f" {p.unit}" if p.unit else ""
    if matches(p, got, want):
        lines = [f"right: {p.id} = {shown(p, want)}{unit}"]
        if p.measure:
            lines.append(f"  measure it with the library: {p.measure}")
        return 0, lines
    for kind, arg, msg in p.mistakes:
        try:
            if kind == "ratio":
                if p.kind in ("integer", "number") and near(p, got, arg * want):
                    return 1, [f"wrong: {p.id}: {msg}"]
            elif kind == "value":
                if p.kind in ("integer", "number") and near(p, got, arg):
                    return 1, [f"wrong: {p.id}: {msg}"]
            elif kind == "variant":
                if matches(p, got, variant_value(p, program, arg)):
                    return 1, [f"wrong: {p.id}: {msg}"]
            elif kind == "text" and p.kind == "text" and got == norm_text(arg):
                return 1, [f"wrong: {p.id}: {msg}"]
        except Blocked as err:
            return 3, blocked_lines(p, str(err))
    if p.kind == "number":
        head = f"not {p.tolerance_text()}"
    elif p.kind == "integer":
        head = "not the answer"
    elif p.kind == "ints":
        head = "not the answer's integers" if len(got) == len(want) else \
            f"the answer has {len(want)} integers, you gave {len(got)}"
    else:
        head = "not the answer"
    return 1, [f"wrong: {p.id}: {head}; the hint: {' '.join(p.hint)}"]


def blocked_lines(p, err):
    m = re.search(r"(ex\d\d-[a-z0-9-]+)", err)
    ex = m.group(1) if m else "an exercise"
    return [f"course answer: {p.id} is computed by the library with the code of {ex}, which is still a stub here: "
            f"write it first (scripts/dev.sh course check {ex}), then ask again",
            f"  ({err})"]


def cmd_answer(root, args):
    program = None
    if args[:1] == ["--program"]:
        program, args = args[1], args[2:]
    if not args:
        print("usage: scripts/dev.sh course answer ID [VALUE]", file=sys.stderr)
        return 2
    problems = parse_registry(root)
    p = find(problems, args[0])
    if p is None:
        return unknown(problems, args[0])
    if len(args) == 1:
        return cmd_show(root, p.id)
    status, lines = verdict(root, p, args[1:], program)
    for line in lines:
        print(line, file=sys.stderr if status >= 2 else sys.stdout)
    return status


def cmd_known(root, pid):
    problems = parse_registry(root)
    return 0 if find(problems, pid) else unknown(problems, pid)


def cmd_needs(root, pid):
    problems = parse_registry(root)
    p = find(problems, pid)
    if p is None:
        return unknown(problems, pid)
    if p.value == "computed" or any(k == "variant" for k, _, _ in p.mistakes):
        print("program")
    for ex in p.uses:
        print(ex)
    return 0


def wrong_value(p, want):
    """A value that must be wrong and match no catalogued mistake."""
    if p.kind == "text":
        return ["zzz-not-an-answer"]
    if p.kind == "ints":
        return [str(v) for v in want[:-1] + [want[-1] + 7919]]
    if p.kind == "integer":
        return [str(want * 7 + 7919)]
    return [repr(want * 1.37 + (0 if want else 1.0))]


def cmd_selftest(root, args):
    program = None
    if args[:1] == ["--program"]:
        program, args = args[1], args[2:]
    problems = parse_registry(root)
    refs = reference_answers(root)
    if refs is None:
        sys.exit("course problems selftest: no course/problem_answers.txt (run it in the repository, not a workspace)")
    only = set(args)
    failures, checked, hints = [], 0, 0
    for p in problems:
        if only and p.id not in only:
            continue
        where = f"{p.id}"
        if p.id not in refs:
            failures.append(f"{where}: no reference answer in course/problem_answers.txt")
            continue
        if not re.match(r"^docs/\d\d-[a-z0-9-]+\.md$", p.chapter) or not (pathlib.Path(root) / p.chapter).is_file():
            failures.append(f"{where}: chapter {p.chapter} is no chapter of the book")
        elif p.chapter[5:7] != p.id[2:4]:
            failures.append(f"{where}: the id's chapter number is not {p.chapter}'s")
        ref_words = [refs[p.id]] if p.kind != "text" else [refs[p.id].split("|")[0]]
        status, lines = verdict(root, p, ref_words, program)
        if status != 0:
            failures.append(f"{where}: the reference answer {refs[p.id]} is not right: {' / '.join(lines)}")
            continue
        checked += 1
        want = parse_expected(p, refs[p.id]) if p.kind != "text" else parse_expected(p, refs[p.id])
        if p.kind == "text":
            want_value = want
        else:
            want_value = want
        status, lines = verdict(root, p, wrong_value(p, want_value), program)
        if status != 1 or "the hint:" not in lines[0]:
            failures.append(f"{where}: a wrong value {wrong_value(p, want_value)} gave: {' / '.join(lines)}")
        for kind, arg, msg in p.mistakes:
            if kind == "ratio":
                if p.kind not in ("integer", "number"):
                    failures.append(f"{where}: a ratio mistake needs a numeric answer")
                    continue
                v = arg * want_value
                if p.kind == "integer":
                    if isinstance(v, float) and not v.is_integer():
                        failures.append(f"{where}: ratio {arg} of the answer is not an integer")
                        continue
                    v = int(v)
                words = [repr(v)]
            elif kind == "value":
                words = [repr(arg)]
            elif kind == "variant":
                try:
                    vv = variant_value(p, program, arg)
                except Blocked as err:
                    failures.append(f"{where}: variant {arg}: {err}")
                    continue
                words = [shown_raw(p, vv)]
            else:
                words = [arg]
            status, lines = verdict(root, p, words, program)
            if status != 1 or lines[0] != f"wrong: {p.id}: {msg}":
                failures.append(f"{where}: the mistake '{kind} {arg}' ({' '.join(words)}) gave: {' / '.join(lines)}")
            else:
                hints += 1
        if p.value == "computed":
            run_program(program, ["--explain", p.id])
    for f in failures:
        print(f"problems selftest: {f}")
    n = len([p for p in problems if not only or p.id in only])
    print(f"problems selftest: {n} problems, {checked} reference answers right, {len(failures)} failure(s), "
          f"{hints} catalogued mistakes named by their hints")
    return 1 if failures else 0


def shown_raw(p, v):
    if p.kind == "ints":
        return " ".join(str(x) for x in v)
    if p.kind == "text":
        return v[0]
    return repr(v)


def open_problems(root, workspace):
    """The problems whose worked solutions a workspace does not hold: those of the chapters from the first
    stubbed exercise's on, and all of them when the course's first exercise is stubbed (no --from)."""
    problems = parse_registry(root)
    stubbed = pathlib.Path(workspace) / ".course" / "stubbed"
    ids = [l.strip() for l in stubbed.read_text().split("\n") if l.strip()] if stubbed.is_file() else []
    if not ids:
        return []
    exercises = course_registry.exercise_ids(root) if (pathlib.Path(root) / course_registry.REGISTRY).is_file() else []
    first = 1 if exercises and exercises[0] in ids else min(int(i[2:4]) for i in ids)
    return [p for p in problems if int(p.id[2:4]) >= first]


def cmd_encode(root, workspace):
    problems = parse_registry(root)
    refs = reference_answers(root) or {}
    ws = pathlib.Path(workspace)
    (ws / ".course").mkdir(exist_ok=True)
    lines = ["# The fixed answers of the book's problems, encoded (scripts/course_problems.py decodes them):",
             "# a derivation's result is checked here without being readable by grep."]
    for p in problems:
        if p.value == "fixed":
            if p.id not in refs:
                sys.exit(f"course problems: no reference answer of {p.id} in course/problem_answers.txt")
            lines.append(f"{p.id} {encode(p.id, refs[p.id])}")
    (ws / ".course" / "answers").write_text("\n".join(lines) + "\n")
    (ws / ".course" / "problems").write_text("".join(p.id + "\n" for p in open_problems(root, workspace)))
    return 0


def significant_digits(token):
    """Significant digits written in a decimal token (separators, sign and exponent ignored)."""
    mantissa = re.split(r"[eE]", token)[0]
    return len(re.sub(r"[^0-9]", "", mantissa).lstrip("0"))


def leak_key(p, text):
    """What a leak check looks for of a fixed answer whose reference is TEXT, or None when it is too short to
    look for: ("number", value, digits) for an integer of 4 digits or more or a number whose reference has 4
    significant digits or more (a token leaks it when, rounded to that many significant digits, it is the
    reference: written with more digits, with digit groups separated, or in another notation); ("text",
    [spellings]) for a text of 5 characters or more."""
    if p.kind == "text":
        forms = [t for t in (s.strip() for s in text.split("|")) if len(t) >= 5]
        return ("text", forms) if forms else None
    if p.kind == "ints":
        return None
    try:
        v = parse_value(p, [text])
    except ValueError:
        return None
    if p.kind == "integer":
        return ("number", float(v), len(str(abs(v)))) if abs(v) >= 1000 else None
    k = significant_digits(text) if re.fullmatch(r"-?[0-9.]+(?:[eE][-+]?\d+)?", text.strip()) else 0
    return ("number", v, k) if k >= 4 else None


# A decimal number in any text: digit groups may be separated by , or \, or a thin or plain space.
NUMBER_TOKEN = re.compile(r"(?<![\w.])-?(?:\d{1,3}(?:(?:,|\\,|\u202f|\u2009| |_)\d{3})+(?!\d)|\d+)(?:\.\d+)?"
                          r"(?:[eE][-+]?\d+)?(?![\w]|\.\d)")


def number_of(token):
    return float(re.sub(r"[,_ \u202f\u2009]|\\,", "", token))


def same_at(x, v, k):
    return f"{abs(x):.{k}g}" == f"{abs(v):.{k}g}"


def cmd_leak_forms(root, pid):
    problems = parse_registry(root)
    p = find(problems, pid)
    refs = reference_answers(root) or {}
    if p is None or p.id not in refs:
        return 2
    key = leak_key(p, refs[p.id])
    if key is None:
        print("too short to look for")
    elif key[0] == "text":
        print("any of (a whole word, any case): " + ", ".join(key[1]))
    else:
        print(f"a number of {key[2]} significant digits or more that rounds to {key[1]:.{key[2]}g}")
    return 0


def main(argv):
    usage = __doc__.split("\n\n")[1]
    root = root_of()
    if argv[:1] == ["list"]:
        return cmd_list(root, argv[1:])
    if len(argv) == 2 and argv[0] == "show":
        return cmd_show(root, argv[1])
    if argv[:1] == ["answer"]:
        return cmd_answer(root, argv[1:])
    if len(argv) == 2 and argv[0] == "known":
        return cmd_known(root, argv[1])
    if len(argv) == 2 and argv[0] == "needs":
        return cmd_needs(root, argv[1])
    if argv[:1] == ["selftest"]:
        return cmd_selftest(root, argv[1:])
    if len(argv) == 3 and argv[0] == "encode":
        return cmd_encode(pathlib.Path(argv[1]), argv[2])
    if len(argv) == 3 and argv[0] == "leak-forms":
        return cmd_leak_forms(pathlib.Path(argv[1]), argv[2])
    print("usage:\n" + usage, file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
