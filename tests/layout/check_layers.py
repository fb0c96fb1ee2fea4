#!/usr/bin/env python3
"""The layers point one way: every #include of a library folder's file names a
file of its own folder or of a folder its CMake library links (directly or
through others), as CMakeLists.txt's ropegrad_add_folder(NAME DEPS...) lines
declare them; and no folder's files include each other in a circle.

Usage: check_layers.py SOURCE_DIR   (prints each violation; exit 1 if any)"""
import pathlib, re, sys
from graphlib import TopologicalSorter, CycleError

root = pathlib.Path(sys.argv[1])
cmake = (root / "CMakeLists.txt").read_text()
links = {}
for name, deps in re.findall(r"^ropegrad_add_folder\((\w+)\s*([^)]*)\)", cmake, re.M):
    links[name] = {d[len("ropegrad_"):] for d in deps.split() if d.startswith("ropegrad_")}
if len(links) < 5:
    sys.exit(f"check_layers: found only {len(links)} ropegrad_add_folder lines in CMakeLists.txt")

def reachable(folder):
    seen, todo = set(), [folder]
    while todo:
        for dep in links.get(todo.pop(), ()):
            if dep not in seen:
                seen.add(dep); todo.append(dep)
    return seen

problems = []
include = re.compile(r'^\s*#\s*include\s+"([^"]+)"', re.M)
for folder in links:
    allowed = reachable(folder) | {folder}
    graph = {}
    for path in sorted((root / folder).rglob("*")):
        if path.suffix not in (".h", ".cpp", ".inc"):
            continue
        rel = path.relative_to(root).as_posix()
        graph.setdefault(rel, set())
        for target in include.findall(path.read_text(errors="replace")):
            top = target.split("/")[0]
            if "/" not in target or top not in links:
                continue  # a generated header, or a system-like one
            if top not in allowed:
                problems.append(f"{rel} includes {target}: {folder}/ does not link {top}/ "
                                f"(it links {', '.join(sorted(allowed - {folder})) or 'nothing'})")
            elif top == folder and target != rel:
                graph[rel].add(target)
    try:
        TopologicalSorter(graph).prepare()
    except CycleError as error:
        problems.append(f"{folder}/: files include each other in a circle: {' -> '.join(error.args[1])}")

for problem in problems:
    print(problem)
print(f"check_layers: {len(links)} folders, {len(problems)} problems")
sys.exit(1 if problems else 0)
