#!/usr/bin/env bash
# The public API's removed forms fail to compile with a message that names
# their replacement, and the forms that replace them compile: each
# tests/api_errors/*.cpp names on its first line what the compiler must say
# ("// expect: TEXT") or "// expect: compiles".
# usage: test_api_errors.sh CXX SOURCE_DIR [INCLUDE_DIR...]
set -euo pipefail
cxx=$1 src=$2
shift 2
includes=(-I"$src")
for dir in "$@"; do includes+=(-I"$dir"); done
failed=0
for snippet in "$src"/tests/api_errors/*.cpp; do
  expect=$(sed -n '1s|^// expect: ||p' "$snippet")
  out=$("$cxx" -std=c++20 -fsyntax-only "${includes[@]}" "$snippet" 2>&1) && rc=0 || rc=$?
  name=$(basename "$snippet")
  if [ "$expect" = compiles ]; then
    if [ "$rc" -eq 0 ]; then echo "ok    $name compiles"; else echo "FAIL  $name does not compile:"; echo "$out" | head -20; failed=1; fi
  elif [ "$rc" -ne 0 ] && grep -qF -- "$expect" <<<"$out"; then
    echo "ok    $name: the compiler says '$expect'"
  else
    echo "FAIL  $name: expected a compile error saying '$expect' (exit $rc):"; echo "$out" | head -20; failed=1
  fi
done
exit "$failed"
