#!/usr/bin/env bash
# Durability audit (bench/README.md, "Durability audit"): every acknowledged publish batch is
# flushed to disk once, never zero times.
#
#   bench/durability.sh [BUILD_DIR] [MESSAGES=20000] [sqlite|postgresql ...]
#
# For each driver the real broker runs with its Prometheus endpoint on loopback; two publishers
# from bench/soak.py publish MESSAGES envelopes in total as fast as their windows allow, and
# nothing consumes them (so the only transactions are the publish batches). Counted over exactly
# that phase:
#   batches   ciphermq_storage_batch_records_count (publish transactions), messages its _sum;
#   flushes   SQLite: fsync/fdatasync calls of the broker under `strace -f -y`, per file;
#             PostgreSQL: pg_stat_wal wal_sync and wal_write (reset first), and the database's
#             xact_commit from pg_stat_database.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=$(cd "${1:-$root/build}" && pwd)
messages=${2:-20000}
drivers=("${@:3}")
[ ${#drivers[@]} -gt 0 ] || drivers=(sqlite postgresql)
broker_bin=$build/broker/ciphermq-broker
command -v strace >/dev/null || { echo "durability.sh: needs strace (apt-get install strace)" >&2; exit 1; }
work=$(mktemp -d /tmp/cmq-durability.XXXXXX)
dbname=durability
source "$root/bench/common.sh"
soak=(python3 "$root/bench/soak.py")
metrics_port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
queue=receiver_1_audit

metric() { # metric NAME: its value from /metrics
    python3 - "$metrics_port" "$1" <<'PY'
import sys, urllib.request
text = urllib.request.urlopen(f"http://127.0.0.1:{sys.argv[1]}/metrics", timeout=10).read().decode()
print(next((l.split()[-1] for l in text.splitlines() if l.split(" ")[0] == sys.argv[2]), "0"))
PY
}
psql_value() { psql "host=127.0.0.1 port=$pg_port user=postgres dbname=$dbname" -Atqc "$1"; }

publish() {
    local pids=() p
    for p in 1 2; do
        "${soak[@]}" publisher --broker "127.0.0.1:$port" --certs "$work/certs" --queue "$queue" \
            --name "audit-$driver-p$p" --rate 0 --window 128 --count $((messages / 2)) --drain 120 \
            --history "$work/publisher-$driver-$p.log" &
        pids+=($!)
    done
    for p in "${pids[@]}"; do wait "$p"; done
    local acked
    acked=$(cat "$work"/publisher-"$driver"-*.log | grep -c '^ACK ' || true)
    echo "  acknowledged: $acked of $messages"
}

echo "load average at start: $(cut -d' ' -f1-3 /proc/loadavg)"
for driver in "${drivers[@]}"; do
    [ "$driver" = postgresql ] && [ "$pg_port" = 0 ] && start_pg
    pg_port=${pg_port/#0/5432} write_config "$driver" warn "[admin]
metrics_http_address = \"127.0.0.1:$metrics_port\""
    : >"$work/broker.log"
    tracer=()
    [ "$driver" = sqlite ] && tracer=(strace -f -y -qq -e trace=fsync,fdatasync -o "$work/strace.txt")
    "${tracer[@]}" "$broker_bin" --config "$work/config.toml" >"$work/broker.log" 2>&1 &
    broker_pid=$!
    for _ in $(seq 600); do grep -q " ready on " "$work/broker.log" && break; sleep 0.1; done
    grep -q " ready on " "$work/broker.log" || { cat "$work/broker.log" >&2; exit 1; }
    "${soak[@]}" setup --broker "127.0.0.1:$port" --certs "$work/certs" --queue "$queue"
    sleep 1 # let the set-up transactions finish before the counters are read
    batches0=$(metric ciphermq_storage_batch_records_count)
    records0=$(metric ciphermq_storage_batch_records_sum)
    echo "== $driver"
    if [ "$driver" = sqlite ]; then
        flushes0=$(grep -c -E '^[0-9]+ +f(data)?sync\(' "$work/strace.txt" || true)
        publish
        sleep 1
        batches=$(($(metric ciphermq_storage_batch_records_count) - batches0))
        records=$(($(metric ciphermq_storage_batch_records_sum) - records0))
        # Per file, only the calls made during the publish phase.
        tail -n +"$((flushes0 + 1))" "$work/strace.txt" | grep -E 'f(data)?sync\(' |
            sed -E 's/^[0-9]+ +(f(data)?sync)\([0-9]+<([^>]*)>.*/\1 \3/' | sort | uniq -c |
            sed 's/^/  /'
        flushes=$(($(grep -c -E 'f(data)?sync\(' "$work/strace.txt") - flushes0))
        echo "  messages $records, batches $batches, fsync+fdatasync $flushes"
    else
        psql_value "SELECT pg_stat_reset_shared('wal')" >/dev/null
        commits0=$(psql_value "SELECT xact_commit FROM pg_stat_database WHERE datname = '$dbname'")
        publish
        sleep 1
        batches=$(($(metric ciphermq_storage_batch_records_count) - batches0))
        records=$(($(metric ciphermq_storage_batch_records_sum) - records0))
        # The counters are sent to the statistics system at transaction end or within a second.
        sleep 1
        read -r wal_sync wal_write wal_records <<<"$(psql_value "SELECT wal_sync, wal_write, wal_records FROM pg_stat_wal" | tr '|' ' ')"
        commits=$(($(psql_value "SELECT xact_commit FROM pg_stat_database WHERE datname = '$dbname'") - commits0))
        echo "  messages $records, batches $batches, wal_sync $wal_sync, wal_write $wal_write," \
            "wal_records $wal_records, xact_commit $commits (including these psql queries)"
    fi
    # Under strace, $broker_pid is strace's: the broker is its child.
    [ ${#tracer[@]} -gt 0 ] && kill "$(pgrep -P "$broker_pid")" || kill "$broker_pid"
    wait "$broker_pid" 2>/dev/null || true
    broker_pid=""
done
echo "load average at end: $(cut -d' ' -f1-3 /proc/loadavg)"
