#!/usr/bin/env bash
# Fault-injection soak (bench/README.md, "Fault-injection soak"); not a CI test.
#
#   bench/soak.sh [BUILD_DIR] [ROUNDS=20] [postgresql|sqlite ...]
#
# For each storage driver: the real broker on a free loopback port, SOAK_PUBLISHERS publishers
# (unique ids, a window of unconfirmed publishes each, retrying whatever had no definite answer)
# and SOAK_CONSUMERS consumers (acking every delivery) from bench/soak.py, all recording what
# they saw. Then ROUNDS rounds of: load for 1-3 s, `kill -9` of one consumer (a new one takes
# its place), `kill -9` of the broker and a restart; on PostgreSQL every third round also stops
# PostgreSQL with `pg_ctl -m immediate` (a crash: no checkpoint, WAL replay at start) and
# starts it again while the broker runs. Then the publishers drain, the consumers get up to
# SOAK_DRAIN seconds to receive everything, and soak.py check reads the whole history:
#   acknowledged but never delivered           (must be 0)
#   delivered but never acknowledged or errored (must be 0)
#   duplicate deliveries                        (counted: at-least-once)
# Exits non-zero when either must-be-0 figure is not, or when a phase overruns its deadline.
# Results: $SOAK_OUT (default build-soak)/<driver>.json and the histories next to them.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=$(cd "${1:-$root/build}" && pwd)
rounds=${2:-20}
drivers=("${@:3}")
[ ${#drivers[@]} -gt 0 ] || drivers=(sqlite postgresql)
publishers=${SOAK_PUBLISHERS:-3}
consumers=${SOAK_CONSUMERS:-2}
rate=${SOAK_RATE:-150}
drain=${SOAK_DRAIN:-120}
out=${SOAK_OUT:-$root/build-soak}
broker_bin=$build/broker/ciphermq-broker
[ -x "$broker_bin" ] || { echo "soak.sh: $broker_bin not built" >&2; exit 1; }
work=$(mktemp -d /tmp/cmq-soak.XXXXXX)
dbname=soak
client_pids=()
source "$root/bench/common.sh"
# common.sh's cleanup, plus every client still running.
trap 'for p in "${client_pids[@]}"; do kill -9 "$p" 2>/dev/null || true; done; cleanup' EXIT
rm -rf "$out"
mkdir -p "$out"
soak=(python3 "$root/bench/soak.py")
pgbin=$(ls -d /usr/lib/postgresql/*/bin | sort -V | tail -n 1)
as_db_user() { if [ "$(id -u)" = 0 ]; then runuser -u postgres -- "$@"; else "$@"; fi; }
log() { echo "[$(date +%T)] $*"; }

start_broker() {
    local deadline=$((SECONDS + 60))
    echo "---- start $(date +%T.%N)" >>"$work/broker.log"
    "$broker_bin" --config "$work/config.toml" >>"$work/broker.log" 2>&1 &
    broker_pid=$!
    local lines
    lines=$(wc -l <"$work/broker.log")
    until tail -n +"$lines" "$work/broker.log" | grep -q " ready on "; do
        kill -0 "$broker_pid" 2>/dev/null || { tail -n 20 "$work/broker.log" >&2; return 1; }
        ((SECONDS < deadline)) || { echo "soak.sh: broker not ready in 60 s" >&2; return 1; }
        sleep 0.05
    done
}

pg_crash() {
    local data
    data=$(cat "$work/pg/datadir")
    as_db_user "$pgbin/pg_ctl" -D "$data" -m immediate -w stop >/dev/null
    sleep "0.$((RANDOM % 10))"
    bash "$root/tests/support/postgres.sh" start-server "$work/pg" >/dev/null
}

# start_consumer N: a new incarnation of consumer N, with a history file of its own.
incarnation=0
start_consumer() {
    incarnation=$((incarnation + 1))
    "${soak[@]}" consumer --broker "127.0.0.1:$port" --certs "$work/certs" --queue "$queue" \
        --history "$out/$driver/consumer-$1-$incarnation.log" &
    consumer_pid[$1]=$!
    client_pids+=($!)
}

status=0
log "load average at start: $(cut -d' ' -f1-3 /proc/loadavg); $(nproc) cores"
for driver in "${drivers[@]}"; do
    mkdir -p "$out/$driver"
    if [ "$driver" = postgresql ] && [ "$pg_port" = 0 ]; then start_pg; fi
    # Without a PostgreSQL server the port is unused but must be valid.
    pg_port=${pg_port/#0/5432} write_config "$driver" warn
    queue=receiver_1_soak
    start_broker
    "${soak[@]}" setup --broker "127.0.0.1:$port" --certs "$work/certs" --queue "$queue"
    declare -A consumer_pid=()
    for ((c = 1; c <= consumers; c++)); do start_consumer "$c"; done
    publisher_pids=()
    for ((p = 1; p <= publishers; p++)); do
        "${soak[@]}" publisher --broker "127.0.0.1:$port" --certs "$work/certs" --queue "$queue" \
            --name "$driver-p$p" --rate "$rate" --drain "$drain" \
            --history "$out/$driver/publisher-$p.log" &
        publisher_pids+=($!)
        client_pids+=($!)
    done
    started=$SECONDS
    broker_kills=0 pg_crashes=0 consumer_kills=0
    for ((round = 1; round <= rounds; round++)); do
        sleep "$((1 + RANDOM % 2)).$((RANDOM % 10))"
        victim=$((1 + RANDOM % consumers))
        kill -9 "${consumer_pid[$victim]}" 2>/dev/null || true
        wait "${consumer_pid[$victim]}" 2>/dev/null || true
        consumer_kills=$((consumer_kills + 1))
        start_consumer "$victim"
        if [ "$driver" = postgresql ] && ((round % 3 == 0)); then
            pg_crash
            pg_crashes=$((pg_crashes + 1))
            sleep "0.$((RANDOM % 10))"
        fi
        kill -9 "$broker_pid"
        wait "$broker_pid" 2>/dev/null || true
        broker_kills=$((broker_kills + 1))
        start_broker
        log "$driver round $round/$rounds: broker killed and restarted" \
            "($(grep -c '' "$out/$driver"/publisher-*.log | awk -F: '{s += $2} END {print s}') publisher events)"
    done
    log "$driver: faults done in $((SECONDS - started)) s; draining publishers"
    kill -TERM "${publisher_pids[@]}"
    for p in "${publisher_pids[@]}"; do wait "$p" || true; done
    log "$driver: publishers done; waiting for consumers (at most $drain s)"
    driver_status=0
    "${soak[@]}" check --wait "$drain" --json "$out/$driver.json" "$out/$driver"/*.log ||
        driver_status=$?
    for c in "${!consumer_pid[@]}"; do kill -9 "${consumer_pid[$c]}" 2>/dev/null || true; done
    kill "$broker_pid"
    wait "$broker_pid" 2>/dev/null || true
    broker_pid=""
    log "$driver: $broker_kills broker kill -9, $pg_crashes PostgreSQL immediate stops," \
        "$consumer_kills consumer kill -9 in $((SECONDS - started)) s; check exit $driver_status"
    cp "$work/broker.log" "$out/$driver/broker.log"
    ((driver_status == 0)) || status=1
    rm -rf "$work/data"
done
log "load average at end: $(cut -d' ' -f1-3 /proc/loadavg)"
exit "$status"
