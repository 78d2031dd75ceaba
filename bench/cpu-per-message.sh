#!/usr/bin/env bash
# CPU time per message at W=256, per process, over the middle half of a run (bench/README.md,
# "Where the time goes"): CPU per message barely moves with other load on the machine, msg/s
# does. One publisher and one consumer, 1 KB payloads, against a broker on a throwaway
# PostgreSQL server (and/or on SQLite). For PostgreSQL it also prints pg_stat_statements' view of
# the run: executor time per message of each statement the broker sent.
#   bench/cpu-per-message.sh [BUILD_DIR] [SECONDS] [DRIVERS]   (defaults: build, 20, postgresql;
#                                                               DRIVERS e.g. "postgresql sqlite")
#   BROKER=path/to/ciphermq-broker runs that binary instead of BUILD_DIR's (a before/after pair
#   with one load generator).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=$(cd "${1:-$root/build}" && pwd)
seconds=${2:-20}
drivers=${3:-postgresql}
work=$(mktemp -d /tmp/cmq-cpu.XXXXXX)
dbname=ciphermq_cpu
export PG_EXTRA="-c shared_preload_libraries=pg_stat_statements -c pg_stat_statements.track=all"
source "$root/bench/common.sh"
broker_binary=${BROKER:-}

clock_ticks=$(getconf CLK_TCK)
ticks() { # PID...: user + system clock ticks of these processes (ones that are gone count 0)
    local total=0 pid
    for pid in "$@"; do
        [ -r "/proc/$pid/stat" ] || continue
        total=$((total + $(sed -E 's/^.*\) //' "/proc/$pid/stat" | cut -d' ' -f12,13 | tr ' ' '+')))
    done
    echo "$total"
}
sql() { psql "host=127.0.0.1 port=$pg_port user=postgres dbname=$dbname" -XqAt -c "$1"; }
# Messages stored so far: the queue-entry id sequence on PostgreSQL (one queue per message, and
# reading it costs nothing), the metadata rows on SQLite (kept for the retention period).
stored() {
    if [ "$1" = postgresql ]; then
        sql "SELECT last_value FROM queue_entries_id_seq"
    else
        sqlite3 "file:$work/data/ciphermq.db?mode=ro" "SELECT count(*) FROM message_metadata"
    fi
}
per_message() { # TICKS MESSAGES: microseconds per message
    awk -v t="$1" -v n="$2" -v hz="$clock_ticks" 'BEGIN { printf "%.1f", n ? t * 1e6 / hz / n : 0 }'
}

if [[ " $drivers " == *" postgresql "* ]]; then
    start_pg
    sql "CREATE EXTENSION pg_stat_statements" >/dev/null
else
    pg_port=5432 # the config wants a valid port; a SQLite broker never connects to it
fi
echo "cpu-per-message.sh: $(date -u '+%F %T') UTC, $(git -C "$root" rev-parse --short HEAD)," \
    "$(nproc) cores, load average $(cut -d' ' -f1-3 /proc/loadavg), ${seconds}s runs at W=256"
for driver in $drivers; do
    write_config "$driver" warn
    run_broker
    backends=""
    server=""
    if [ "$driver" = postgresql ]; then
        # Every connection of the broker (storage, leader election); the rest of the server's
        # processes (WAL writer, checkpointer, autovacuum, ...) are counted apart.
        backends=$(sql "SELECT string_agg(pid::text, ' ') FROM pg_stat_activity
                        WHERE application_name LIKE 'ciphermq-broker%'")
        server=$(pgrep -P "$(head -1 "$(cat "$work/pg/datadir")/postmaster.pid")" | tr '\n' ' ')
        sql "SELECT pg_stat_statements_reset()" >/dev/null
    fi
    "$build/bench/ciphermq-bench" --certs "$work/certs" --broker "127.0.0.1:$port" --window 256 \
        --duration "$seconds" --broker-pid "$broker_pid" --json >"$work/bench.json" &
    bench=$!
    sleep "$(awk -v s="$seconds" 'BEGIN { print s / 4 }')"
    # shellcheck disable=SC2086
    read -r n1 b1 p1 s1 < <(echo "$(stored "$driver") $(ticks "$broker_pid") $(ticks $backends) $(ticks $server)")
    sleep "$(awk -v s="$seconds" 'BEGIN { print s / 2 }')"
    # shellcheck disable=SC2086
    read -r n2 b2 p2 s2 < <(echo "$(stored "$driver") $(ticks "$broker_pid") $(ticks $backends) $(ticks $server)")
    wait "$bench" || echo "ciphermq-bench failed: $(cat "$work/bench.json")" >&2
    messages=$((n2 - n1))
    rate=$(awk -v n="$messages" -v s="$seconds" 'BEGIN { printf "%d", n / (s / 2) }')
    line="$driver: $messages messages in the middle $((seconds / 2)) s ($rate msg/s);"
    line+=" CPU per message: broker $(per_message $((b2 - b1)) "$messages") us"
    if [ "$driver" = postgresql ]; then
        pg_other=$(( (s2 - s1) - (p2 - p1) ))
        line+=", PostgreSQL backend serving the broker $(per_message $((p2 - p1)) "$messages") us"
        line+=", rest of PostgreSQL $(per_message "$pg_other" "$messages") us"
    fi
    echo "$line"
    echo "  ciphermq-bench: $(python3 -c 'import json,sys; r=json.load(open(sys.argv[1])); print("publish", round(r.get("publish_rate", 0)), "msg/s, deliver", round(r.get("deliver_rate", 0)), "msg/s")' "$work/bench.json" 2>/dev/null || cat "$work/bench.json")"
    if [ "$driver" = postgresql ]; then
        total=$(stored postgresql)
        echo "  pg_stat_statements over the whole run ($total messages): executor us per message, calls, rows, statement"
        sql "SELECT to_char(total_exec_time * 1000 / $total, 'FM99990.0') || E'\t' || calls || E'\t' ||
                    rows || E'\t' || left(regexp_replace(query, '\s+', ' ', 'g'), 110)
             FROM pg_stat_statements WHERE dbid = (SELECT oid FROM pg_database WHERE datname = '$dbname')
             ORDER BY total_exec_time DESC LIMIT 8" | sed 's/^/    /'
    fi
    stop_broker
done
