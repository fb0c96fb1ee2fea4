#!/usr/bin/env bash
# Proof that course mode works (CI runs it through `scripts/dev.sh course proof`):
#   1. every exercise, stubbed alone, fails every one of its checks with its own
#      "not implemented" (no check passes on a stub, none hides it as a wrong number);
#   2. the workspace with every exercise stubbed builds, and `status` calls
#      each exercise "not started";
#   3. every typical wrong solution in course/mutations/*.patch, applied alone,
#      is caught by its exercise's checks, with the words its "Expect:" line names.
# It edits the sources in place and puts every file back (also when stopped).
set -euo pipefail

root=$(pwd)
build_dir=${ROPEGRAD_COURSE_BUILD:-build}
jobs=$(nproc 2>/dev/null || echo 2)
course=(bash "$root/scripts/course.sh")
export ROPEGRAD_COURSE_BUILD=$build_dir

ids=${ROPEGRAD_COURSE_IDS:-$(sed -n 's/^\[\(ex[0-9a-z-]*\)\]$/\1/p' course/exercises.txt)}  # ROPEGRAD_COURSE_IDS="ex07-rmsnorm ...": only these
ids=$(echo $ids)  # one line, space-separated
region_files=$(grep -rlE --include='*.cpp' --include='*.h' 'BEGIN EXERCISE ex' tensor autograd nn tasks tokenizer 2>/dev/null || true)
[ -n "$region_files" ] || { echo "course proof: no exercise regions in the sources" >&2; exit 1; }
# Stubbing removes an exercise's fast forms (scripts/course.sh): keep them too.
region_files="$region_files $(grep -rlE --include='*.cpp' --include='*.h' '^// Fast form of:' tensor autograd nn tasks tokenizer tests bench 2>/dev/null || true)"

backup=$(mktemp -d)
for f in $region_files; do mkdir -p "$backup/$(dirname "$f")"; cp "$f" "$backup/$f"; done
restore() { for f in $region_files; do cp "$backup/$f" "$f"; done; }
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

echo "course proof: no region holds SIMD dispatch, intrinsics or one-pass helpers"
if out=$(python3 scripts/course_leaks.py simd . 2>&1); then ok "regions are plain: $(echo "$out" | tail -1)"; else bad "regions use fast-form machinery:"; echo "$out" | sed 's/^/        /'; fi

echo "course proof: a fresh workspace holds no solution of a stubbed exercise"
workspace=$(mktemp -d)
if ! bash scripts/course.sh new "$workspace/ws" >/dev/null 2>&1; then
  bad "course new failed"
else
  if out=$(python3 scripts/course_leaks.py leaks . "$workspace/ws" 2>&1); then ok "no leak: $(echo "$out" | tail -1)"; else bad "lines of reference regions in the workspace:"; echo "$out" | head -20 | sed 's/^/        /'; fi
  fast_left=$(cd "$workspace/ws" && grep -rlE --include='*.cpp' --include='*.h' '^// Fast form of:' . 2>/dev/null || true)
  if [ -z "$fast_left" ]; then ok "no fast form left in the all-stubbed workspace"; else bad "fast forms left in the workspace: $fast_left"; fi
fi
rm -rf "$workspace"

echo "course proof: each exercise stubbed alone fails its own checks"
for id in $ids; do
  "${course[@]}" stub "$id" >/dev/null
  if ! build; then
    bad "$id: the stubbed tree does not build"
  else
    out=$("$build_dir/course/course-check" "$id" 2>&1) && rc=0 || rc=$?
    checks=$(echo "$out" | grep -cE '^  (ok|FAIL|TODO|BLOCKED) ' || true)
    todo=$(echo "$out" | grep -cE '^  TODO ' || true)
    if [ "$rc" -ne 0 ] && [ "$checks" -gt 0 ] && [ "$todo" -eq "$checks" ]; then
      ok "$id: $todo of $checks checks say not written yet"
    else
      bad "$id: exit $rc, $todo of $checks checks say not written yet"
      echo "$out" | sed 's/^/        /'
    fi
  fi
  restore
done

echo "course proof: every exercise stubbed at once builds, and status says not started"
for id in $ids; do "${course[@]}" stub "$id" >/dev/null; done
if build; then
  out=$("$build_dir/course/course-check" --status 2>&1 || true)
  not_started=$(echo "$out" | grep -c ' not started ' || true)
  total=$(echo "$ids" | wc -w)
  if [ "$not_started" -eq "$total" ]; then ok "all $total stubbed: builds, status says not started"; else bad "status: $not_started of $total not started"; echo "$out"; fi
else
  bad "the workspace with every exercise stubbed does not build"
fi
restore

echo "course proof: every typical wrong solution is caught"
caught=0
mutations=0
for patch in course/mutations/*.patch; do
  case " $ids " in *" $(sed -n "s/^Exercise: *//p" "$patch" | head -1) "*) ;; *) continue ;; esac
  [ -e "$patch" ] || continue
  mutations=$((mutations + 1))
  id=$(sed -n 's/^Exercise: *//p' "$patch" | head -1)
  expect=$(sed -n 's/^Expect: *//p' "$patch" | head -1)
  name=$(basename "$patch" .patch)
  if ! git apply "$patch" 2>/dev/null; then
    bad "$name: does not apply"
    continue
  fi
  if ! build; then
    bad "$name: does not build"
  else
    out=$("$build_dir/course/course-check" "$id" --verbose 2>&1) && rc=0 || rc=$?
    if [ "$rc" -ne 0 ] && echo "$out" | grep -q '^  FAIL ' && echo "$out" | grep -qiF -- "$expect"; then
      caught=$((caught + 1))
      ok "$name: caught by $id ($(echo "$out" | grep -m1 '^  FAIL ' | cut -c1-110 | sed 's/^ *FAIL *//'))"
    else
      bad "$name: not caught by $id as expected (exit $rc, expected the words '$expect')"
      echo "$out" | sed 's/^/        /'
    fi
  fi
  # A chapter that shows this mutation's output (a fenced block right after
  # "<!-- mutation-output: NAME -->") must show lines the check still prints.
  for doc in $(grep -lF -- "<!-- mutation-output: $name -->" docs/*.md 2>/dev/null || true); do
    shown=$(awk -v m="<!-- mutation-output: $name -->" '$0 == m { f = 1; next } f && /^```/ { if (in_block) exit; in_block = 1; next } f && in_block { print }' "$doc")
    plain=$("$build_dir/course/course-check" "$id" 2>&1 || true)
    missing=$(echo "$shown" | while IFS= read -r line; do [ "$line" = "..." ] || echo "$plain" | grep -qxF -- "$line" || echo "$line"; done)
    if [ -z "$missing" ]; then ok "$doc shows what $name prints"; else bad "$doc: lines for $name that the check no longer prints:"; echo "$missing" | sed 's/^/        /'; fi
  done
  restore
done
echo "course proof: $caught of $mutations mutations caught"

# The final check: the reference (fast forms on) trains as its committed
# trace, and a wrong RMSNorm backward is named as such.
echo "course proof: the final check"
if [ -z "${ROPEGRAD_COURSE_IDS:-}" ]; then
  if out=$("${course[@]}" final 2>&1); then ok "course final passes on the reference: $(echo "$out" | tail -1 | cut -c1-100)"; else bad "course final fails on the reference"; echo "$out" | tail -8 | sed 's/^/        /'; fi
  # (course-final itself: `course final` would first refuse, ex07 failing its checks.)
  git apply course/mutations/ex07-rmsnorm--no-mean-term.patch
  cmake --build "$build_dir" -j"$jobs" --target course-final >"$build_dir/course-proof-build.log" 2>&1 || true
  out=$(ROPEGRAD_FAST_FORMS=0 OPENBLAS_CORETYPE=Haswell OPENBLAS_NUM_THREADS=1 ROPEGRAD_NUM_THREADS=1 \
        "$build_dir/course/course-final" --corpus runs/course-final/corpus.txt --out "$build_dir/course-final-mutated" \
        --reference course/final/reference.trace 2>&1) && rc=0 || rc=$?
  if [ "$rc" -ne 0 ] && echo "$out" | grep -q "ln_final (RMSNorm, ex07-rmsnorm) passes back"; then
    ok "course final names RMSNorm for ex07-rmsnorm--no-mean-term: $(echo "$out" | grep -m1 'leaves the reference' | cut -c1-110)"
  else
    bad "course final does not name RMSNorm for ex07-rmsnorm--no-mean-term (exit $rc)"; echo "$out" | tail -8 | sed 's/^/        /'
  fi
  restore
fi
build >/dev/null || true
echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
