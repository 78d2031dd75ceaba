#!/usr/bin/env bash
# CI, sanitizers: builds the broker, its integration tests and the unit tests with
# AddressSanitizer + UndefinedBehaviorSanitizer (and LeakSanitizer, part of ASan) in a build
# directory of its own, runs them through CTest and fails on any sanitizer report, from a test
# program or from a broker process a test started.
#
#   scripts/sanitize.sh [BUILD_DIR=build-asan] [extra ctest arguments...]
#
# How a report fails the run, whichever process makes it:
# - UBSan stops at the first finding (-fno-sanitize-recover=undefined), ASan too (halt_on_error).
# - Every report is also written to a file under BUILD_DIR/sanitizer-logs (log_path; the
#   environment, ASAN_OPTIONS and UBSAN_OPTIONS included, is inherited by the broker processes
#   the tests start). A broker that a test kills or whose exit status it ignores can therefore
#   not hide a report: after CTest, any file there fails the script and is printed.
# - A report's file name says who wrote it: asan.<executable>.<pid> (log_exe_name) for a test
#   program or a tool it ran, asan.<test program>.<test function>.ciphermq-broker.<pid> for a
#   broker (tests/support/brokerprocess.cpp adds the test to the broker's log_path).
# - Leaks are reported at a normal exit (a test's own, or a broker stopped by SIGTERM).
#   tests/sanitizers/lsan.supp lists the only leaks tolerated, each inside a system library.
#
# Environment: CMQ_SANITIZE_TESTS, a regular expression of the tests to build and run (default:
# see `default_tests` below); CMQ_SANITIZE_UNIT=0 leaves the unit tests out;
# CMQ_SANITIZE_EXCLUDE, tests to leave out; CMQ_SANITIZE_JOBS, CTest's and Ninja's parallelism
# (default: nproc). It prints CTest's summary and the time the build and the tests took.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
build=${1:-build-asan}
shift $(($# ? 1 : 0))
jobs=${CMQ_SANITIZE_JOBS:-$(nproc)}
started=$(date +%s)
bash scripts/ensure-packages.sh $(grep -hv '^#' scripts/packages-build.txt scripts/packages-test.txt)

launcher=()
command -v ccache >/dev/null && launcher=(-DCMAKE_CXX_COMPILER_LAUNCHER=ccache)
flags="-fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=undefined"
# -O1: sanitizer builds at -O2 trip GCC's flow-based warnings (-Werror) on Qt's headers and
# run no faster in tests that mostly wait for the broker.
cmake -S . -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo "${launcher[@]}" \
    -DCMAKE_CXX_FLAGS_RELWITHDEBINFO="-O1 -g" \
    -DCMAKE_CXX_FLAGS="$flags" \
    -DCMAKE_EXE_LINKER_FLAGS="-fsanitize=address,undefined" \
    -DCMAKE_SHARED_LINKER_FLAGS="-fsanitize=address,undefined" >/dev/null

# Everything the selected tests run: the broker, the command-line tools the integration tests
# drive and the test programs (not the admin GUI, the benchmarks or the packages). The unit
# tests (CMQ_SANITIZE_UNIT=1, the default) add little to build: they link the same libraries.
integration_tests=$(cd tests/integration && ls tst_*.cpp | sed 's/\.cpp$//')
unit_tests=""
if [[ ${CMQ_SANITIZE_UNIT:-1} != 0 ]]; then
    unit_tests=$(cd tests/auto && ls common/tst_*.cpp broker/tst_*.cpp | xargs -n1 basename | sed 's/\.cpp$//')
fi
# CMQ_SANITIZE_TESTS also narrows the build to the tests it selects.
if [[ -n ${CMQ_SANITIZE_TESTS:-} ]]; then
    integration_tests=$(grep -E "$CMQ_SANITIZE_TESTS" <<<"$integration_tests" || true)
    unit_tests=$(grep -E "$CMQ_SANITIZE_TESTS" <<<"$unit_tests" || true)
fi
# shellcheck disable=SC2086 # word lists
cmake --build "$build" -j"$jobs" --target ciphermq-broker cmq cmq_test_service \
    $integration_tests $unit_tests 2>&1 | tail -n 3
built=$(date +%s)

logs=$root/$build/sanitizer-logs
rm -rf "$logs"
mkdir -p "$logs"
export ASAN_OPTIONS="halt_on_error=1:abort_on_error=0:exitcode=86:detect_leaks=1:detect_stack_use_after_return=0:strict_string_checks=1:check_initialization_order=1:log_exe_name=1:log_path=$logs/asan"
export UBSAN_OPTIONS="halt_on_error=1:print_stacktrace=1:exitcode=87:log_exe_name=1:log_path=$logs/ubsan"
export LSAN_OPTIONS="suppressions=$root/tests/sanitizers/lsan.supp:print_suppressions=0"

# The default test set: every integration test and (CMQ_SANITIZE_UNIT=1) every unit test of
# common/ and broker/; never the GUI, packaging or fuzz tests (the fuzzers carry their own
# sanitizers). CMQ_SANITIZE_EXCLUDE: a regular expression of tests to leave out, to fit a budget.
default_tests='^tst_'
[[ -n $unit_tests ]] || default_tests="^($(echo $integration_tests | tr ' ' '|'))\$"
exclude=${CMQ_SANITIZE_EXCLUDE-}
cd "$build"
status=0
ctest --output-on-failure -j"$jobs" --timeout 900 -R "${CMQ_SANITIZE_TESTS:-$default_tests}" \
    ${exclude:+-E "$exclude"} -LE 'gui|packaging|fuzz' "$@" || status=$?
cd "$root"

reports=("$logs"/*)
if [[ -e ${reports[0]} ]]; then
    echo "sanitize.sh: ${#reports[@]} sanitizer report(s):" >&2
    for report in "${reports[@]}"; do
        # asan.<test program>.<test function>.ciphermq-broker.<pid> or asan.<program>.<pid>
        name=$(basename "$report")
        who=${name#*.}
        echo "---- $report: from ${who%.*}, pid ${who##*.}" >&2
        grep -m1 '^SUMMARY' "$report" >&2 || true
        head -n 60 "$report" >&2
    done
    status=1
fi
finished=$(date +%s)
echo "sanitize.sh: build $((built - started)) s, tests $((finished - built)) s, total $((finished - started)) s; exit $status"
exit "$status"
