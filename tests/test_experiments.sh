#!/usr/bin/env bash
# Chapter 20's experiments script, every part, on a budget of 16 steps per run
# (the chapter's runs take 400): what each part prints and writes is what the
# chapter says it is.
#   tests/test_experiments.sh BUILD_DIR
set -euo pipefail
cd "$(dirname "$0")/.."
build=$1
root=$(mktemp -d)
trap 'rm -rf "$root"' EXIT
export EXPERIMENT_STEPS=16
fail() { echo "FAIL: $*" >&2; exit 1; }
part() { bash scripts/experiments.sh "$1" --build "$build" --out "$root/$1"; }
rows() { grep -cE '^\| [0-9]+ \|' <<<"$1"; }

# data: the ids of each split decode to exactly its text (the tokenizer is
# lossless), and the counts printed are the .npy files' lengths.
out=$(part data)
for split in train valid; do
  n=$(sed -nE "s/^encoded $split\.txt into ([0-9]+) tokens -> fortunes_$split\.npy$/\1/p" <<<"$out")
  [ -n "$n" ] || fail "data printed no token count for $split: $out"
  shape=$(head -c 200 "$root/fortunes/fortunes_$split.npy" | tr -d '\0' | grep -ao "'shape': ([0-9]*,)" || true)
  [ "$shape" = "'shape': ($n,)" ] || fail "$split: printed $n tokens, the .npy header says $shape"
  "$build/ropegrad" tokenize decode --tokenizer "$root/fortunes/tokenizer" --input "$root/fortunes/fortunes_$split.npy" \
    --out "$root/$split.decoded" > /dev/null
  cmp -s "$root/$split.decoded" "$root/fortunes/$split.txt" || fail "$split: the ids do not decode to the text"
done
grep -q '^trained 2000 tokens' <<<"$out" || fail "data: no 2000-token tokenizer: $out"

# lr: eight points in grid order; the largest rate diverges, the smallest does not.
out=$(part lr)
[ "$(rows "$out")" -eq 8 ] || fail "lr: $(rows "$out") rows, not 8: $out"
grep -qE '^\| 1 \| 1e-3 \| 16 \| .* \| no \|$' <<<"$out" || fail "lr: lr 1e-3 did not run 16 steps undiverged: $out"
grep -qE '^\| 8 \| 3 \| [0-9]+ \| .* \| yes, step [0-9]+ \|$' <<<"$out" || fail "lr: lr 3 did not diverge: $out"
# The later parts take the lowest final loss of the points that did not diverge.
best=$(awk -F'|' '$8 ~ /no/ && (low == "" || $5 + 0 < low) { low = $5 + 0; lr = $3 } END { gsub(/ /, "", lr); print lr }' \
  <<<"$(grep -E '^\| [0-9]+ \|' <<<"$out")")
[ -n "$best" ] || fail "lr: no point converged: $out"

# batch: four points at the best rate.
out=$(part batch)
[ "$(rows "$out")" -eq 4 ] || fail "batch: $(rows "$out") rows, not 4"
for dir in "$root"/batch/*/; do
  lr=$(sed -n 's/^lr=//p' "$dir/config.txt")
  awk -v a="$lr" -v b="$best" 'BEGIN { exit !(a + 0 == b + 0) }' ||
    fail "batch: $dir trained at lr $lr, not the lr sweep's best $best"
done

# batch-short: batch 64 and 16 for a quarter of the steps, each on its own schedule, at the best rate.
out=$(part batch-short)
for b in 64 16; do
  grep -qE "^batch $b, 4 steps \(warmup 0, decayed over them\): eval loss [0-9.]+, perplexity [0-9.]+$" <<<"$out" ||
    fail "batch-short: no run of batch $b: $out"
  grep -q '^steps=4$' "$root/batch-short/batch-$b/config.txt" || fail "batch-short: batch $b did not run 4 steps"
  lr=$(sed -n 's/^lr=//p' "$root/batch-short/batch-$b/config.txt")
  awk -v a="$lr" -v b="$best" 'BEGIN { exit !(a + 0 == b + 0) }' || fail "batch-short: batch $b trained at lr $lr, not $best"
done

# A part that starts over replaces only what it wrote: run again, it
# replaces its own output; the user's file or directory in the way is refused
# and left as it was.
part batch-short > /dev/null || fail "batch-short: a second run into its own output was refused"
mkdir -p "$root/mine" && echo "keep me" > "$root/mine/notes.txt" && echo "keep me too" > "$root/afile"
for target in "$root/mine" "$root/afile"; do
  if msg=$(bash scripts/experiments.sh batch-short --build "$build" --out "$target" 2>&1); then
    fail "batch-short --out $target ran over what it did not write"
  fi
  grep -q "did not write" <<<"$msg" || fail "batch-short --out $target: no clear error: $msg"
done
[ "$(cat "$root/mine/notes.txt")" = "keep me" ] && [ "$(cat "$root/afile")" = "keep me too" ] ||
  fail "batch-short deleted or changed the user's files"

# norm: pre, post and none, each at the best rate, the grid's rate below it
# and the two above it.
out=$(part norm)
[ "$(rows "$out")" -eq 12 ] || fail "norm: $(rows "$out") rows, not 12"
grep -qE "^\| 2 \| pre \| $best \|" <<<"$out" || fail "norm: the second point is not pre-norm at $best: $out"
grep -qE "^\| 12 \| none \| " <<<"$out" || fail "norm: the last point is not the unnormed model: $out"

# position and ffn: two points each; SiLU's parameter count is within 5 % of SwiGLU's.
out=$(part position)
[ "$(rows "$out")" -eq 2 ] || fail "position: $(rows "$out") rows, not 2"
out=$(part ffn)
swiglu=$(sed -nE 's/^parameters of 1_ffn=swiglu: ([0-9]+)$/\1/p' <<<"$out")
silu=$(sed -nE 's/^parameters of 2_ffn=silu: ([0-9]+)$/\1/p' <<<"$out")
[ -n "$swiglu" ] && [ -n "$silu" ] || fail "ffn: no parameter counts: $out"
[ "$swiglu" -ne "$silu" ] || fail "ffn: SiLU has exactly SwiGLU's $swiglu parameters: is the ablation on?"
awk -v a="$swiglu" -v b="$silu" 'BEGIN { d = a - b; if (d < 0) d = -d; exit !(d <= 0.05 * a) }' ||
  fail "ffn: SiLU's $silu parameters are not within 5 % of SwiGLU's $swiglu"

# generate: a 64-step run (4 x the budget), then text that starts with the prompt.
out=$(part generate)
last=$(tail -1 "$root/generate/metrics.csv" | cut -d, -f1)
[ "$last" = 64 ] || fail "generate: the run ended at step $last, not 64"
grep -q '^The' <<<"$(sed -n 2p <<<"$out")" || fail "generate: the sample does not start with the prompt: $out"
[ "$(wc -c <<<"$out")" -gt 300 ] || fail "generate: only $(wc -c <<<"$out") characters: $out"
echo "experiments: every part ran and wrote what chapter 20 shows (16 steps per run)"
