#!/usr/bin/env bash
# Broker memory while a backlog far larger than a queue's window builds, and the drain rate of
# that backlog (bench/README.md, "Backlog memory"): one publisher (window 256, 1 KB of
# ciphertext) puts N messages into a queue nobody consumes, then a consumer (prefetch 256)
# drains it; ciphermq-bench samples the broker's RSS throughout and reports its maximum, the
# publish rate and the drain rate. Start-up with a large backlog: bench/recovery.sh.
#   bench/backlog-memory.sh [BUILD_DIR] [N] [postgresql|sqlite ...]
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=$(cd "${1:-$root/build}" && pwd)
count=${2:-1000000}
drivers=("${@:3}")
[ ${#drivers[@]} -gt 0 ] || drivers=(postgresql sqlite)
work=$(mktemp -d /tmp/cmq-backlog.XXXXXX)
dbname=backlog
source "$root/bench/common.sh"
if printf '%s\n' "${drivers[@]}" | grep -qx postgresql; then
    start_pg
else
    pg_port=5432 # unused with SQLite, but the config must hold a valid port
fi

for driver in "${drivers[@]}"; do
    write_config "$driver" info "[performance]
max_queue_size = $((count * 2))
max_queue_bytes = 0
${CMQ_BACKLOG_TOML:-}"
    echo "== $driver: a backlog of $count 1 KB messages"
    run_broker
    "$build/bench/ciphermq-bench" --certs "$work/certs" --broker "127.0.0.1:$port" -p 1 -c 1 \
        -w 256 --prefetch 256 -s 1024 --backlog "$count" --broker-pid "$broker_pid"
    awk '/VmRSS/ {printf "broker RSS after the drain: %.0f MB\n", $2 / 1024}' \
        "/proc/$broker_pid/status"
    stop_broker
    rm -rf "$work/data"
done
