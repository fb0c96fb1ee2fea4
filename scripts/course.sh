#!/usr/bin/env bash
# Course mode: the learner writes each step; the checks say when it is right.
#
#   scripts/dev.sh course list                    the exercises, in the book's order
#   scripts/dev.sh course new DIR [--from ID]     a workspace: a copy of this tree with
#                                                 exercise ID and every later one stubbed
#                                                 (all of them without --from)
#   scripts/dev.sh course check ID [--verbose]    build what the checks need, run ID's checks
#                                                 (chapter 21's also under mpirun -np 2 and 3
#                                                 when build-mpi exists: scripts/dev.sh test-mpi)
#   scripts/dev.sh course status                  every exercise: done / failing / blocked / not started
#   scripts/dev.sh course final [--write-reference]
#                                                 when every exercise passes: your LM trained on
#                                                 Debian's fortunes with your tokenizer, against
#                                                 the reference's run at the same seed
#   scripts/dev.sh course stub ID...              stub exercises in place (undo: git checkout)
#   scripts/dev.sh course problems [CHAPTER]      the book's problems (course/problems.txt), of one
#                                                 chapter (17, or ch17) or all
#   scripts/dev.sh course answer ID [VALUE]       the problem, or whether VALUE is its answer: right, or
#                                                 wrong with a hint (the library computes the answer)
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

# The registry and the regions, read by scripts/course_registry.py (their one
# reader) in the current tree: exercise ids in order, one field of one exercise,
# the files that hold a region of one exercise.
course_registry() { python3 "$root/scripts/course_registry.py" "$@"; }
ids() { course_registry ids; }
field() { course_registry field "$1" "$2"; }  # field ID title|chapter|hint
known() { grep -qxF -- "$1" <<<"$(ids)"; }  # literally: an id is no pattern

# The usage: this file's header comment, from its second line to the first line
# that is not a comment.
usage() { awk 'NR > 1 && !/^#/ { exit } NR > 1 { sub(/^# ?/, ""); print }' "$0"; }

# Levenshtein distance between $1 and each line of stdin; prints the closest
# line when it is close enough to be a typo (at most 2 edits, 3 for long
# words), else every line that contains $1 (at most six), else nothing.
closest() {
  awk -v want="$1" '
    function lev(a, b,    la, lb, i, j, cost, prev, cur, t) {
      la = length(a); lb = length(b)
      for (j = 0; j <= lb; j++) prev[j] = j
      for (i = 1; i <= la; i++) {
        cur[0] = i
        for (j = 1; j <= lb; j++) {
          cost = substr(a, i, 1) == substr(b, j, 1) ? 0 : 1
          t = prev[j - 1] + cost
          if (prev[j] + 1 < t) t = prev[j] + 1
          if (cur[j - 1] + 1 < t) t = cur[j - 1] + 1
          cur[j] = t
        }
        for (j = 0; j <= lb; j++) prev[j] = cur[j]
      }
      return prev[lb]
    }
    { d = lev(want, $0); if (best == "" || d < bestd) { best = $0; bestd = d }
      if (want != "" && index($0, want)) contains[++n] = $0 }
    END {
      if (best != "" && bestd <= (length(want) >= 10 ? 3 : 2)) { print best; exit }
      if (n >= 1 && n <= 6) for (i = 1; i <= n; i++) print contains[i]
    }'
}

# Says that ID is no exercise, with the closest ids; exits 2.
unknown_id() {
  local near
  near=$(ids | closest "$1" | paste -sd, - | sed 's/,/, /g')
  if [ -n "$near" ]; then
    echo "course: no exercise '$1'; did you mean $near? (scripts/dev.sh course list shows them all)" >&2
  else
    echo "course: no exercise '$1' (scripts/dev.sh course list shows them all)" >&2
  fi
  exit 2
}

files_of() { course_registry files "$1"; }

# The files of exercise ID's fast forms, or of every fast form without an ID,
# one a line: tensor/fast_forms.def, their one list, gives each form's
# exercises and files. A fast form is a complete solution of its exercises, so
# a workspace has none of those of the exercises it stubs.
fast_forms_of() {
  local exercises files
  sed -n 's/^FAST_FORM([A-Za-z0-9]*, "[^"]*", "\([^"]*\)", "\([^"]*\)", .*$/\1|\2/p' tensor/fast_forms.def |
    while IFS='|' read -r exercises files; do
      if [ -z "${1:-}" ] || [[ " $exercises " == *" $1 "* ]]; then printf '%s\n' $files; fi
    done | sort -u
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

# ccache with the tree as its base directory: the compiler sees paths relative
# to the build directory, so an unchanged file hits the cache from any tree
# (the repository, every workspace, wherever they are). Depend mode: on a miss
# ccache takes the headers from the compiler's own -MD file instead of running
# the preprocessor first (7 % of a cold first build's CPU). scripts/dev.sh's
# builds use the same launcher.
ccache_launcher() {
  command -v ccache >/dev/null || return 0
  echo "-DCMAKE_CXX_COMPILER_LAUNCHER=$(command -v cmake);-E;env;CCACHE_BASEDIR=$root;CCACHE_NOHASHDIR=1;CCACHE_DEPEND=1;CCACHE_SLOPPINESS=pch_defines,time_macros;ccache"
}

configure() {
  if [ ! -f "$build_dir/CMakeCache.txt" ]; then
    local launcher
    launcher=$(ccache_launcher)
    echo "course: configuring $build_dir/ (cmake; first time only)"
    # Only what the checks need: no benchmarks.
    with_progress "$build_dir/course-configure.log" \
      cmake -S . -B "$build_dir" ${launcher:+"$launcher"} -DCMAKE_BUILD_TYPE=Release -DROPEGRAD_BENCH=OFF || {
      tail -20 "$build_dir/course-configure.log" >&2
      echo "course: cmake failed (all of it in $build_dir/course-configure.log)" >&2
      exit 1
    }
  fi
}

# with_progress LOG COMMAND...: runs COMMAND with its output in LOG, and shows
# the build tool's progress meanwhile (make's "[ NN%] Building ... x.cpp",
# ninja's "[N/M]"): on a terminal one line rewritten in place, otherwise a line
# whenever the percentage moves on; never more than 8 s without a word.
with_progress() {
  local log=$1 pid rc last_seen="" now shown=$SECONDS start=$SECONDS tty=0 line what pct printed=0
  shift
  [ -t 1 ] && tty=1
  mkdir -p "$(dirname "$log")"
  "$@" >"$log" 2>&1 &
  pid=$!
  while kill -0 "$pid" 2>/dev/null; do
    sleep 1
    line=$(grep -aE '^\[ *[0-9]+(%|/[0-9]+)\] (Building|Linking)' "$log" 2>/dev/null | tail -1 || true)
    now=$SECONDS
    if [ -n "$line" ] && [ "$line" != "$last_seen" ]; then
      last_seen=$line
      pct=$(echo "$line" | sed -E 's/^\[ *([0-9]+(%|\/[0-9]+))\].*/\1/')
      what=$(echo "$line" | sed -E 's/^\[[^]]*\] //; s#CMakeFiles/[^ /]*\.dir/##; s#\.o$##; s# CXX object##; s# CXX executable# #; s# CXX static library# #')
      if [ "$tty" -eq 1 ]; then
        printf '\r\033[K  [%5s] %s  (%d s)' "$pct" "$what" $((now - start)); printed=1
      elif [ $((now - shown)) -ge 3 ] || [ "$printed" -eq 0 ]; then
        printf '  [%5s] %s  (%d s)\n' "$pct" "$what" $((now - start)); printed=1; shown=$now
      fi
      [ "$tty" -eq 1 ] && shown=$now
    elif [ $((now - shown)) -ge 6 ]; then  # SECONDS counts whole seconds and a poll takes a second: 6 keeps gaps under 8 s
      if [ "$tty" -eq 1 ]; then printf '\r\033[K  ... %s  (%d s)' "${what:-working}" $((now - start))
      else printf '  ... still at %s  (%d s)\n' "${what:-the start}" $((now - start)); fi
      printed=1; shown=$now
    fi
  done
  wait "$pid" && rc=0 || rc=$?
  [ "$tty" -eq 1 ] && [ "$printed" -eq 1 ] && printf '\r\033[K'
  [ "$printed" -eq 1 ] && [ "$rc" -eq 0 ] && echo "  done in $((SECONDS - start)) s (log: $log)"
  return "$rc"
}

# The first compiler error of a failed build, as "file:line:col: error: ..."
# relative to the tree, with the source line and caret the compiler printed
# under it; then how many more there are.
first_error() {  # LOG
  local log=$1 n
  awk -v root="$root/" '
    function rel(s) { gsub(root, "", s); while (sub(/^(\.\.\/)+/, "", s)) {} ; return s }
    found && (/^[^ ].*:[0-9]+:[0-9]+: / || /^(In file included|[^ ].*: In |g?make|ninja|\[)/ || ++after > 3) { exit }
    found { print "  " $0; next }
    /: (fatal )?error: / || /undefined reference to/ { found = 1; print "  " rel($0) }' "$log" >&2
  n=$(grep -cE ': (fatal )?error: |undefined reference to' "$log" || true)
  [ "$n" -gt 1 ] && echo "  (and $((n - 1)) more error lines after it)" >&2
  return 0
}

# One build per build directory at a time: two `course check` in one
# workspace would run two builds in one build/, each failing on the other's
# half-written files. The second waits for the first (flock on a lock file in
# the build directory, held by this shell on fd 9 until unlock_build or exit;
# the kernel releases it when the holder dies), and says so.
lock_build() {  # DIR
  local lock=$1/.course-build.lock holder
  command -v flock >/dev/null || return 0
  mkdir -p "$1"
  exec 9>>"$lock"
  if ! flock -n 9; then
    holder=$(cat "$lock" 2>/dev/null || true)
    echo "course: waiting for the build in progress (pid ${holder:-unknown}) in $1/ to finish..."
    flock 9
  fi
  echo $$ >"$lock"
}
unlock_build() { exec 9>&-; }

build_checks() {
  lock_build "$build_dir"
  configure
  local log=$build_dir/course-build.log
  if ! with_progress "$log" cmake --build "$build_dir" -j"$jobs" --target course-check; then
    echo "course: the build failed; the first error:" >&2
    first_error "$log"
    echo "course: the compiler's full output is in $log" >&2
    exit 1
  fi
  unlock_build
}

# check_under_mpirun ID [ARGS]: course-check-mpi of the MPI build
# (build-mpi, made by scripts/dev.sh test-mpi) as mpirun -np 2 and -np 3.
check_under_mpirun() {
  local mpi_dir=${ROPEGRAD_COURSE_MPI_BUILD:-build-mpi} n
  if [ ! -f "$mpi_dir/CMakeCache.txt" ] || ! grep -q '^ROPEGRAD_MPI:BOOL=ON' "$mpi_dir/CMakeCache.txt" ||
     ! command -v mpirun >/dev/null; then
    echo "course: these checks ran their ranks as threads; to run them under mpirun too: scripts/dev.sh test-mpi (makes $mpi_dir), then check again"
    return 0
  fi
  lock_build "$mpi_dir"
  with_progress "$mpi_dir/course-build.log" cmake --build "$mpi_dir" -j"$jobs" --target course-check-mpi || {
    first_error "$mpi_dir/course-build.log"; echo "course: the build of course-check-mpi failed (all of it in $mpi_dir/course-build.log)" >&2; exit 1; }
  unlock_build
  # Root in containers (OpenMPI refuses it without these); shared memory, no network.
  export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_btl=self,vader \
    OMPI_MCA_btl_vader_single_copy_mechanism=none ROPEGRAD_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1
  for n in 2 3; do
    echo "course: the same checks under mpirun -np $n ($mpi_dir/course/course-check-mpi)"
    mpirun -np "$n" --oversubscribe "$mpi_dir/course/course-check-mpi" "$@"
  done
}

case "${1:-}" in
  list)
    # Columns as wide as their longest entry.
    table=$(course_registry table | cut -f1-3)
    printf 'id\ttitle\tchapter\n%s\n' "$table" | awk -F'\t' '
      { for (i = 1; i <= NF; i++) { cell[NR, i] = $i; if (length($i) > w[i]) w[i] = length($i) } }
      END { for (r = 1; r <= NR; r++) printf "%-*s  %-*s  %s\n", w[1], cell[r, 1], w[2], cell[r, 2], cell[r, 3] }'
    echo
    echo "Start with $(ids | head -1). Or begin as CS336's assignment does, with the tokenizer: the ex19"
    echo "exercises need no tensor exercise (docs/19-tokenizer.md), from $(ids | grep '^ex19-' | head -1) on."
    ;;
  new)
    new_usage="usage: scripts/dev.sh course new DIR [--from ID]"
    dir=${2:-}
    from=$(ids | sed -n 1p)
    [ -n "$dir" ] && [ "${dir#-}" = "$dir" ] || { echo "course: new needs a directory first; $new_usage" >&2; exit 2; }
    shift 2
    while [ $# -gt 0 ]; do
      case "$1" in
        --from)
          [ -n "${2:-}" ] && [ "${2#-}" = "$2" ] ||
            { echo "course: --from needs an exercise id (scripts/dev.sh course list shows them); $new_usage" >&2; exit 2; }
          from=$2
          known "$from" || unknown_id "$from"
          shift 2 ;;
        *) echo "course: new: unknown option '$1'; $new_usage" >&2; exit 2 ;;
      esac
    done
    if [ -e "$dir" ] && [ ! -d "$dir" ]; then
      echo "course: '$dir' is a file; course new makes a directory there: give a new or an empty directory" >&2
      exit 1
    fi
    [ ! -e "$dir" ] || [ -z "$(ls -A "$dir" 2>/dev/null)" ] ||
      { echo "course: the directory '$dir' is not empty; course new fills only a new or an empty directory" >&2; exit 1; }
    # The workspace may not lie inside the tree it copies (symbolic links resolved).
    case "$(realpath -m -- "$dir")/" in
      "$(realpath -- "$root")/"*)
        echo "course: '$dir' lies inside the repository it copies ($root): choose a directory outside it" >&2; exit 1 ;;
    esac
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
    if [ "$from" = "$(ids | head -1)" ]; then
      echo "(or begin as CS336's assignment does, with the tokenizer, which needs no tensor exercise:"
      echo " scripts/dev.sh course check $(ids | grep '^ex19-' | head -1))"
    fi
    ;;
  check)
    id=${2:-}
    if [ -z "$id" ] || [ "${id#-}" != "$id" ]; then
      echo "usage: scripts/dev.sh course check ID [--verbose]" >&2
      echo "  ID is an exercise id from scripts/dev.sh course list; the first is $(ids | head -1)." >&2
      exit 2
    fi
    known "$id" || unknown_id "$id"
    build_checks
    "$build_dir/course/course-check" "$id" "${@:3}"
    # Chapter 21's checks ran with threads as ranks; once they pass, the same
    # checks under mpirun too, with real processes, where an MPI build is.
    case "$id" in ex21-*) check_under_mpirun "$id" "${@:3}" ;; esac
    ;;
  status)
    build_checks
    "$build_dir/course/course-check" --status
    ;;
  final)
    # Every exercise first: the final run uses all of them.
    build_checks
    status=$("$build_dir/course/course-check" --status 2>&1 || true)
    if ! grep -qE '^([0-9]+) of \1 exercises done$' <<<"$status"; then
      echo "$status"
      echo "course final: every exercise must pass first (the table above says which do not)" >&2
      exit 1
    fi
    lock_build "$build_dir"
    with_progress "$build_dir/course-build.log" cmake --build "$build_dir" -j"$jobs" --target course-final || {
      first_error "$build_dir/course-build.log"; echo "course final: the build failed (all of it in $build_dir/course-build.log)" >&2; exit 1; }
    unlock_build
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
  problems)
    shift
    exec python3 "$root/scripts/course_problems.py" list "$@"
    ;;
  answer)
    id=${2:-}
    if [ -z "$id" ] || [ "${id#-}" != "$id" ]; then
      echo "usage: scripts/dev.sh course answer ID [VALUE]" >&2
      echo "  ID is a problem id from scripts/dev.sh course problems (each chapter's section Problems)." >&2
      exit 2
    fi
    python3 "$root/scripts/course_problems.py" known "$id" || exit 2
    [ $# -ge 3 ] || exec python3 "$root/scripts/course_problems.py" show "$id"
    needs=$(python3 "$root/scripts/course_problems.py" needs "$id")
    program=$build_dir/course/course-answer
    if grep -qx program <<<"$needs"; then
      configure >&2
      if ! with_progress "$build_dir/course-build.log" cmake --build "$build_dir" -j"$jobs" --target course-answer >&2; then
        echo "course: the build failed; the first error:" >&2
        first_error "$build_dir/course-build.log"
        echo "course: the compiler's full output is in $build_dir/course-build.log" >&2
        exit 1
      fi
    fi
    # In a workspace the library is the learner's: an answer computed with an exercise's code is only
    # as right as that exercise, so its checks must pass first.
    if [ -f .course/stubbed ]; then
      for ex in $(grep -x 'ex[0-9a-z-]*' <<<"$needs" || true); do
        grep -qxF -- "$ex" .course/stubbed || continue
        build_checks >&2
        if ! "$build_dir/course/course-check" "$ex" >/dev/null 2>&1; then
          echo "course answer: $id is computed by the library with your $ex, whose checks do not all pass yet:" >&2
          echo "  scripts/dev.sh course check $ex; then ask again" >&2
          exit 3
        fi
      done
    fi
    exec python3 "$root/scripts/course_problems.py" answer --program "$program" "${@:2}"
    ;;
  stub)
    shift
    for id in "$@"; do known "$id" || unknown_id "$id"; done
    for id in "$@"; do stub "$id"; done
    ;;
  proof)
    exec bash "$root/scripts/course-proof.sh"
    ;;
  fast-files)
    # Internal (scripts/course-proof.sh): fast-files [ID], the files of ID's fast forms, or of all.
    fast_forms_of "${2:-}"
    ;;
  with-progress)
    # Internal (scripts/course-proof.sh tests it): with-progress LOG COMMAND...
    shift
    with_progress "$@"
    ;;
  with-build-lock)
    # Internal (tests/test_course_lock.sh tests it): with-build-lock COMMAND..., holding
    # the build directory's lock as a build does.
    shift
    lock_build "$build_dir"
    "$@"
    ;;
  "" | help | -h | --help)
    usage
    [ -n "${1:-}" ] || exit 2
    ;;
  *)
    near=$(printf '%s\n' list new check status final stub proof problems answer | closest "$1" | sed -n 1p)
    echo "course: no command '$1'${near:+; did you mean '$near'?}" >&2
    usage >&2
    exit 2
    ;;
esac
