#!/usr/bin/env bash
# The measured data-parallel tables of docs/21-data-parallel.md (its regen blocks; scripts/dev.sh
# docs-regen runs them after building build-mpi).
#
#   scripts/dp-measure.sh runs CLI N...   train the same run with N = each rank count under mpirun;
#                                         print each run's bytes against the ring formula and its
#                                         time split (summary.json means over the steps)
#   scripts/dp-measure.sh profile CLI DIR one process with --micro-batch: its dp.csv and
#                                         dp_buckets.csv copied into DIR (the profile that
#                                         `ropegrad dp-simulate --run DIR` reads)
set -euo pipefail
cd "$(dirname "$0")/.."
# 24 sequences of the copy task a step, micro-batches of 4: M = 6, shared by 1, 2 or 3 ranks.
args=(train --task copy --d-model 128 --layers 4 --heads 4 --batch 24 --micro-batch 4 --steps 8 --warmup 1
      --eval-every 8 --eval-batches 1 --quiet)
export ROPEGRAD_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1 OMP_NUM_THREADS=1
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_btl=self,vader
export OMPI_MCA_btl_vader_single_copy_mechanism=none

case ${1:-} in
  runs)
    cli=$2
    shift 2
    out=$(mktemp -d "${TMPDIR:-/tmp}/ropegrad_dp_measure_XXXXXX")
    trap 'rm -rf "$out"' EXIT
    for n in "$@"; do
      mpirun -np "$n" --oversubscribe "$cli" "${args[@]}" --out "$out/n$n" >/dev/null
    done
    python3 - "$out" "$@" <<'PY'
import json, sys
out, ranks = sys.argv[1], sys.argv[2:]
print("| N | float64 bytes a step | ring bytes per rank | the same, float32 | compute s | communication s | waiting s |")
print("|---:|---:|---:|---:|---:|---:|---:|")
for n in ranks:
    s = json.load(open(f"{out}/n{n}/summary.json"))
    print(f"| {s['ranks']} | {s['bytes_summed_per_step']:,} | {s['ring_bytes_per_rank_per_step']:,} "
          f"| {s['ring_bytes_of_float32_per_rank_per_step']:,} | {s['compute_seconds_per_step']:.4f} "
          f"| {s['communication_seconds_per_step']:.4f} | {s['waiting_seconds_per_step']:.4f} |")
PY
    ;;
  profile)
    cli=$2 dir=$3
    out=$(mktemp -d "${TMPDIR:-/tmp}/ropegrad_dp_profile_XXXXXX")
    trap 'rm -rf "$out"' EXIT
    "$cli" "${args[@]}" --out "$out/run" >/dev/null
    mkdir -p "$dir"
    cp "$out/run/dp.csv" "$out/run/dp_buckets.csv" "$dir/"
    echo "wrote $dir/dp.csv ($(($(wc -l <"$dir/dp.csv") - 1)) steps) and $dir/dp_buckets.csv ($(($(wc -l <"$dir/dp_buckets.csv") - 1)) rows)"
    ;;
  *)
    echo "usage: scripts/dp-measure.sh runs CLI N... | profile CLI DIR" >&2
    exit 2
    ;;
esac
