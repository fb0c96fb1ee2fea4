#!/usr/bin/env bash
# ropegrad's set-up-and-run script: installs what is missing, builds, runs.
#
#   scripts/dev.sh main            build, then run the main job
#   scripts/dev.sh test            build, then run the whole test suite
#   scripts/dev.sh test-mpi        data-parallel training over MPI: installs OpenMPI, builds
#                                  build-mpi with -DROPEGRAD_MPI=ON, runs `ctest -L mpi`
#   scripts/dev.sh test-sanitize   the suite again, built with gcc under ASan + UBSan
#   scripts/dev.sh test-clang      the suite again, built with clang (Debian 12: clang 14) under
#                                  ASan + UBSan, instrumented for the fuzzers (what CI runs)
#   scripts/dev.sh fuzz [SECONDS]  build the libFuzzer targets (fuzz/) in that same clang build
#                                  and run each for SECONDS (30)
#   scripts/dev.sh course ...      course mode: list | new DIR [--from ID] | check ID | status
#   scripts/dev.sh text            a BPE tokenizer and a small LM on real English (Debian's fortunes)
#   scripts/dev.sh docs            build the book as a static site (build-docs/site) and
#                                  check it in headless Chromium (screenshots: build-docs/screens)
#   scripts/dev.sh experiments     chapter 20's experiments (sweeps on the fortunes text) into runs/experiments
#   scripts/dev.sh docs-regen      rerun every command behind the book's outputs, tables and
#                                  figures (long training runs included) and rewrite them
#   scripts/dev.sh install-check   install ropegrad into build-install/prefix, then build and run
#                                  examples/ as a project outside the tree (find_package(ropegrad))
#
# On Debian 12, missing packages are installed with apt-get when run as root;
# otherwise the script says what to install and stops.
set -euo pipefail

cd "$(dirname "$0")/.."
jobs=$(nproc 2>/dev/null || echo 2)

packages=(cmake g++ make pkg-config ccache libopenblas-dev libgtest-dev libgmock-dev libfmt-dev libbenchmark-dev python3-numpy)
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

# build DIR [cmake args...] [--target T...]
build() {
  local dir=$1
  shift
  local targets=()
  local args=()
  while [ $# -gt 0 ]; do
    if [ "$1" = --target ]; then shift; targets=("$@"); break; fi
    args+=("$1"); shift
  done
  set -- "${args[@]}"
  # ccache, when present, makes rebuilds of unchanged files free (the course
  # proof compiles each stubbed file and then the restored one again). With
  # the tree as its base directory the compiler sees relative paths, so an
  # unchanged file hits from any tree: this one and every course workspace
  # (scripts/course_build.py configures the same launcher).
  local launcher=()
  command -v ccache >/dev/null &&
    launcher=("-DCMAKE_CXX_COMPILER_LAUNCHER=$(command -v cmake);-E;env;CCACHE_BASEDIR=$(pwd);CCACHE_NOHASHDIR=1;CCACHE_DEPEND=1;CCACHE_SLOPPINESS=pch_defines,time_macros;ccache")
  cmake -S . -B "$dir" "${launcher[@]}" "$@" >/dev/null
  cmake --build "$dir" -j"$jobs" ${targets[@]+--target "${targets[@]}"}
}

# build_clang [--target T...]: the clang build shared by test-clang and fuzz
# (clang, its sanitizer and libFuzzer runtimes installed first).
build_clang() {
  packages+=(clang libclang-rt-14-dev)
  ensure_packages
  build build-clang -DCMAKE_BUILD_TYPE=Debug -DCMAKE_CXX_FLAGS_DEBUG="-O1 -g1" -DCMAKE_CXX_COMPILER=clang++ \
    -DROPEGRAD_FUZZ=ON -DROPEGRAD_BENCH=OFF "$@"
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
    packages+=(fortunes)  # chapter 20's experiments test (tests/test_experiments.sh)
    ensure_packages
    build build -DCMAKE_BUILD_TYPE=Release
    ctest --test-dir build --output-on-failure -j"$jobs"
    ;;
  test-mpi)
    # Only this mode needs MPI; every other build leaves it out.
    packages+=(libopenmpi-dev openmpi-bin)
    ensure_packages
    # The mpi tests need the program (tests/mpi/dp_test.sh runs it under mpirun) and course-check-mpi;
    # one test at a time, as each starts up to three ranks on its own.
    # The course's chapter-21 checks under mpirun too (course-check-mpi, labels mpi and course).
    build build-mpi -DCMAKE_BUILD_TYPE=Release -DROPEGRAD_MPI=ON -DROPEGRAD_BENCH=OFF --target ropegrad-cli course-check-mpi
    ctest --test-dir build-mpi --output-on-failure -L mpi
    ;;
  test-sanitize)
    ensure_packages
    # Benchmarks are not tests; skip them in the sanitizer build.
    build build-sanitize -DCMAKE_BUILD_TYPE=Debug -DCMAKE_CXX_FLAGS_DEBUG="-O1 -g1" \
      -DROPEGRAD_SANITIZE=ON -DROPEGRAD_BENCH=OFF
    ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
      ctest --test-dir build-sanitize --output-on-failure -j"$jobs"
    ;;
  test-clang)
    # A second compiler keeps the code portable C++20. The build is the
    # fuzzers' one (clang, ASan + UBSan, coverage instrumentation), so CI
    # compiles the tree once for the clang suite, the sanitizers and `fuzz`.
    build_clang
    ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
      ctest --test-dir build-clang --output-on-failure -j"$jobs"
    ;;
  fuzz)
    seconds=${2:-30}
    build_clang --target fuzz_npy fuzz_npy_roundtrip fuzz_safetensors fuzz_checkpoint fuzz_config fuzz_tokenizer \
      fuzz_encode_specials fuzz_metrics_csv fuzz_dp_csv make_corpus
    rm -rf build-clang/corpus && ./build-clang/fuzz/make_corpus build-clang/corpus
    status=0
    for reader in npy npy_roundtrip safetensors checkpoint config tokenizer encode_specials metrics_csv dp_csv; do
      # Inputs found to add coverage are kept in build-clang/found/<reader> across runs.
      mkdir -p "build-clang/found/$reader"
      log=build-clang/fuzz_$reader.log
      if ./build-clang/fuzz/fuzz_$reader -max_total_time="$seconds" -timeout=10 -rss_limit_mb=2048 -print_final_stats=1 \
          "build-clang/found/$reader" "build-clang/corpus/$reader" >"$log" 2>&1; then
        echo "fuzz $reader: $(grep -m1 -o 'stat::number_of_executed_units: [0-9]*' "$log" | grep -o '[0-9]*$') executions, $(grep -o 'cov: [0-9]* ft: [0-9]*' "$log" | tail -1), no crash"
      else
        echo "fuzz $reader: FAILED (build-clang/fuzz_$reader.log; the input is in crash-* / leak-* / oom-*):" >&2
        grep -E 'ERROR|SUMMARY|runtime error|Error' "$log" | head -5 >&2
        status=1
      fi
    done
    exit $status
    ;;
  text)
    packages+=(fortunes)
    ensure_packages
    build build -DCMAKE_BUILD_TYPE=Release
    # runs/fortunes: the text split, its tokenizer and ids (scripts/experiments.sh data)
    bash scripts/experiments.sh data --build build --out runs/data
    ./build/ropegrad compare --task text --tokenizer runs/fortunes/tokenizer \
      --data runs/fortunes/fortunes_train.npy --length 64 --batch 16 --steps 1000 --eval-every 100 \
      --out runs/compare-fortunes
    ;;
  experiments)
    # docs/20-experiments.md's runs, into runs/experiments (about 11 minutes).
    packages+=(fortunes)
    ensure_packages
    build build -DCMAKE_BUILD_TYPE=Release
    for part in data lr batch batch-short norm position ffn generate; do
      echo "== experiments: $part"
      bash scripts/experiments.sh "$part" --build build --out "runs/experiments/$part"
    done
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
    # Every page in a real browser, served over HTTP: maths typeset and as many
    # formulas as the sources hold, no TeX left in the text or the table of
    # contents, images loaded, links and anchors resolved, search answering;
    # at 1280 and 400 px wide, no table, code line or figure text cut off.
    python3 docs/tests/browser_check.py build-docs/site build-docs/screens
    echo "dev.sh docs: open build-docs/site/index.html (search needs the site served over HTTP:"
    echo "dev.sh docs: python3 -m http.server -d build-docs/site, then http://localhost:8000/)"
    ;;
  docs-regen)
    packages+=(fortunes)  # chapter 20's experiments
    packages+=(libopenmpi-dev openmpi-bin)  # chapter 21's mpirun runs (scripts/dp-measure.sh)
    ensure_packages
    build build -DCMAKE_BUILD_TYPE=Release
    build build-mpi -DCMAKE_BUILD_TYPE=Release -DROPEGRAD_MPI=ON -DROPEGRAD_BENCH=OFF --target ropegrad-cli
    python3 docs/tests/check_docs.py --build build --regen all
    ;;
  install-check)
    ensure_packages
    build build -DCMAKE_BUILD_TYPE=Release
    prefix=$PWD/build-install/prefix
    rm -rf build-install
    cmake --install build --prefix "$prefix" >/dev/null
    # examples/ on its own: it finds the installed package, not the source tree.
    cmake -S examples -B build-install/examples -DCMAKE_PREFIX_PATH="$prefix" -DCMAKE_BUILD_TYPE=Release >/dev/null
    cmake --build build-install/examples -j"$jobs"
    for example in first_program train_by_hand custom_function cs336_adapters; do
      echo "install-check: build-install/examples/$example"
      ./build-install/examples/$example
    done
    echo "install-check: examples/ built against $prefix and ran"
    ;;
  course)
    case "${2:-}" in final | proof) packages+=(fortunes) ;; esac  # the final check trains on Debian's fortunes
    ensure_packages
    shift
    exec bash scripts/course.sh "$@"
    ;;
  *)
    echo "usage: scripts/dev.sh main | test | test-mpi | test-sanitize | test-clang | fuzz [SECONDS] | text | experiments | docs | docs-regen | install-check | course" >&2
    exit 2
    ;;
esac
