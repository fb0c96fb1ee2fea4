#!/usr/bin/env bash
# The MPI tests of data-parallel training (ctest -L mpi; registered by
# tests/CMakeLists.txt only with -DROPEGRAD_MPI=ON). Each case trains a small
# model (d_model 32, one layer, a few steps) and compares checkpoints byte for
# byte with `cmp`: the reference is the same program run without mpirun (one
# process, the same micro-batches: dist/grad_buckets.h).
#
#   dp_test.sh CLI CASE [VARIANT]
#   CASE: equality | mismatch | dead-rank | hung-rank | resume
# Environment: MPIEXEC (mpirun), NP_FLAG (-np); threads are pinned to 1 so
# each micro-batch's backward gives the same bits in every process.
set -euo pipefail
cli=$1
case_name=$2
variant=${3:-standard}
mpiexec=${MPIEXEC:-mpirun}
np=${NP_FLAG:--np}
export ROPEGRAD_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1 OMP_NUM_THREADS=1
# ctest runs as root in CI containers; OpenMPI refuses root without these.
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
# No network needed: shared memory between ranks on this machine.
export OMPI_MCA_btl=self,vader OMPI_MCA_btl_vader_single_copy_mechanism=none
dir=$(mktemp -d "${TMPDIR:-/tmp}/ropegrad_mpi_${case_name}_XXXXXX")
trap 'rm -rf "$dir"' EXIT

# 12 sequences a step, micro-batches of 2: M = 6, shared by 1, 2 or 3 ranks.
args=(train --task copy --d-model 32 --layers 1 --heads 2 --attention "$variant" --steps 4 --warmup 1 --batch 12
      --micro-batch 2 --eval-every 4 --eval-batches 1 --quiet)
run_mpi() {  # run_mpi N OUT [more args...]
  local n=$1 out=$2
  shift 2
  "$mpiexec" "$np" "$n" --oversubscribe "$cli" "${args[@]}" --bucket-mb 0.02 --out "$out" "$@"
}
same() {  # same A B WHAT: A/checkpoint.safetensors and B's are the same bytes
  if cmp -s "$1/checkpoint.safetensors" "$2/checkpoint.safetensors"; then
    echo "dp_test: $3: the same checkpoint as one process, bit for bit"
  else
    echo "dp_test: FAILED: $3: the checkpoint differs from one process's" >&2
    cmp "$1/checkpoint.safetensors" "$2/checkpoint.safetensors" >&2 || true
    exit 1
  fi
}
field() { grep -o "\"$2\": [^,}]*" "$1/summary.json" | sed 's/.*: //'; }

"$cli" "${args[@]}" --out "$dir/one"  # the reference: no mpirun

case $case_name in
  equality)
    for n in 1 2 3; do
      run_mpi "$n" "$dir/n$n"
      same "$dir/one" "$dir/n$n" "$variant, N = $n"
      cmp -s "$dir/one/metrics.csv" "$dir/n$n/metrics.csv" || { echo "dp_test: FAILED: metrics.csv differs, N = $n" >&2; exit 1; }
    done
    for n in 1 2 3; do
      run_mpi "$n" "$dir/z$n" --zero 1
      same "$dir/one" "$dir/z$n" "$variant, N = $n, --zero 1"
    done
    # The bytes: every rank sums the float64 gradient, twice the float32 parameters.
    params=$(field "$dir/n2" parameter_bytes)
    summed=$(field "$dir/n2" bytes_summed_per_step)
    ring=$(field "$dir/n3" ring_bytes_per_rank_per_step)
    [ "$summed" -eq $((2 * params)) ] || { echo "dp_test: FAILED: $summed bytes summed, not 2 x $params" >&2; exit 1; }
    [ "$ring" -eq $((2 * 2 * 2 * params / 3)) ] || { echo "dp_test: FAILED: ring bytes $ring, not 2 (3-1)/3 x $summed" >&2; exit 1; }
    echo "dp_test: bytes per step: $summed summed (2 x $params parameter bytes), ring all-reduce N = 3: $ring per rank"
    # ZeRO-1: each rank holds 1/N of AdamW's m and v.
    state=$(grep -o '"optimizer_state_bytes_per_rank": \[[^]]*\]' "$dir/z3/summary.json" | sed 's/.*\[//; s/\]//; s/,//g')
    for b in $state; do
      lo=$((2 * 4 * params / 4 / 3 - 8)) hi=$((2 * 4 * params / 4 / 3 + 8))
      [ "$b" -ge "$lo" ] && [ "$b" -le "$hi" ] || { echo "dp_test: FAILED: a rank holds $b bytes of state, not ~1/3 of $((2 * params))" >&2; exit 1; }
    done
    echo "dp_test: --zero 1, N = 3: optimizer state bytes per rank: $state (unsharded: $((2 * params)))"
    ;;
  mismatch)
    # Rank 1 started with another seed: every rank stops, naming rank and setting.
    out=$("$mpiexec" "$np" 1 --oversubscribe "$cli" "${args[@]}" --out "$dir/m" --seed 0 : \
          "$np" 1 --oversubscribe "$cli" "${args[@]}" --out "$dir/m" --seed 2 2>&1) && status=0 || status=$?
    [ "$status" -ne 0 ] || { echo "dp_test: FAILED: the mismatched job exited with 0" >&2; exit 1; }
    grep -q "data parallel: rank 1 has --seed 2, rank 0 has --seed 0" <<<"$out" ||
      { echo "dp_test: FAILED: no mismatch message in:" >&2; echo "$out" >&2; exit 1; }
    [ ! -e "$dir/m/checkpoint.safetensors" ] || { echo "dp_test: FAILED: a checkpoint was written" >&2; exit 1; }
    echo "dp_test: mismatch stopped the job (status $status): $(grep -m1 'rank 1 has' <<<"$out")"
    # Rank 1 given another --out: only rank 0 writes, so it would be ignored without a word. Refused, naming both.
    out=$("$mpiexec" "$np" 1 --oversubscribe "$cli" "${args[@]}" --out "$dir/a" : \
          "$np" 1 --oversubscribe "$cli" "${args[@]}" --out "$dir/b" 2>&1) && status=0 || status=$?
    [ "$status" -ne 0 ] || { echo "dp_test: FAILED: the job with two --out exited with 0" >&2; exit 1; }
    grep -qF "data parallel: rank 1 has --out $dir/b, rank 0 has --out $dir/a" <<<"$out" ||
      { echo "dp_test: FAILED: no --out mismatch message in:" >&2; echo "$out" >&2; exit 1; }
    [ ! -e "$dir/a/checkpoint.safetensors" ] && [ ! -e "$dir/b" ] ||
      { echo "dp_test: FAILED: the job with two --out wrote something" >&2; exit 1; }
    echo "dp_test: two --out stopped the job (status $status): $(grep -m1 'rank 1 has --out' <<<"$out")"
    ;;
  dead-rank)
    # Rank 1 exits at step 3; checkpoints every 2 steps. The job must end (the
    # others' --dp-timeout, or mpirun's own report) and leave step 2's checkpoint.
    start=$SECONDS
    out=$(ROPEGRAD_DP_TEST_DIE_AT_STEP=3 run_mpi 2 "$dir/d" --checkpoint-every 2 --dp-timeout 5 2>&1) && status=0 || status=$?
    [ "$status" -ne 0 ] || { echo "dp_test: FAILED: the job with a dead rank exited with 0" >&2; exit 1; }
    grep -qE "a rank has died or hung; stopping|exited on signal|exiting improperly|non-zero status|aborted" <<<"$out" ||
      { echo "dp_test: FAILED: no report of the dead rank in:" >&2; echo "$out" >&2; exit 1; }
    echo "dp_test: dead rank: the job ended in $((SECONDS - start)) s, status $status:"
    grep -E "died or hung|ROPEGRAD_DP_TEST|exited|improperly" <<<"$out" | head -3
    ls "$dir/d" | grep -v -E '^(checkpoint.safetensors|config.txt|metrics.csv|time.csv|dp.csv|dp_buckets.csv|\.lock.*)$' &&
      { echo "dp_test: FAILED: stray files above (a partial write?)" >&2; exit 1; } || true
    # Step 2's checkpoint is whole: resumed by one process, it ends where the reference ends.
    [ "$(tail -1 "$dir/d/metrics.csv" | cut -d, -f1)" -le 3 ] || { echo "dp_test: FAILED: metrics past step 3" >&2; exit 1; }
    "$cli" "${args[@]}" --out "$dir/d" --resume
    same "$dir/one" "$dir/d" "dead rank at step 3, resumed from step 2's checkpoint"
    ;;
  hung-rank)
    # Rank 1 sleeps at step 3: rank 0's wait for the gradient sum times out
    # after --dp-timeout and stops the job, naming what it waited for.
    start=$SECONDS
    out=$(ROPEGRAD_DP_TEST_HANG_AT_STEP=3 run_mpi 2 "$dir/h" --checkpoint-every 2 --dp-timeout 3 2>&1) && status=0 || status=$?
    [ "$status" -ne 0 ] || { echo "dp_test: FAILED: the job with a hung rank exited with 0" >&2; exit 1; }
    want="data parallel: rank 0 waited 3 s for the gradient sum (bucket 0 of step 3): a rank has died or hung; stopping"
    grep -qF "$want" <<<"$out" || { echo "dp_test: FAILED: no timeout message in:" >&2; echo "$out" >&2; exit 1; }
    echo "dp_test: hung rank: the job ended in $((SECONDS - start)) s, status $status: $want"
    "$cli" "${args[@]}" --out "$dir/h" --resume
    same "$dir/one" "$dir/h" "hung rank at step 3, resumed from step 2's checkpoint"
    ;;
  resume)
    # Two steps with N = 2, the rest with N = 3 (sharded), then with N = 1: all the reference's bits.
    run_mpi 2 "$dir/r" --stop-after 2
    run_mpi 3 "$dir/r" --resume --zero 1 --stop-after 3
    run_mpi 1 "$dir/r" --resume
    same "$dir/one" "$dir/r" "steps 1-2 with N = 2, 3 with N = 3 and --zero 1, 4 with N = 1"
    cmp -s "$dir/one/metrics.csv" "$dir/r/metrics.csv" || { echo "dp_test: FAILED: metrics.csv differs" >&2; exit 1; }
    ;;
  *)
    echo "dp_test: unknown case '$case_name'" >&2
    exit 2
    ;;
esac
