#!/usr/bin/env bash
# Chapter 17's `ropegrad generate` example: trains chapter 18's 100-step copy
# run, then prints each command as the chapter shows it, and its output.
#   generate_example.sh BUILD_DIR
set -euo pipefail
bin=$1/ropegrad
run=$1/docs-runs/generate-run
"$bin" train --task copy --steps 100 --out "$run" --quiet > /dev/null
prompt="3 1 4 1 5 9 2 6 5 3 5 8 9 7 9 3"
for extra in "--temperature 0" "--temperature 0 --stop-token 6" \
  "--temperature 1 --seed 1" "--temperature 1 --top-p 0.9 --seed 1"; do
  echo "\$ ropegrad generate --checkpoint ./build/docs-runs/run --prompt \"$prompt\" --max-new-tokens 15 $extra"
  # shellcheck disable=SC2086
  "$bin" generate --checkpoint "$run" --prompt "$prompt" --max-new-tokens 15 $extra
done
