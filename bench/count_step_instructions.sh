#!/usr/bin/env bash
# Instructions executed by one training step, counted by valgrind's callgrind:
# a measure of the work a step does that other load on the cores cannot move
# (timings on a shared machine can). One step = the run with 2 timed steps
# minus the run with 1 (model set-up and warm-up cancel), one thread, one
# OpenBLAS kernel.
#
#   bench/count_step_instructions.sh BENCH_BINARY [BENCH_BINARY ...]
#
# e.g. two builds of ropegrad-models-bench, before and after a change.
set -euo pipefail
[ $# -ge 1 ] || { echo "usage: $0 ropegrad-models-bench [another ropegrad-models-bench ...]" >&2; exit 2; }
command -v valgrind >/dev/null || { echo "$0: needs valgrind (apt-get install valgrind)" >&2; exit 2; }
shape=(--D 128 --H 4 --L 2 --T 64 --B 4 --V 256 --d_ff 344)
count() {  # binary variant iters -> instructions of the whole run
  ROPEGRAD_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1 OPENBLAS_CORETYPE=Haswell \
    valgrind --tool=callgrind --callgrind-out-file=/dev/null "$1" train --variant "$2" --iters "$3" --warmup 1 \
    "${shape[@]}" 2>&1 | sed -n 's/.*Collected : \([0-9]*\).*/\1/p'
}
echo "| variant | binary | instructions per step |"
echo "|---|---|---:|"
for variant in standard w2 triple; do
  for bin in "$@"; do
    one=$(count "$bin" "$variant" 1)
    two=$(count "$bin" "$variant" 2)
    echo "| $variant | $bin | $((two - one)) |"
  done
done
