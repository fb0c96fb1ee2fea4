#!/usr/bin/env bash
# CS336's experiments at CPU scale, on Debian's fortunes text with chapter 19's
# BPE tokenizer: docs/20-experiments.md shows what each part prints, and
# `scripts/dev.sh docs-regen` reruns them all.
#
#   scripts/experiments.sh PART --build BUILD --out ROOT/PART
#
#   data      split the fortunes into train and validation text, train the
#             tokenizer (2000 tokens) and encode both splits into ROOT/fortunes
#   lr        sweep the learning rate up to where training diverges
#   batch     sweep the batch size, at the lr sweep's best learning rate
#   batch-short  batch 64 and 16 for a quarter of the steps, each on its own schedule
#   norm      pre-norm, post-norm and no RMSNorm, at that lr, the grid's rate below it
#             and the two above it
#   position  RoPE against no position encoding (NoPE)
#   ffn       SwiGLU against SiLU at about the same parameter count
#   generate  train the baseline longer and sample 256 tokens from it
#
# Every sweep point trains the same model (D 64, 2 layers, 4 heads, context
# 64, batch 16) for $EXPERIMENT_STEPS steps (400; the test of this script
# uses fewer). A sweep prints its results table and each point's parameter
# count; its progress goes to ROOT/PART.log.
set -euo pipefail
cd "$(dirname "$0")/.."

part=${1:-}
shift || true
build=./build out=""
while [ $# -gt 0 ]; do
  case "$1" in
    --build) build=$2; shift 2 ;;
    --out) out=$2; shift 2 ;;
    *) echo "experiments: unknown argument '$1'" >&2; exit 2 ;;
  esac
done
case "$part" in data | lr | batch | batch-short | norm | position | ffn | generate) ;; *)
  echo "usage: scripts/experiments.sh data|lr|batch|batch-short|norm|position|ffn|generate --build BUILD --out ROOT/PART" >&2
  exit 2 ;;
esac
[ -n "$out" ] || { echo "experiments: --out ROOT/$part is required" >&2; exit 2; }
root=$(dirname "$out")
data=$root/fortunes
ropegrad=$build/ropegrad
steps=${EXPERIMENT_STEPS:-400}
[ -x "$ropegrad" ] || { echo "experiments: $ropegrad is not built (cmake --build $build -j2)" >&2; exit 1; }

# The chapter's numbers repeat on every x86-64 CPU with AVX2 and FMA only with
# one OpenBLAS kernel and one thread (docs/tests/check_docs.py, BOOK_ENV).
export OPENBLAS_CORETYPE=${OPENBLAS_CORETYPE:-Haswell} OPENBLAS_NUM_THREADS=1 ROPEGRAD_NUM_THREADS=1

# A part that starts over (batch-short, generate) replaces --out only when
# this script made it for that part (its .experiments-part names the part); a
# file, a link or a directory with anything else is the user's: refused, left
# as it is.
fresh_out() {
  if [ -e "$out" ] || [ -L "$out" ]; then
    mark=$(cat "$out/.experiments-part" 2>/dev/null || true)
    if [ -L "$out" ] || [ ! -d "$out" ] || { [ "$mark" != "$part" ] && [ -n "$(ls -A "$out")" ]; }; then
      echo "experiments: --out '$out' holds what 'experiments.sh $part' did not write (no .experiments-part" \
        "naming it); choose another --out" >&2
      exit 1
    fi
    rm -rf "$out"
  fi
  mkdir -p "$out"
  echo "$part" > "$out/.experiments-part"
}

prepare_data() {
  local fortunes=/usr/share/games/fortunes
  [ -d "$fortunes" ] || { echo "experiments: $fortunes is missing (apt-get install fortunes)" >&2; exit 1; }
  rm -rf "$data" && mkdir -p "$data"
  # Every tenth fortune goes to validation; the '%' lines between fortunes
  # become the special token <|endoftext|>.
  for f in "$fortunes"/*; do
    case "$f" in *.dat | *.u8) ;; *) cat "$f" ;; esac
  done | awk '$0 == "%" { n++; print "<|endoftext|>" > (n % 10 == 0 ? v : t); next }
              { print > (n % 10 == 9 ? v : t) }' t="$data/train.txt" v="$data/valid.txt"
  # What it prints, without the timings and with paths relative to $data.
  local tidy="s/ in [0-9.]+ s / /; s#$data/##g"
  "$ropegrad" tokenize train --input "$data/train.txt" --vocab-size 2000 --special '<|endoftext|>' \
    --out "$data/tokenizer" | sed -E "$tidy"
  for split in train valid; do
    "$ropegrad" tokenize encode --tokenizer "$data/tokenizer" --input "$data/$split.txt" \
      --out "$data/fortunes_$split.npy" | sed -E "$tidy"
  done
}

# The options every run shares.
# The warmup (20) and the evaluations (every 50) scale with the steps. The
# batch (16) is separate: the batch part sweeps it.
base=(--task text --tokenizer "$data/tokenizer" --data "$data/fortunes_train.npy" --length 64
      --steps "$steps" --warmup $((steps / 20)) --eval-every $((steps / 8)))

# The lr sweep's best learning rate: the lowest final validation loss among
# the points that did not diverge. best_lr K: the grid's value K places
# from it (-1: the next smaller rate, 1: the next larger).
best_lr() {
  local csv=$root/lr/results.csv
  [ -f "$csv" ] || { echo "experiments: $csv is missing: run the lr part first" >&2; exit 1; }
  awk -F, -v k="${1:-0}" '
    NR == 1 { for (i = 1; i <= NF; i++) col[$i] = i; next }
    { lr[NR - 1] = $col["lr"]
      if ($col["diverged"] == "no" && (best == "" || $col["final_val_loss"] + 0 < low)) {
        best = NR - 1; low = $col["final_val_loss"] + 0 } }
    END { if (!((best + k) in lr)) { print "experiments: no grid value " k " places from the best" > "/dev/stderr"; exit 1 }
          print lr[best + k] }' "$csv"
}

# sweep ARGS...: one sweep into $out; prints its table and each point's parameters.
sweep() {
  rm -rf "$out" "$out.log"
  if ! "$ropegrad" sweep --out "$out" "$@" > "$out.log" 2>&1; then
    tail -20 "$out.log" >&2
    echo "experiments: the sweep failed (all of it in $out.log)" >&2
    exit 1
  fi
  cat "$out/results.md"
  for dir in "$out"/*/; do
    [ -f "$dir/summary.json" ] || continue
    printf 'parameters of %s: %s\n' "$(basename "$dir")" \
      "$(sed -nE 's/^ *"parameters": ([0-9]+),?$/\1/p' "$dir/summary.json")"
  done
}

mkdir -p "$root"
case "$part" in
  data) prepare_data ;;
  lr) sweep --grid lr=1e-3,3e-3,1e-2,3e-2,1e-1,3e-1,1,3 -- "${base[@]}" --batch 16 ;;
  batch) lr=$(best_lr); sweep --grid batch=1,4,16,64 -- "${base[@]}" --lr "$lr" ;;
  batch-short)
    # Like with like per token: batch 64 and batch 16 for a quarter of the
    # steps, each with its own whole schedule (warmup, then cosine decay to
    # the end), against the batch sweep's 16 and 4 for all of them: the same
    # tokens, every run annealed.
    lr=$(best_lr)
    fresh_out
    for b in 64 16; do
      printf 'batch %s, %s steps (warmup %s, decayed over them): ' "$b" $((steps / 4)) $((steps / 80))
      "$ropegrad" train "${base[@]}" --batch "$b" --lr "$lr" --steps $((steps / 4)) --warmup $((steps / 80)) \
        --eval-every $((steps / 8)) --out "$out/batch-$b" --quiet |
        sed -E 's/^text \/ standard: [0-9]+ parameters, //; s/, [0-9.]+ tokens\/s, peak memory .*//'
    done ;;
  norm)
    rates=$(best_lr -1),$(best_lr),$(best_lr 1),$(best_lr 2)
    sweep --grid norm=pre,post,none --grid lr="$rates" -- "${base[@]}" --batch 16 ;;
  position) lr=$(best_lr); sweep --grid position=rope,none -- "${base[@]}" --batch 16 --lr "$lr" ;;
  ffn) lr=$(best_lr); sweep --grid ffn=swiglu,silu -- "${base[@]}" --batch 16 --lr "$lr" ;;
  generate)
    lr=$(best_lr)
    fresh_out
    "$ropegrad" train "${base[@]}" --batch 16 --steps $((steps * 4)) --eval-every $((steps / 2)) --lr "$lr" --out "$out" --quiet | sed -E 's/, [0-9.]+ tokens\/s//'
    "$ropegrad" generate --checkpoint "$out" --text "The" --max-new-tokens 256 --temperature 0.8 --top-p 0.95 --seed 1
    ;;
esac
