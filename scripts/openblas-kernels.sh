#!/usr/bin/env bash
# Runs the float32 parity labels under every OpenBLAS kernel this CPU can run,
# with 1, 2 and 3 threads, and prints a table of passed/failed tests.
#
#   scripts/openblas-kernels.sh [BUILD_DIR]      (default: build, built already)
#
# OpenBLAS (Debian's DYNAMIC_ARCH build) picks its kernel from the CPU; a
# different CPU sums in a different order, and float32 results move in the last
# bits. The parity tests bound that with the float32 error bound
# (tests/support/test_util.h); this script shows they hold on every kernel the
# machine can execute. Not part of CI: CI must test what OpenBLAS chooses.
set -euo pipefail
cd "$(dirname "$0")/.."
build=${1:-build}
[ -d "$build/tests" ] || { echo "openblas-kernels: build first (scripts/dev.sh test)" >&2; exit 2; }
labels='parity|linear|embedding|rmsnorm|swiglu|rope|attention|loss|optim|w2|triple|matmul|model'

flags=$(grep -m1 '^flags' /proc/cpuinfo)
has() { [[ " $flags " == *" $1 "* ]]; }
kernels=(Prescott Core2)
has sse4_2 && kernels+=(Nehalem)
has avx && kernels+=(Sandybridge)
has avx2 && kernels+=(Haswell Zen)
has avx512f && kernels+=(SkylakeX)
has avx512_bf16 && kernels+=(Cooperlake)

echo "CPU: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2- | sed 's/^ //'); OpenBLAS default: $(OPENBLAS_VERBOSE=2 "$build/tests/test_matmul" --gtest_filter=NONE 2>&1 | sed -n "s/^Core: //p" | sed -n 1p)"
printf '| %-12s | %-12s | %-20s | %-20s | %-20s |\n' kernel core "1 thread" "2 threads" "3 threads"
printf '|%s|%s|%s|%s|%s|\n' -------------- -------------- ---------------------- ---------------------- ----------------------
status=0
for k in "${kernels[@]}"; do
  core=$(OPENBLAS_CORETYPE=$k OPENBLAS_VERBOSE=2 "$build/tests/test_matmul" --gtest_filter=NONE 2>&1 | sed -n "s/^Core: //p" | sed -n 1p)
  row=()
  for t in 1 2 3; do
    out=$(OPENBLAS_CORETYPE=$k OPENBLAS_NUM_THREADS=$t ROPEGRAD_NUM_THREADS=$t \
          ctest --test-dir "$build" -L "$labels" -j2 2>&1 || true)
    total=$(echo "$out" | sed -n 's/.*tests failed out of \([0-9]*\).*/\1/p')
    failed=$(echo "$out" | sed -n 's/.* \([0-9]*\) tests failed out of.*/\1/p')
    [ "${failed:-1}" = 0 ] || status=1
    row+=("$(( ${total:-0} - ${failed:-0} )) passed, ${failed:-?} failed")
  done
  printf '| %-12s | %-12s | %-20s | %-20s | %-20s |\n' "$k" "${core:-?}" "${row[@]}"
done
exit $status
