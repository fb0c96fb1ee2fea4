#!/usr/bin/env bash
# Course mode: the learner writes each step; the checks say when it is right.
#
#   scripts/dev.sh course list                    the exercises, in the book's order
#   scripts/dev.sh course new DIR [--from ID]     a workspace: a copy of this tree with
#                                                 exercise ID and every later one stubbed
#                                                 (all of them without --from)
#   scripts/dev.sh course check ID [--verbose]    build what the checks need, run ID's checks
#   scripts/dev.sh course status                  every exercise: done / failing / not started
#   scripts/dev.sh course final [--write-reference]
#                                                 when every exercise passes: your LM trained on
#                                                 Debian's fortunes with your tokenizer, against
#                                                 the reference's run at the same seed
#   scripts/dev.sh course stub ID...              stub exercises in place (undo: git checkout)
#   scripts/dev.sh course proof                   CI: every stub fails its checks, every
#                                                 mutation in course/mutations is caught
#
# Run from the root of the repository or of a workspace. Each exercise's
# reference solution sits between "BEGIN EXERCISE <id>" and "END EXERCISE <id>"
# comments; a stub keeps the two markers and puts one call in between:
#   ::ropegrad::exercise_not_implemented("<id>", "<title>", "<chapter>");
set -euo pipefail

root=$(pwd)
registry=$root/course/exercises.txt
[ -f "$registry" ] || { echo "course: run this from the repository (or a workspace) root: no course/exercises.txt here" >&2; exit 2; }
jobs=$(nproc 2>/dev/null || echo 2)
build_dir=${ROPEGRAD_COURSE_BUILD:-build}

# Exercise ids in order, and one field of one exercise.
ids() { sed -n 's/^\[\(ex[0-9a-z-]*\)\]$/\1/p' "$registry"; }
field() {  # field ID KEY
  awk -v id="[$1]" -v key="$2" '
    /^\[/ { inside = ($0 == id); next }
    inside && index($0, key ":") == 1 { sub("^" key ":[ \t]*", ""); print; exit }' "$registry"
}
known() { ids | grep -qx -- "$1"; }

# The source files that hold a region of exercise ID.
files_of() {
  grep -rlE --include='*.cpp' --include='*.h' -- "BEGIN EXERCISE $1( |\$)" tensor autograd nn tasks tokenizer 2>/dev/null || true
}

# The fast forms of exercise ID (tensor/fast_forms.h): files whose first line
# is "// Fast form of: ID ...". Each is a complete solution of the exercise,
# so a workspace has none of those of the exercises it stubs.
fast_forms_of() {
  local f
  for f in $(grep -rlE --include='*.cpp' --include='*.h' '^// Fast form of:' tensor autograd nn tasks tokenizer tests bench 2>/dev/null); do
    head -1 "$f" | grep -qE -- "^// Fast form of:(.* )?$1( |\$)" && echo "$f"
  done
  return 0
}

# Replace every region of exercise ID, in place, by its stub, and remove its fast forms.
stub() {
  local id=$1 title chapter files
  title=$(field "$id" title)
  chapter=$(field "$id" chapter)
  files=$(files_of "$id")
  [ -n "$files" ] || { echo "course: no region marked 'BEGIN EXERCISE $id' in the sources" >&2; exit 1; }
  for f in $files; do
    awk -v id="$id" -v title="$title" -v chapter="$chapter" '
      $0 ~ "BEGIN EXERCISE " id "( |$)" {
        print
        match($0, /^[ \t]*/); indent = substr($0, 1, RLENGTH)
        print indent "// Your code here (" title "; " chapter ")."
        print indent "::ropegrad::exercise_not_implemented(\"" id "\", \"" title "\", \"" chapter "\");"
        skipping = 1; next
      }
      skipping && $0 ~ "END EXERCISE " id "( |$)" { skipping = 0 }
      !skipping { print }' "$f" > "$f.course-tmp"
    mv "$f.course-tmp" "$f"
    grep -q '#include "tensor/exercise.h"' "$f" || {
      echo "course: $f has a region of $id but does not include tensor/exercise.h" >&2; exit 1; }
  done
  for f in $(fast_forms_of "$id"); do rm -f "$f"; done
}

configure() {
  if [ ! -f "$build_dir/CMakeCache.txt" ]; then
    local launcher=()
    command -v ccache >/dev/null && launcher=(-DCMAKE_CXX_COMPILER_LAUNCHER=ccache)
    cmake -S . -B "$build_dir" "${launcher[@]}" -DCMAKE_BUILD_TYPE=Release -DROPEGRAD_BENCH=OFF >/dev/null
  fi
}

build_checks() {
  configure
  local log=$build_dir/course-build.log
  if ! cmake --build "$build_dir" -j"$jobs" --target course-check >"$log" 2>&1; then
    grep -vE '^\[ *[0-9]+%\]|^g?make(\[[0-9]+\])?:' "$log" >&2 || true
    echo "course: the build failed (the compiler's messages are above; all of it in $log)" >&2
    exit 1
  fi
}

case "${1:-}" in
  list)
    printf '%-28s %-44s %s\n' id title chapter
    for id in $(ids); do printf '%-28s %-44s %s\n' "$id" "$(field "$id" title)" "$(field "$id" chapter)"; done
    ;;
  new)
    dir=${2:-}
    [ -n "$dir" ] || { echo "usage: scripts/dev.sh course new DIR [--from ID]" >&2; exit 2; }
    from=$(ids | head -1)
    if [ "${3:-}" = "--from" ]; then
      from=${4:-}
      known "$from" || { echo "course: no exercise '$from' (scripts/dev.sh course list shows them)" >&2; exit 2; }
    fi
    [ ! -e "$dir" ] || [ -z "$(ls -A "$dir" 2>/dev/null)" ] || { echo "course: $dir exists and is not empty" >&2; exit 1; }
    mkdir -p "$dir"
    # The tracked files when this is a git checkout, else everything but builds.
    if git -C "$root" rev-parse --is-inside-work-tree >/dev/null 2>&1; then
      git -C "$root" ls-files -z --cached --others --exclude-standard | (cd "$root" && xargs -0 cp --parents -t "$dir" 2>/dev/null || true)
    else
      tar -C "$root" --exclude='./build*' --exclude='./runs' -cf - . | tar -C "$dir" -xf -
    fi
    cd "$dir"
    stubbed=()
    for id in $(ids | sed -n "/^$from\$/,\$p"); do stub "$id"; stubbed+=("$id"); done
    mkdir -p .course
    printf '%s\n' "${stubbed[@]}" > .course/stubbed
    # No answer left in the workspace: the mutation patches (their context is
    # the reference code) and the chapters' collapsed solutions go.
    python3 scripts/course_leaks.py strip .
    git init -q . && git add -A && git -c user.name=course -c user.email=course@localhost commit -qm "workspace: ${#stubbed[@]} exercises stubbed from $from" || true
    echo "workspace $dir: ${#stubbed[@]} exercises stubbed, from $from to ${stubbed[-1]}"
    echo "next: cd $dir && scripts/dev.sh course check $from"
    ;;
  check)
    id=${2:-}
    known "$id" || { echo "course: no exercise '${id}' (scripts/dev.sh course list shows them)" >&2; exit 2; }
    build_checks
    "$build_dir/course/course-check" "$id" "${@:3}"
    ;;
  status)
    build_checks
    "$build_dir/course/course-check" --status
    ;;
  final)
    # Every exercise first: the final run uses all of them.
    build_checks
    status=$("$build_dir/course/course-check" --status 2>&1 || true)
    if ! echo "$status" | grep -qE '^([0-9]+) of \1 exercises done$'; then
      echo "$status"
      echo "course final: every exercise must pass first (the table above says which do not)" >&2
      exit 1
    fi
    cmake --build "$build_dir" -j"$jobs" --target course-final >"$build_dir/course-build.log" 2>&1 || {
      grep -E 'error' "$build_dir/course-build.log" | head -20 >&2; echo "course final: the build failed ($build_dir/course-build.log)" >&2; exit 1; }
    fortunes=/usr/share/games/fortunes
    [ -d "$fortunes" ] || { echo "course final: Debian's fortunes are missing: apt-get install fortunes" >&2; exit 1; }
    out=runs/course-final
    mkdir -p "$out"
    # The corpus: the first 400 kB of the fortunes, files in name order, each
    # '%' separator line becoming the special token.
    for f in $(ls "$fortunes" | LC_ALL=C sort); do
      case "$f" in *.dat | *.u8) ;; *) [ -f "$fortunes/$f" ] && cat "$fortunes/$f" ;; esac
    done | awk '$0 == "%" { print "<|endoftext|>"; next } { print }' > "$out/fortunes.txt"
    head -c 400000 "$out/fortunes.txt" > "$out/corpus.txt"
    # One OpenBLAS kernel and one thread, as the book's outputs: the float32
    # run then repeats on every x86-64 CPU with AVX2 and FMA.
    export OPENBLAS_CORETYPE=Haswell OPENBLAS_NUM_THREADS=1 ROPEGRAD_NUM_THREADS=1
    if [ "${2:-}" = "--write-reference" ]; then
      # The reference's plain forms, which are what a learner writes.
      ROPEGRAD_FAST_FORMS=0 "$build_dir/course/course-final" --corpus "$out/corpus.txt" --out "$out" \
        --write-reference course/final/reference.trace
    else
      "$build_dir/course/course-final" --corpus "$out/corpus.txt" --out "$out" --reference course/final/reference.trace
    fi
    ;;
  stub)
    shift
    for id in "$@"; do known "$id" || { echo "course: no exercise '$id'" >&2; exit 2; }; stub "$id"; done
    ;;
  proof)
    exec bash "$root/scripts/course-proof.sh"
    ;;
  *)
    sed -n '2,15p' "$0" | sed 's/^# \{0,1\}//'
    exit 2
    ;;
esac
