#!/usr/bin/env bash
# Chapter 17's `ropegrad generate --text` example: trains chapter 18's 300-step
# byte-level run on docs/12-attention.md, then prints each command as the
# chapter shows it, and its output.
#   generate_text_example.sh BUILD_DIR
set -euo pipefail
bin=$1/ropegrad
run=$1/docs-runs/generate-text-run
"$bin" train --task text --text docs/12-attention.md --length 64 --steps 300 --out "$run" --quiet > /dev/null
for extra in "--temperature 0" "--temperature 0.8 --seed 0"; do
  echo "\$ ropegrad generate --checkpoint ./build/docs-runs/run_text --text \"The causal \" --max-new-tokens 60 $extra"
  # shellcheck disable=SC2086
  "$bin" generate --checkpoint "$run" --text "The causal " --max-new-tokens 60 $extra
done
