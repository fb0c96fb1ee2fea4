#!/usr/bin/env bash
# ropegrad's set-up-and-run script: installs what is missing, builds, runs.
#
#   scripts/dev.sh main            build, then run the main job
#   scripts/dev.sh test            build, then run the whole test suite
#   scripts/dev.sh test-sanitize   the suite again, built with ASan + UBSan
#   scripts/dev.sh text            a BPE tokenizer and a small LM on real English (Debian's fortunes)
#
# On Debian 12, missing packages are installed with apt-get when run as root;
# otherwise the script says what to install and stops.
set -euo pipefail

cd "$(dirname "$0")/.."
jobs=$(nproc 2>/dev/null || echo 2)

packages=(cmake g++ make pkg-config libopenblas-dev libgtest-dev libgmock-dev libfmt-dev libbenchmark-dev python3-numpy)

ensure_packages() {
  local missing=()
  for p in "${packages[@]}"; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
  done
  [ ${#missing[@]} -eq 0 ] && return 0
  if [ "$(id -u)" -eq 0 ] && command -v apt-get >/dev/null; then
    echo "dev.sh: installing ${missing[*]}"
    export DEBIAN_FRONTEND=noninteractive
    apt-get update -qq
    apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
  else
    echo "dev.sh: missing Debian packages: ${missing[*]}" >&2
    echo "dev.sh: install them with: sudo apt-get install ${missing[*]}" >&2
    exit 1
  fi
}

# build DIR [extra cmake args...]
build() {
  local dir=$1
  shift
  cmake -S . -B "$dir" "$@" >/dev/null
  cmake --build "$dir" -j"$jobs"
}

case "${1:-}" in
  main)
    ensure_packages
    build build -DCMAKE_BUILD_TYPE=Release
    # The three attention variants on the copy task, same budget; writes
    # runs/compare-copy/{results.md,loss_curves.svg} and each run's files.
    ./build/ropegrad compare --task copy --out runs/compare-copy
    ;;
  test)
    ensure_packages
    build build -DCMAKE_BUILD_TYPE=Release
    ctest --test-dir build --output-on-failure -j"$jobs"
    ;;
  test-sanitize)
    ensure_packages
    # Benchmarks are not tests; skip them in the sanitizer build.
    build build-sanitize -DCMAKE_BUILD_TYPE=Debug -DCMAKE_CXX_FLAGS_DEBUG="-O1 -g" \
      -DROPEGRAD_SANITIZE=ON -DROPEGRAD_BENCH=OFF
    ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
      ctest --test-dir build-sanitize --output-on-failure -j"$jobs"
    ;;
  text)
    packages+=(fortunes)
    ensure_packages
    build build -DCMAKE_BUILD_TYPE=Release
    # Every tenth fortune goes to validation; '%' lines become the special token.
    mkdir -p runs/fortunes
    for f in /usr/share/games/fortunes/*; do
      case "$f" in *.dat | *.u8) ;; *) cat "$f" ;; esac
    done | awk '$0 == "%" { n++; print "<|endoftext|>" > (n % 10 == 0 ? v : t); next }
                { print > (n % 10 == 9 ? v : t) }' t=runs/fortunes/train.txt v=runs/fortunes/valid.txt
    ./build/ropegrad tokenize train --input runs/fortunes/train.txt --vocab-size 2000 \
      --special '<|endoftext|>' --out runs/fortunes/tokenizer
    for split in train valid; do
      ./build/ropegrad tokenize encode --tokenizer runs/fortunes/tokenizer \
        --input runs/fortunes/$split.txt --out runs/fortunes/fortunes_$split.npy
    done
    ./build/ropegrad compare --task text --tokenizer runs/fortunes/tokenizer \
      --data runs/fortunes/fortunes_train.npy --length 64 --batch 16 --steps 1000 --eval-every 100 \
      --out runs/compare-fortunes
    ;;
  *)
    echo "usage: scripts/dev.sh main | test | test-sanitize | text" >&2
    exit 2
    ;;
esac
