#!/usr/bin/env bash
# Quick start, part two: install what is missing, build everything and run the whole test
# suite through CTest. CTest itself starts a throwaway PostgreSQL (own data directory, free
# port, removed afterwards) and generates the test certificates, as fixtures.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"

bash scripts/ensure-packages.sh $(grep -hv '^#' scripts/packages-build.txt scripts/packages-test.txt)

build=${CMQ_BUILD_DIR:-build-test}
cmake -S . -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
cmake --build "$build" -j"$(nproc)"
cd "$build"
# CMQ_TEST_EXCLUDE: a regular expression of tests to leave out (for local runs only).
exclude=()
[ -n "${CMQ_TEST_EXCLUDE:-}" ] && exclude=(-E "$CMQ_TEST_EXCLUDE")
ctest --output-on-failure -j"$(nproc)" --timeout 900 "${exclude[@]}" "$@"
