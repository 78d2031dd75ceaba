#!/usr/bin/env bash
# Quick start, part two: install what is missing, build everything and run the whole test
# suite through CTest. CTest itself starts a throwaway PostgreSQL (own data directory, free
# port, removed afterwards) and generates the test certificates, as fixtures.
#
# Runs as root: the packaging test installs, upgrades and purges the Debian packages it builds.
# Started by another user, it runs itself again through sudo (the build tree is then root's).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
if [ "$(id -u)" != 0 ]; then
    if ! command -v sudo >/dev/null; then
        echo "test.sh: needs root (the packaging test installs .deb files): run it as root," \
            "or install sudo" >&2
        exit 1
    fi
    exec sudo -E bash "$root/scripts/test.sh" "$@"
fi
cd "$root"

bash scripts/ensure-packages.sh $(grep -hv '^#' scripts/packages-build.txt scripts/packages-test.txt)

# Root shares run-dev.sh's build tree (one build, not two, on a new machine); a user who came in
# through sudo keeps theirs and gets a root-owned tree of its own.
build=build-test
if [ -z "${SUDO_USER:-}" ] && { [ ! -e build ] || [ "$(stat -c %u build)" = 0 ]; }; then
    build=build
fi
build=${CMQ_BUILD_DIR:-$build}
cmake -S . -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
cmake --build "$build" -j"$(nproc)"
cd "$build"
# CMQ_TEST_EXCLUDE: a regular expression of tests to leave out (for local runs only).
exclude=()
[ -n "${CMQ_TEST_EXCLUDE:-}" ] && exclude=(-E "$CMQ_TEST_EXCLUDE")
ctest --output-on-failure -j"$(nproc)" --timeout 900 "${exclude[@]}" "$@"
