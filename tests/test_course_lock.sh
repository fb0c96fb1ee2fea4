#!/usr/bin/env bash
# One build per workspace at a time (scripts/course_build.py BuildLock): two
# `course check` in one workspace used to run two builds in one build/, both
# failing with "the build failed; the first error:" and nothing after it.
# Here the lock is held by `course.sh with-build-lock` (what every build step
# does) around a command that takes 2 s; a second one started meanwhile must
# wait for it, say so naming the first's pid, and run after it. No build runs.
#
#   test_course_lock.sh SOURCE_DIR
set -euo pipefail
cd "$1"
tmp=$(mktemp -d "${TMPDIR:-/tmp}/ropegrad_course_lock_XXXXXX")
trap 'rm -rf "$tmp"' EXIT
export ROPEGRAD_COURSE_BUILD=$tmp/build

bash scripts/course.sh with-build-lock bash -c "sleep 2; echo first >> '$tmp/order'" >"$tmp/first.log" 2>&1 &
first=$!
# The first holds the lock once it has written its pid into the lock file.
for _ in $(seq 200); do [ -s "$tmp/build/.course-build.lock" ] && break; sleep 0.02; done
[ -s "$tmp/build/.course-build.lock" ] || { echo "test_course_lock: FAILED: the first never took the lock" >&2; exit 1; }
bash scripts/course.sh with-build-lock bash -c "echo second >> '$tmp/order'" >"$tmp/second.log" 2>&1
wait "$first"

grep -qF "course: waiting for the build in progress (pid $first)" "$tmp/second.log" || {
  echo "test_course_lock: FAILED: the second did not say it waits for pid $first:" >&2
  cat "$tmp/second.log" >&2
  exit 1
}
[ "$(cat "$tmp/order")" = "$(printf 'first\nsecond')" ] || {
  echo "test_course_lock: FAILED: the two ran in the order:" >&2
  cat "$tmp/order" >&2
  exit 1
}
# Released when the holder ends: a third takes the lock at once, without a word.
out=$(bash scripts/course.sh with-build-lock true 2>&1)
[ -z "$out" ] || { echo "test_course_lock: FAILED: a free lock made the third say: $out" >&2; exit 1; }
echo "test_course_lock: the second build waited for the first (pid $first): $(cat "$tmp/second.log")"
