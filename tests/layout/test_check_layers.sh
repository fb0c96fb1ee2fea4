#!/usr/bin/env bash
# check_layers.py fails on a tree that breaks each rule, and passes the same tree mended.
set -euo pipefail
check="$(dirname "$0")/check_layers.py"
tree=$(mktemp -d); trap 'rm -rf "$tree"' EXIT
mkdir -p "$tree"/{low,mid,high,extra,more}
printf 'ropegrad_add_folder(low x)\nropegrad_add_folder(mid ropegrad_low)\nropegrad_add_folder(high ropegrad_mid)\nropegrad_add_folder(extra ropegrad_low)\nropegrad_add_folder(more ropegrad_low)\n' > "$tree/CMakeLists.txt"
echo '#include "high/h.h"' > "$tree/low/l.h"                      # upward: low does not link high
printf '#include "mid/b.h"\n' > "$tree/mid/a.h"; printf '#include "mid/a.h"\n' > "$tree/mid/b.h"   # a circle
echo '#include "low/l.h"' > "$tree/high/h.h"                      # through mid: allowed
out=$(python3 "$check" "$tree" || true)
grep -q "low/l.h includes high/h.h: low/ does not link high/" <<<"$out" || { echo "missed the upward include: $out"; exit 1; }
grep -q "mid/: files include each other in a circle" <<<"$out" || { echo "missed the circle: $out"; exit 1; }
grep -q "2 problems" <<<"$out" || { echo "wrong count: $out"; exit 1; }
: > "$tree/low/l.h"; : > "$tree/mid/b.h"
python3 "$check" "$tree" | grep -q "0 problems" || { echo "the mended tree failed"; exit 1; }
echo "check_layers.py: both rules caught, the mended tree passes"
