#!/usr/bin/env bash
# Runs the recorded benchmark set (bench/README.md): the broker on PostgreSQL (a throwaway server
# on this machine) and on SQLite, 1 publisher + 1 consumer, 1 KB envelopes, windows 256 and 1.
#   bench/run.sh [BUILD_DIR] [SECONDS]
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=$(cd "${1:-$root/build}" && pwd)
seconds=${2:-20}
work=$(mktemp -d /tmp/cmq-bench.XXXXXX)
dbname=ciphermq_bench
source "$root/bench/common.sh"
start_pg

for driver in postgresql sqlite; do
    write_config "$driver" warn
    "$build/broker/ciphermq-broker" --config "$work/config.toml" >"$work/broker-$driver.log" 2>&1 &
    broker_pid=$!
    for _ in $(seq 100); do grep -q " ready on " "$work/broker-$driver.log" && break; sleep 0.1; done
    for window in 256 1; do
        echo "== $driver, window $window, ${seconds}s"
        "$build/bench/ciphermq-bench" --certs "$work/certs" --broker "127.0.0.1:$port" \
            --window "$window" --duration "$seconds" --broker-pid "$broker_pid" || true
    done
    kill "$broker_pid"; wait "$broker_pid" 2>/dev/null || true; broker_pid=""
done
