#!/usr/bin/env bash
# The answer command end to end, as a learner runs it (scripts/course.sh answer), on the build
# directory BUILD (CTest's): right, wrong with the general hint, wrong with a catalogued mistake's
# hint, a fixed answer, an expression, a bad value, a mistyped id, the problem's summary, the list.
#   bash tests/problems/answer_command.sh BUILD
set -uo pipefail
cd "$(dirname "$0")/../.."
export ROPEGRAD_COURSE_BUILD=$1
failures=0
# expect STATUS PATTERN ARGS...: course.sh ARGS exits with STATUS and its output matches PATTERN.
expect() {
  local want=$1 pattern=$2 out rc
  shift 2
  out=$(bash scripts/course.sh "$@" 2>&1)
  rc=$?
  if [ "$rc" -eq "$want" ] && grep -qE -- "$pattern" <<<"$out"; then
    echo "ok    course $* -> $rc"
  else
    echo "FAIL  course $* -> $rc (want $want and /$pattern/):"
    sed 's/^/      /' <<<"$out"
    failures=$((failures + 1))
  fi
}
expect 0 '^right: ch01-storage-index = 33$' answer ch01-storage-index 33
expect 1 '^wrong: ch01-storage-index: not the answer; the hint: ' answer ch01-storage-index 34
expect 1 '^wrong: ch02-broadcast-grad: a broadcast operand gets the sum' answer ch02-broadcast-grad 19
expect 0 '^right: ch03-linear-flops' answer ch03-linear-flops 5.8e10
expect 1 '^wrong: ch03-linear-flops: not within 1% of the answer; the hint: ' answer ch03-linear-flops 5.9e10
expect 0 '^right: ch05-linear-sigma' answer ch05-linear-sigma 'sqrt(2/(768+3072))'
expect 0 '^right: ch01-permute-strides = \[5, 60, 1, 20\]$' answer ch01-permute-strides '[5, 60, 1, 20]'
expect 0 '^right: ch01-permute-strides' answer ch01-permute-strides 5 60 1 20
expect 0 '^right: ch17-params-medium = 505,629,696 parameters' answer ch17-params-medium 505,629,696
expect 0 '^right: ch19-third-merge' answer ch19-third-merge '"WES"'
expect 2 'is not a number or an arithmetic expression' answer ch01-storage-index thirty-three
expect 2 'not an integer' answer ch01-storage-index 33.5
expect 2 "no problem 'ch01-storage-indx'; did you mean ch01-storage-index" answer ch01-storage-indx 33
expect 0 'Which storage index does y\[1, 2, 1\] read' answer ch01-storage-index
expect 0 '^ch17-flops-small ' problems 17
expect 2 'usage: scripts/dev.sh course answer ID' answer
if [ "$failures" -eq 0 ]; then echo "answer command: every case as expected"; else echo "answer command: $failures case(s) failed"; exit 1; fi
