#!/usr/bin/env bash
# A shell session as the book shows it: each command after a "$ ", then what it
# prints (stdout and stderr in the order they came). Used by chapter 18's blocks.
#   cli_session.sh BUILD_DIR [--tty] 'COMMAND' ['COMMAND' ...]
# Each COMMAND runs in bash from the repository root with `ropegrad` meaning
# BUILD_DIR/ropegrad. The build directory is shown as ./build in commands and
# output, so a block reads the same whatever directory the docs test builds in.
# --tty runs each command on a pseudo-terminal (`script`), as on a terminal:
# the progress line's rewrites (\r) are then shown one per line.
set -uo pipefail
build=$(cd "$1" && pwd)
shift
tty=0
if [ "${1:-}" = --tty ]; then
  tty=1
  shift
fi
export ROPEGRAD_BIN="$build/ropegrad"
mkdir -p "$build/docs-runs"
shown() { sed "s#$build/#./build/#g"; }
for cmd in "$@"; do
  echo "\$ $cmd" | shown
  if [ $tty = 1 ]; then
    # On the pty every line ends in \r\n; the remaining \r are the rewrites.
    SHELL=/bin/bash script -qec "ropegrad() { \"\$ROPEGRAD_BIN\" \"\$@\"; }; $cmd" /dev/null < /dev/null |
      sed 's/\r$//' | tr '\r' '\n' | sed 's/ *$//' | grep -v '^$' | shown
  else
    (ropegrad() { "$ROPEGRAD_BIN" "$@"; }; eval "$cmd") 2>&1 | shown
  fi
done
