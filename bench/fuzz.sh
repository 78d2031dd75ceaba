#!/usr/bin/env bash
# Long fuzzing runs of every libFuzzer target (tests/fuzz/, built by tests/fuzz/run-fuzz.sh
# with clang + ASan + UBSan), one after another on one core. The corpus each run grows is kept
# in OUT_DIR/<target>/corpus, so a later run continues where this one stopped; crashes land in
# OUT_DIR/<target>/artifacts. Exits non-zero when any target found something.
#
#   bench/fuzz.sh [--seconds S | --runs N] [--out OUT_DIR] [target...]
#
# Defaults: 600 seconds per target, OUT_DIR=build-fuzz, every target
# (requestparser envelope adminrequest config). Example (the recorded 10-million-run one):
#   bench/fuzz.sh --runs 10000000 requestparser
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
seconds=600
runs=()
out=$root/build-fuzz
targets=()
while (($#)); do
    case $1 in
    --seconds) seconds=$2; shift 2 ;;
    --runs) runs=(-runs="$2"); seconds=0; shift 2 ;;
    --out) out=$2; shift 2 ;;
    -h | --help) sed -n '2,12p' "$0"; exit 0 ;;
    *) targets+=("$1"); shift ;;
    esac
done
((${#targets[@]})) || targets=(requestparser envelope adminrequest config)

failed=()
for target in "${targets[@]}"; do
    echo "== $target: ${runs[*]:-$seconds s}"
    log=$out/$target.log
    mkdir -p "$out"
    start=$(date +%s)
    code=0
    bash "$root/tests/fuzz/run-fuzz.sh" "$target" "$out" "$seconds" "${runs[@]}" >"$log" 2>&1 ||
        code=$?
    if ((code == 0)); then
        status=ok
    elif ((code == 72)); then # libFuzzer's exit code after SIGINT: stopped, nothing found
        status="interrupted, no finding"
    else
        status="FAILED (exit $code, see $log and $out/$target/artifacts)"
        failed+=("$target")
    fi
    # libFuzzer's final statistics, and the wall time including the build.
    grep -E '^(Done|stat::(number_of_executed_units|average_exec_per_sec|new_units_added|peak_rss_mb))' "$log" || true
    echo "wall: $(($(date +%s) - start)) s; corpus: $(find "$out/$target/corpus" -type f | wc -l) files; $status"
done
((${#failed[@]} == 0)) || { echo "findings in: ${failed[*]}" >&2; exit 1; }
