#!/usr/bin/env bash
# The benchmarks read their flags by the command line's one reader
# (io/flags.h): a bad value is one line naming the program, its mode, the
# flag and the value, exit 2, before any work; --help comes from the table.
#   bench/test_bench_flags.sh BUILD_DIR
set -uo pipefail
bench=$1/bench
failed=0

# expect RC PATTERN COMMAND...: COMMAND exits RC and its output is one line matching PATTERN (or, RC 0, contains it).
expect() {
  local want_rc=$1 pattern=$2 out rc
  shift 2
  out=$("$@" 2>&1)
  rc=$?
  if [ "$rc" != "$want_rc" ] || ! grep -qE -- "$pattern" <<<"$out" || { [ "$want_rc" != 0 ] && [ "$(wc -l <<<"$out")" != 1 ]; }; then
    echo "FAIL: $* (rc $rc, want $want_rc; want /$pattern/):"; echo "$out" | head -5 | sed 's/^/    /'
    failed=1
  else
    echo "ok: $*"
  fi
}

m=$bench/ropegrad-models-bench
expect 2 "^ropegrad-models-bench sgemm: --M must be a whole number in 1\.\.1048576, got 0$" "$m" sgemm --M 0
expect 2 "^ropegrad-models-bench sgemm: --K must be a whole number in 1\.\.1048576, got '12abc'$" "$m" sgemm --K 12abc
expect 2 "^ropegrad-models-bench train: --variant must be one of standard \| w2 \| triple, got 'w3'$" "$m" train --variant w3
expect 2 "^ropegrad-models-bench train: --iters must be a whole number in 1\.\.1000000, got 1e300$" "$m" train --iters 1e300
expect 2 "^ropegrad-models-bench module: --module must be one of .*, got 'lienar'$" "$m" module --module lienar
expect 2 "^ropegrad-models-bench gemm-floor: --attention must be one of auto \| materialized \| tiled, got 'fast'$" \
  "$m" gemm-floor --attention fast
expect 2 "^ropegrad-models-bench gemm-floor: unknown argument '--iters'" "$m" gemm-floor --iters 3
expect 2 "^ropegrad-models-bench sgemm: --seed needs a value" "$m" sgemm --seed
expect 2 "^ropegrad-models-bench: usage: ropegrad-models-bench module\|train\|sgemm\|gemm-floor .*got 'trian'$" "$m" trian
expect 0 "--rounds 5 +timed runs" "$m" gemm-floor --help
e=$bench/ropegrad-encode-bench
expect 2 "^ropegrad-encode-bench: --merges must be whole numbers in 1\.\.1000000 separated by commas, got 'x' in '10,x'$" \
  "$e" --merges 10,x
expect 2 "^ropegrad-encode-bench: --repeats must be a whole number in 1\.\.1000, got -1$" "$e" --repeats -1
expect 2 "^ropegrad-encode-bench: unknown argument '--byte'; did you mean --bytes\?" "$e" --byte 10
expect 0 "--crossover +time per pre-token" "$e" --help
exit $failed
