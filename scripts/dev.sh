#!/usr/bin/env bash
# ropegrad's set-up-and-run script: installs what is missing, builds, runs.
#
#   scripts/dev.sh main            build, then run the main job
#   scripts/dev.sh test            build, then run the whole test suite
#   scripts/dev.sh test-sanitize   the suite again, built with ASan + UBSan
#   scripts/dev.sh docs            build the book as a static site (build-docs/site) and
#                                  check it in headless Chromium (screenshots: build-docs/screens)
#   scripts/dev.sh docs-regen      rerun every command behind the book's outputs, tables and
#                                  figures (long training runs included) and rewrite them
#
# On Debian 12, missing packages are installed with apt-get when run as root;
# otherwise the script says what to install and stops.
set -euo pipefail

cd "$(dirname "$0")/.."
jobs=$(nproc 2>/dev/null || echo 2)

packages=(cmake g++ make pkg-config libopenblas-dev libgtest-dev libgmock-dev libfmt-dev libbenchmark-dev python3-numpy)
# Only the docs site needs these.
docs_packages=(mkdocs mkdocs-material python3-pymdownx libjs-mathjax chromium)

# ensure_packages [PACKAGE...]: the build's packages when none are named.
ensure_packages() {
  local missing=()
  local wanted=("$@")
  [ ${#wanted[@]} -eq 0 ] && wanted=("${packages[@]}")
  for p in "${wanted[@]}"; do
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
  docs)
    ensure_packages "${docs_packages[@]}"
    rm -rf build-docs/site build-docs/screens
    mkdocs build --strict --quiet --config-file mkdocs.yml
    # MathJax 2 from Debian, copied next to the pages: the TeX input, the SVG
    # output (no web fonts) and the configs; nothing is fetched at view time.
    mj=/usr/share/javascript/mathjax
    site=build-docs/site/mathjax
    mkdir -p "$site/jax/output" "$site/localization"
    cp -rL "$mj/MathJax.js" "$mj/config" "$mj/extensions" "$site/"
    cp -rL "$mj/jax/input" "$mj/jax/element" "$site/jax/"
    cp -rL "$mj/jax/output/SVG" "$site/jax/output/"
    cp -rL "$mj/localization/en" "$site/localization/"
    if grep -lE '<(script|link)[^>]+(src|href)="https?:' build-docs/site/*.html; then
      echo "dev.sh docs: the pages above load scripts or styles from the network" >&2
      exit 1
    fi
    # Two chapters in a real browser: maths typeset, figures loaded.
    python3 docs/tests/browser_check.py build-docs/site build-docs/screens \
      11-context-extension.html appendix-b-results.html
    echo "dev.sh docs: open build-docs/site/index.html"
    ;;
  docs-regen)
    ensure_packages
    build build -DCMAKE_BUILD_TYPE=Release
    python3 docs/tests/check_docs.py --build build --regen all
    ;;
  *)
    echo "usage: scripts/dev.sh main | test | test-sanitize | docs | docs-regen" >&2
    exit 2
    ;;
esac
