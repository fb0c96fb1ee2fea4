#!/usr/bin/env bash
# Proof that course mode works (CI runs it through `scripts/dev.sh course proof`):
#   1. the reference passes every check;
#   2. the order (course/exercises.txt): walking from the last exercise back to
#      the first, stubbing one more each round, exercise k passes with 1..k
#      written and k+1.. stubbed, and then, k stubbed too, every check of k
#      says "not written yet" (its own stub: none passes on a stub, none hides
#      it as a wrong number or as another exercise's stub);
#   3. with every exercise stubbed the tree builds, `status` calls each "not
#      started", and each exercise's checks reach its own stub or an earlier
#      one's, never a later one's; every computed answer of the book's problems
#      is computed or stops at an exercise its `uses:` names; the tokenizer's
#      (ex19) pass with every tensor exercise stubbed; a fresh workspace holds no
#      solution and checks the problems' fixed answers;
#   4. every typical wrong solution in course/mutations/*.patch, applied alone,
#      is caught by its exercise's checks, with the words its "Expect:" line
#      names (and, for one with an "Origin:" line, no line naming another cause
#      of course/mutations/causes.txt); every accepted variant, course/mutations/*.variant (another
#      algorithm's legitimate order, CS336's own), passes them all.
# It edits the sources in place and puts every file back (also when stopped).
set -euo pipefail

root=$(pwd)
build_dir=${ROPEGRAD_COURSE_BUILD:-build}
jobs=$(nproc 2>/dev/null || echo 2)
course=(bash "$root/scripts/course.sh")
export ROPEGRAD_COURSE_BUILD=$build_dir

course_registry() { python3 "$root/scripts/course_registry.py" "$@"; }  # the registry's and the regions' one reader
ids=${ROPEGRAD_COURSE_IDS:-$(course_registry ids)}  # ROPEGRAD_COURSE_IDS="ex07-rmsnorm ...": only these
ids=$(echo $ids)  # one line, space-separated
region_files=$(course_registry region-files)
[ -n "$region_files" ] || { echo "course proof: no exercise regions in the sources" >&2; exit 1; }
# Stubbing removes an exercise's fast forms (scripts/course.sh): keep them too.
region_files="$region_files $("${course[@]}" fast-files)"

backup=$(mktemp -d)
for f in $region_files; do mkdir -p "$backup/$(dirname "$f")"; cp "$f" "$backup/$f"; done
# Only the files that differ: a copy of an unchanged file would make the build
# recompile everything that includes it (tensor/exercise.h: every check).
restore() { for f in $region_files; do cmp -s "$backup/$f" "$f" || cp "$backup/$f" "$f"; done; }
trap 'restore; rm -rf "$backup"' EXIT

build() {
  if ! cmake --build "$build_dir" -j"$jobs" --target course-check >"$build_dir/course-proof-build.log" 2>&1; then
    grep -E 'error' "$build_dir/course-proof-build.log" | head -20 >&2
    return 1
  fi
}

passed=0
failed=0
ok() { passed=$((passed + 1)); echo "  ok    $*"; }
bad() { failed=$((failed + 1)); echo "  FAIL  $*"; }

[ -f "$build_dir/CMakeCache.txt" ] || cmake -S . -B "$build_dir" -DCMAKE_BUILD_TYPE=Release -DROPEGRAD_BENCH=OFF >/dev/null
echo "course proof: the reference passes every check"
build || { echo "course proof: the reference does not build" >&2; exit 1; }
for id in $ids; do
  if out=$("$build_dir/course/course-check" "$id" 2>&1); then ok "$id: reference passes"; else bad "$id: reference fails"; echo "$out" | sed 's/^/        /'; fi
done

echo "course proof: the commands' messages"
expect_out() {  # LABEL PATTERN COMMAND...: COMMAND's output (stdout and stderr) matches the extended regex PATTERN
  local label=$1 pattern=$2 out
  shift 2
  out=$("$@" 2>&1 || true)
  if grep -qE -- "$pattern" <<<"$out"; then ok "$label"; else bad "$label: no match for '$pattern' in:"; echo "$out" | sed 's/^/        /'; fi
}
expect_out "a mistyped id gets 'did you mean'" "did you mean ex07-rmsnorm\?" "${course[@]}" check ex07-rmsnrom
expect_out "check without an id prints its usage" "^usage: scripts/dev.sh course check ID" "${course[@]}" check
expect_out "an unknown command prints the whole usage" "puts one call in between" "${course[@]}" chek
expect_out "course-check itself suggests ids" "did you mean ex07-rmsnorm\?" "$build_dir/course/course-check" ex07-rmsnrom
# course new with careless arguments: each is refused, naming what is wrong, and nothing is written.
new_tmp=$(mktemp -d)
touch "$new_tmp/afile"
mkdir "$new_tmp/full" && touch "$new_tmp/full/notes.txt"
expect_out "course new on a file says it is a file" "'$new_tmp/afile' is a file" "${course[@]}" new "$new_tmp/afile"
expect_out "course new on a full directory says so" "is not empty" "${course[@]}" new "$new_tmp/full"
expect_out "course new --from without an id says it needs one" "--from needs an exercise id" \
  "${course[@]}" new "$new_tmp/ws" --from
expect_out "course new with a misspelt option refuses it" "unknown option '--frm'" \
  "${course[@]}" new "$new_tmp/ws" --frm ex13-adamw
expect_out "course new with an option for DIR says DIR comes first" "new needs a directory first" \
  "${course[@]}" new --frm ex13-adamw
expect_out "course new --from takes ids literally" "no exercise 'ex2.-zero-adamw'" \
  "${course[@]}" new "$new_tmp/ws" --from 'ex2.-zero-adamw'
expect_out "course new --from '.*' is no pattern" "no exercise '\.\*'" "${course[@]}" new "$new_tmp/ws" --from '.*'
expect_out "course new inside the repository is refused" "lies inside the repository" \
  "${course[@]}" new "$(pwd)/build-course-inside"
if [ ! -e "$new_tmp/ws" ] && [ ! -e build-course-inside ] && [ "$(ls -A "$new_tmp/full")" = notes.txt ]; then
  ok "course new refused all of them without writing anything"
else
  bad "course new wrote something for a refused command"
fi
rm -rf "$new_tmp"
expect_out "a check in the repository says it checked the reference" "checked the reference solution" \
  "${course[@]}" check ex13-get-batch
out=$("$build_dir/course/course-check" --status 2>&1 || true)
# Where each exercise's title starts in its status row: one column for all.
widths=$(echo "$out" | awk 'NR == FNR { titles[++n] = $0; next }
  /^  ex[0-9]/ { row++; print index($0, titles[row]) }' <(course_registry table | cut -f2) - | sort -u | wc -l)
if [ "$widths" -eq 1 ]; then ok "status: every title starts in one column"; else bad "status: the titles start in $widths columns"; echo "$out"; fi
out=$("${course[@]}" list 2>&1)
widths=$(echo "$out" | grep -E '^ex[0-9]' | awk '{ print index($0, "docs/") }' | sort -u | wc -l)
if [ "$widths" -eq 1 ]; then ok "list: every chapter starts in one column"; else bad "list: the chapters start in $widths columns"; echo "$out"; fi
# The build's progress: the tool's lines, and never 8 s or more without a word (docs/course.md's promise).
progress_log=$(mktemp)
out=$("${course[@]}" with-progress "$progress_log" bash -c '
  echo "[ 10%] Building CXX object CMakeFiles/ropegrad.dir/nn/rmsnorm.cpp.o"; sleep 2
  echo "[ 55%] Building CXX object CMakeFiles/ropegrad.dir/nn/rope.cpp.o"; sleep 12
  echo "[100%] Linking CXX executable course-check"; sleep 1' | while IFS= read -r line; do echo "$SECONDS $line"; done)
gaps=$(echo "$out" | awk 'NR > 1 && $1 - prev >= 8 { print } { prev = $1 }')
if grep -q 'nn/rmsnorm.cpp' <<<"$out" && grep -q 'still at' <<<"$out" && [ -z "$gaps" ]; then
  ok "the build shows its progress, never 8 s silent ($(echo "$out" | wc -l) lines over 15 s)"
else
  bad "the build's progress:"; echo "$out" | sed 's/^/        /'
fi
rm -f "$progress_log"
# A compile error: its first error with file:line, the log's path, not pages of notes.
sed -i 's|^  // BEGIN EXERCISE ex07-rmsnorm$|  // BEGIN EXERCISE ex07-rmsnorm\n  this_is_not_cpp;|' nn/rmsnorm.cpp
sed -i '0,/this_is_not_cpp;/!{/this_is_not_cpp;/d}' nn/rmsnorm.cpp
out=$("${course[@]}" check ex07-rmsnorm 2>&1 || true)
if grep -qE '^  nn/rmsnorm\.cpp:[0-9]+:[0-9]+: error: ' <<<"$out" && grep -q 'course-build.log' <<<"$out" &&
   [ "$(echo "$out" | wc -l)" -le 14 ]; then
  ok "a compile error shows its first error and the log's path ($(echo "$out" | wc -l) lines)"
else
  bad "a compile error's report:"; echo "$out" | sed 's/^/        /'
fi
restore

echo "course proof: no region holds SIMD dispatch, intrinsics or one-pass helpers"
if out=$(python3 scripts/course_leaks.py simd . 2>&1); then ok "regions are plain: $(echo "$out" | tail -1)"; else bad "regions use fast-form machinery:"; echo "$out" | sed 's/^/        /'; fi

echo "course proof: a fresh workspace holds no solution of a stubbed exercise"
workspace=$(mktemp -d)
if ! bash scripts/course.sh new "$workspace/ws" >/dev/null 2>&1; then
  bad "course new failed"
else
  if out=$(python3 scripts/course_leaks.py leaks . "$workspace/ws" 2>&1); then ok "no leak: $(echo "$out" | tail -1)"; else bad "lines of reference regions in the workspace:"; echo "$out" | head -20 | sed 's/^/        /'; fi
  fast_left=$(cd "$workspace/ws" && for f in $("${course[@]}" fast-files); do [ ! -e "$f" ] || echo "$f"; done)
  if [ -z "$fast_left" ]; then ok "no fast form left in the all-stubbed workspace"; else bad "fast forms left in the workspace: $fast_left"; fi
  # A fixed answer is checked in the workspace from .course/answers (no build needed).
  for pid in $(python3 scripts/course_problems.py list | sed -n 's/^\(ch[0-9][0-9]-[a-z0-9-]*\) .*/\1/p'); do
    needs=$(python3 scripts/course_problems.py needs "$pid")
    grep -qx program <<<"$needs" && continue
    ref=$(sed -n "s/^$pid: *//p" course/problem_answers.txt | cut -d'|' -f1)
    if (cd "$workspace/ws" && bash scripts/course.sh answer "$pid" "$ref" >/dev/null 2>&1) &&
       ! (cd "$workspace/ws" && bash scripts/course.sh answer "$pid" 7919 >/dev/null 2>&1); then
      ok "$pid: its fixed answer is checked in the workspace (right, and 7919 wrong)"
    else
      bad "$pid: the workspace does not check its fixed answer"
    fi
  done
fi
rm -rf "$workspace"

# ---- the order ----------------------------------------------------------------------
all_ids=$(course_registry ids)
all_ids=$(echo $all_ids)
order=($all_ids)
position() { local i; for i in "${!order[@]}"; do [ "${order[i]}" = "$1" ] && { echo "$i"; return; }; done; echo -1; }
wanted() { case " $ids " in *" $1 "*) return 0 ;; esac; return 1; }
check_lines() { echo "$1" | grep -E '^  (ok|FAIL|TODO|BLOCKED|SKIPPED) ' || true; }

echo "course proof: in course order, exercise k passes with 1..k written and k+1.. stubbed, and says TODO once stubbed"
walk_start=$SECONDS
first_wanted=${#order[@]}
for id in $ids; do
  p=$(position "$id")
  if [ "$p" -ge 0 ] && [ "$p" -lt "$first_wanted" ]; then first_wanted=$p; fi
done
rounds=0
for ((i = ${#order[@]} - 1; i >= first_wanted; i--)); do
  id=${order[i]}
  if wanted "$id"; then
    # 1..i written (this one included), i+1.. stubbed: it passes.
    out=$("$build_dir/course/course-check" "$id" 2>&1) && rc=0 || rc=$?
    if [ "$rc" -eq 0 ]; then ok "$id passes with the $(( ${#order[@]} - i - 1 )) exercises after it stubbed"
    else bad "$id fails with the exercises after it stubbed (it uses a later one?)"; echo "$out" | sed 's/^/        /'; fi
  fi
  "${course[@]}" stub "$id" >/dev/null
  rounds=$((rounds + 1))
  if ! build; then bad "$id: the tree with it and every later exercise stubbed does not build"; continue; fi
  wanted "$id" || continue
  out=$("$build_dir/course/course-check" "$id" 2>&1) && rc=0 || rc=$?
  checks=$(check_lines "$out" | grep -c . || true)
  todo=$(check_lines "$out" | grep -cE '^  TODO ' || true)
  if [ "$rc" -ne 0 ] && [ "$checks" -gt 0 ] && [ "$todo" -eq "$checks" ]; then
    ok "$id stubbed: $todo of $checks checks say not written yet"
  else
    bad "$id stubbed: exit $rc, $todo of $checks checks say not written yet"
    echo "$out" | sed 's/^/        /'
  fi
done
echo "course proof: the order walk took $((SECONDS - walk_start)) s ($rounds stub-and-build rounds)"

echo "course proof: every exercise stubbed at once builds; status says not started; checks reach no later stub"
for ((i = first_wanted - 1; i >= 0; i--)); do "${course[@]}" stub "${order[i]}" >/dev/null; done
if build; then
  out=$("$build_dir/course/course-check" --status 2>&1 || true)
  not_started=$(echo "$out" | grep -c ' not started ' || true)
  total=${#order[@]}
  if [ "$not_started" -eq "$total" ]; then ok "all $total stubbed: builds, status says not started"; else bad "status: $not_started of $total not started"; echo "$out"; fi
  for id in $ids; do
    out=$("$build_dir/course/course-check" "$id" 2>&1 || true)
    me=$(position "$id")
    later=""
    todo=$(check_lines "$out" | grep -cE '^  TODO ' || true)
    blockers=$(check_lines "$out" | sed -n 's/^  BLOCKED .*: blocked by \(ex[0-9a-z-]*\)$/\1/p' | sort -u)
    others=$(check_lines "$out" | grep -vcE '^  (TODO|BLOCKED) ' || true)
    for b in $blockers; do [ "$(position "$b")" -lt "$me" ] || later="$later $b"; done
    if [ -z "$later" ] && [ "$others" -eq 0 ]; then
      ok "$id: $todo TODO$( [ -n "$blockers" ] && echo ", blocked by earlier $(echo $blockers | tr ' ' ',')")"
    else
      bad "$id: blocked by a later exercise or not stopped by a stub:${later:- $others other lines}"
      echo "$out" | sed 's/^/        /'
    fi
  done
  # The book's problems: with every exercise stubbed each computed answer is computed, or its
  # program stops at the stub of an exercise its registry entry names (uses:), which the answer
  # command then checks first in a workspace.
  if cmake --build "$build_dir" -j"$jobs" --target course-answer >"$build_dir/course-proof-build.log" 2>&1; then
    for pid in $("$build_dir/course/course-answer" --list); do
      uses=" $(python3 scripts/course_problems.py needs "$pid" | { grep '^ex' || true; } | tr '\n' ' ')"
      if out=$("$build_dir/course/course-answer" "$pid" 2>&1); then
        ok "$pid: computed with every exercise stubbed"
      else
        blocker=$(echo "$out" | sed -n 's/^blocked by \(ex[0-9a-z-]*\):.*/\1/p' | head -1 || true)
        case "$uses " in
          *" $blocker "*) [ -n "$blocker" ] && ok "$pid: blocked by $blocker, which its uses: names" ||
                            { bad "$pid: fails with every exercise stubbed:"; echo "$out" | sed 's/^/        /'; } ;;
          *) bad "$pid: blocked by ${blocker:-an error}, which its uses: ($uses) does not name"; echo "$out" | sed 's/^/        /' ;;
        esac
      fi
    done
  else
    bad "course-answer does not build with every exercise stubbed"
  fi
else
  bad "the workspace with every exercise stubbed does not build"
fi

# CS336's assignment starts with the tokenizer: its exercises need no tensor exercise.
tok_ids=$(for id in $ids; do case "$id" in ex19-*) echo "$id" ;; esac; done)
if [ -n "$tok_ids" ]; then
  echo "course proof: the tokenizer exercises pass with every tensor exercise stubbed"
  for f in $region_files; do case "$f" in tokenizer/*) cp "$backup/$f" "$f" ;; esac; done
  if build; then
    for id in $tok_ids; do
      if out=$("$build_dir/course/course-check" "$id" 2>&1); then ok "$id passes with every tensor exercise stubbed"
      else bad "$id fails with the tensor exercises stubbed"; echo "$out" | sed 's/^/        /'; fi
    done
  else
    bad "the tree with only the tokenizer written does not build"
  fi
fi
restore

echo "course proof: every typical wrong solution is caught"
# One mutation in the tree at $1 with its build in $2: applied alone, built,
# checked, put back. Prints an ok or FAIL line (and the output of a failure).
check_mutation() {
  local tree=$1 bdir=$2 patch=$3 id expect name out rc others shown plain missing doc
  id=$(sed -n 's/^Exercise: *//p' "$patch" | head -1)
  expect=$(sed -n 's/^Expect: *//p' "$patch" | head -1)
  name=$(basename "$patch" .patch)
  if ! (cd "$tree" && git apply "$root/$patch" 2>/dev/null); then
    echo "  FAIL  $name: does not apply"
    return
  fi
  if ! cmake --build "$bdir" -j1 --target course-check >"$bdir/course-proof-build.log" 2>&1; then
    echo "  FAIL  $name: does not build"
    grep -E 'error' "$bdir/course-proof-build.log" | head -20 | sed 's/^/        /'
  else
    out=$("$bdir/course/course-check" "$id" --verbose 2>&1) && rc=0 || rc=$?
    # Here-strings, not pipes: with pipefail, grep -q leaving early can fail the pipe.
    # A mistake written without sight of the checks ("Origin:"): every line
    # that names a cause (course/mutations/causes.txt) names the expected one.
    others=""
    if grep -q '^Origin:' "$patch"; then
      others=$(grep -vE '^(#|$)' course/mutations/causes.txt | while IFS= read -r cause; do
        grep -v '^hint:' <<<"$out" | grep -iF -- "$cause" | grep -viF -- "$expect" | awk -v cause="$cause" '{ print "[" cause "] " $0 }' | cut -c1-200 || true
      done)
    fi
    if [ "$rc" -ne 0 ] && grep -q '^  FAIL ' <<<"$out" && grep -qiF -- "$expect" <<<"$out" && [ -z "$others" ]; then
      echo "  ok    $name: caught by $id ($(echo "$out" | grep -m1 '^  FAIL ' | cut -c1-110 | sed 's/^ *FAIL *//'))"
    elif [ -n "$others" ]; then
      echo "  FAIL  $name: a line names a cause other than the expected '$expect':"
      echo "$others" | head -5 | sed 's/^/        /'
    else
      echo "  FAIL  $name: not caught by $id as expected (exit $rc, expected the words '$expect')"
      echo "$out" | sed 's/^/        /'
    fi
  fi
  # A chapter that shows this mutation's output (a fenced block right after
  # "<!-- mutation-output: NAME -->") must show lines the check still prints.
  for doc in $(grep -lF -- "<!-- mutation-output: $name -->" docs/*.md 2>/dev/null || true); do
    shown=$(awk -v m="<!-- mutation-output: $name -->" '$0 == m { f = 1; next } f && /^```/ { if (in_block) exit; in_block = 1; next } f && in_block { print }' "$doc")
    plain=$("$bdir/course/course-check" "$id" 2>&1 || true)
    missing=$(while IFS= read -r line; do [ "$line" = "..." ] || grep -qxF -- "$line" <<<"$plain" || echo "$line"; done <<<"$shown")
    if [ -z "$missing" ]; then echo "  ok    $doc shows what $name prints"; else echo "  FAIL  $doc: lines for $name that the check no longer prints:"; echo "$missing" | sed 's/^/        /'; fi
  done
  (cd "$tree" && for f in $region_files; do cmp -s "$backup/$f" "$f" || cp "$backup/$f" "$f"; done)
}
# Each mutation rebuilds one file on one core: two workers, the second in a
# copy of the tree with its own build (from ccache, when present, in a minute),
# halve the time. ROPEGRAD_COURSE_PROOF_WORKERS=1: one, in this tree.
mutation_ids=${ROPEGRAD_COURSE_MUTATION_IDS:-$ids}  # ROPEGRAD_COURSE_MUTATION_IDS="ex07-rmsnorm ...": only their mutations
patches=()
for patch in course/mutations/*.patch; do
  [ -e "$patch" ] || continue
  case " $mutation_ids " in *" $(sed -n "s/^Exercise: *//p" "$patch" | head -1) "*) patches+=("$patch") ;; esac
done
mutations=${#patches[@]}
workers=${ROPEGRAD_COURSE_PROOF_WORKERS:-$([ "$mutations" -ge 20 ] && [ "$jobs" -ge 2 ] && echo 2 || echo 1)}
[ "$workers" -le 2 ] || workers=2
logs=$(mktemp -d)
second_tree=""
if [ "$workers" -gt 1 ]; then  # copied before any worker starts applying patches here
  second_tree=$(mktemp -d)
  git ls-files -co --exclude-standard -z | tar --null -T - -cf - | tar -C "$second_tree" -xf -
  launcher=$(command -v ccache >/dev/null && echo "-DCMAKE_CXX_COMPILER_LAUNCHER=$(command -v cmake);-E;env;CCACHE_BASEDIR=$second_tree;CCACHE_NOHASHDIR=1;CCACHE_DEPEND=1;CCACHE_SLOPPINESS=pch_defines,time_macros;ccache" || true)
fi
for ((w = 0; w < workers; w++)); do
  tree=$root bdir=$build_dir
  [ "$w" -eq 0 ] || tree=$second_tree bdir=$second_tree/build
  (
    if [ "$w" -gt 0 ]; then
      cmake -S "$tree" -B "$bdir" ${launcher:+"$launcher"} -DCMAKE_BUILD_TYPE=Release -DROPEGRAD_BENCH=OFF >/dev/null &&
        cmake --build "$bdir" -j1 --target course-check >"$logs/build-$w.log" 2>&1 ||
        { echo "  FAIL  the second worker's tree does not build"; exit 0; }
    fi
    for ((k = w; k < mutations; k += workers)); do check_mutation "$tree" "$bdir" "${patches[$k]}"; done
  ) >"$logs/worker-$w.log" 2>&1 &
done
wait
for ((w = 0; w < workers; w++)); do cat "$logs/worker-$w.log"; done
caught=$(cat "$logs"/worker-*.log | grep -cE '^  ok    .*: caught by ' || true)
# Every mutation has its line: a worker that stopped early would skip some silently.
checked=$(cat "$logs"/worker-*.log | grep -cE '^  (ok    [^ ]+: caught by|FAIL  [^ ]+: (does not|not caught|a line names))' || true)
[ "$checked" -eq "$mutations" ] || bad "only $checked of $mutations mutations were checked (a worker stopped early)"
passed=$((passed + $(cat "$logs"/worker-*.log | grep -c '^  ok    ' || true)))
failed=$((failed + $(cat "$logs"/worker-*.log | grep -c '^  FAIL  ' || true)))
rm -rf "$logs" ${second_tree:+"$second_tree"}
restore
echo "course proof: $caught of $mutations mutations caught"

echo "course proof: every accepted variant passes its exercise's checks"
for variant in course/mutations/*.variant; do
  [ -e "$variant" ] || continue
  id=$(sed -n 's/^Exercise: *//p' "$variant" | head -1)
  wanted "$id" || continue
  name=$(basename "$variant" .variant)
  if ! git apply "$variant" 2>/dev/null; then bad "$name: does not apply"; continue; fi
  if ! build; then
    bad "$name: does not build"
  elif out=$("$build_dir/course/course-check" "$id" 2>&1); then
    ok "$name: accepted by $id ($(sed -n 's/^Variant: *//p' "$variant" | cut -c1-80))"
  else
    bad "$name: a legitimate variant fails $id"; echo "$out" | sed 's/^/        /'
  fi
  restore
done

# The final check: the reference (fast forms on) trains as its committed
# trace, and a wrong RMSNorm backward is named as such.
echo "course proof: the final check"
if [ -z "${ROPEGRAD_COURSE_IDS:-}" ] && [ -z "${ROPEGRAD_COURSE_MUTATION_IDS:-}" ]; then
  if out=$("${course[@]}" final 2>&1); then ok "course final passes on the reference: $(echo "$out" | tail -1 | cut -c1-100)"; else bad "course final fails on the reference"; echo "$out" | tail -8 | sed 's/^/        /'; fi
  # (course-final itself: `course final` would first refuse, ex07 failing its checks.)
  git apply course/mutations/ex07-rmsnorm--no-mean-term.patch
  cmake --build "$build_dir" -j"$jobs" --target course-final >"$build_dir/course-proof-build.log" 2>&1 || true
  out=$(ROPEGRAD_FAST_FORMS=0 OPENBLAS_CORETYPE=Haswell OPENBLAS_NUM_THREADS=1 ROPEGRAD_NUM_THREADS=1 \
        "$build_dir/course/course-final" --corpus runs/course-final/corpus.txt --out "$build_dir/course-final-mutated" \
        --reference course/final/reference.trace 2>&1) && rc=0 || rc=$?
  if [ "$rc" -ne 0 ] && grep -q "ln_final (RMSNorm, ex07-rmsnorm) passes back" <<<"$out"; then
    ok "course final names RMSNorm for ex07-rmsnorm--no-mean-term: $(echo "$out" | grep -m1 'leaves the reference' | cut -c1-110)"
  else
    bad "course final does not name RMSNorm for ex07-rmsnorm--no-mean-term (exit $rc)"; echo "$out" | tail -8 | sed 's/^/        /'
  fi
  restore
fi
build >/dev/null || true
echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
