#!/usr/bin/env bash
# Start-up time of the real broker with N queued 1 KB messages (bench/README.md, "Recovery").
# The messages are written straight into the broker's tables (what the broker itself would
# have written for N acknowledged publishes to one queue), then the broker is started and timed
# from exec to its "ready on" log line, which it prints once each queue's head is loaded and
# the listener is up; then until the backlog, counted in the background after that, is known
# (the core's "backlogs of N queues counted" line: from then on depth figures are exact).
#   bench/recovery.sh [BUILD_DIR] [N] [postgresql|sqlite ...]
# Each message is written as a publish to one queue writes it (since migration 14): its
# envelope in its queue entry, no message_bodies row. CMQ_RECOVERY_SHAPE=bodies writes the shape
# from before (the envelope in message_bodies, the entry without one), which the broker still
# reads.
# With CMQ_RECOVERY_LIST=1 it then times the admin listing of that queue's metadata
# (`cmq admin queue_messages`, docs/ADMIN-PROTOCOL.md): the first, a middle and the last page of
# 100, and a filter that matches nothing (the worst case: the whole queue is read), each next to
# `cmq admin help` on the same kind of connection (process start and TLS handshake).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=$(cd "${1:-$root/build}" && pwd)
count=${2:-1000000}
drivers=("${@:3}")
shape=${CMQ_RECOVERY_SHAPE:-entries}
[ ${#drivers[@]} -gt 0 ] || drivers=(postgresql sqlite)
work=$(mktemp -d /tmp/cmq-recovery.XXXXXX)
dbname=recovery
source "$root/bench/common.sh"
if printf '%s\n' "${drivers[@]}" | grep -qx postgresql; then
    start_pg
else
    pg_port=5432 # unused with SQLite, but the config must hold a valid port
fi

# start_broker: runs it, waits for "ready on", and leaves the seconds it took in $work/seconds.
start_broker() {
    local start
    start=$(date +%s.%N)
    echo "$start" >"$work/started"
    run_broker
    echo "$(date +%s.%N) - $start" | bc >"$work/seconds"
}

# One envelope shape for every row, 1 KB of base64 ciphertext, its message id spliced in.
ciphertext=$(head -c 768 /dev/urandom | base64 -w0)
envelope_sql() { # id expression, concatenation operator is || in both dialects
    echo "'{\"message_id\":\"' || $1 || '\",\"receiver_client_id\":\"receiver_1\",\"enc_session_key\":\"$(printf 'k%.0s' $(seq 108))\",\"nonce\":\"bm9uY2Vub25jZTEy\",\"ciphertext\":\"$ciphertext\"}'"
}

fill_postgresql() {
    psql "host=127.0.0.1 port=$pg_port user=postgres dbname=recovery" -q <<SQL
INSERT INTO exchanges (name, type, creator, created_at) VALUES ('CipherMQ_exchange', 'direct', 'receiver_1', now());
INSERT INTO queues (name, owner, created_at) VALUES ('receiver_1_queue', 'receiver_1', now());
INSERT INTO bindings VALUES ('receiver_1_queue', 'CipherMQ_exchange', 'receiver_1_key');
INSERT INTO message_metadata (message_id, client_id, exchange, routing_key, sent_time)
  SELECT 'rec-' || g, 'sender_1', 'CipherMQ_exchange', 'receiver_1_key', now() FROM generate_series(1, $count) g;
$(if [ "$shape" = bodies ]; then cat <<BODIES
INSERT INTO message_bodies (message_id, envelope)
  SELECT 'rec-' || g, convert_to($(envelope_sql "g::text"), 'UTF8') FROM generate_series(1, $count) g;
INSERT INTO queue_entries (queue, message_id)
  SELECT 'receiver_1_queue', 'rec-' || g FROM generate_series(1, $count) g ORDER BY g;
BODIES
else cat <<ENTRIES
INSERT INTO queue_entries (queue, message_id, envelope)
  SELECT 'receiver_1_queue', 'rec-' || g, convert_to($(envelope_sql "g::text"), 'UTF8')
  FROM generate_series(1, $count) g ORDER BY g;
ENTRIES
fi)
VACUUM ANALYZE;
SQL
}

fill_sqlite() {
    sqlite3 "$work/data/ciphermq.db" >/dev/null <<SQL
PRAGMA journal_mode=WAL;
BEGIN;
INSERT INTO exchanges (name, type, creator, created_at) VALUES ('CipherMQ_exchange', 'direct', 'receiver_1', strftime('%Y-%m-%dT%H:%M:%fZ'));
INSERT INTO queues (name, owner, created_at) VALUES ('receiver_1_queue', 'receiver_1', strftime('%Y-%m-%dT%H:%M:%fZ'));
INSERT INTO bindings VALUES ('receiver_1_queue', 'CipherMQ_exchange', 'receiver_1_key');
WITH RECURSIVE g(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM g WHERE n < $count)
  INSERT INTO message_metadata (message_id, client_id, exchange, routing_key, sent_time)
  SELECT 'rec-' || n, 'sender_1', 'CipherMQ_exchange', 'receiver_1_key', strftime('%Y-%m-%dT%H:%M:%fZ') FROM g;
$(if [ "$shape" = bodies ]; then cat <<BODIES
WITH RECURSIVE g(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM g WHERE n < $count)
  INSERT INTO message_bodies (message_id, envelope) SELECT 'rec-' || n, CAST($(envelope_sql "n") AS BLOB) FROM g;
WITH RECURSIVE g(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM g WHERE n < $count)
  INSERT INTO queue_entries (queue, message_id) SELECT 'receiver_1_queue', 'rec-' || n FROM g;
BODIES
else cat <<ENTRIES
WITH RECURSIVE g(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM g WHERE n < $count)
  INSERT INTO queue_entries (queue, message_id, envelope)
  SELECT 'receiver_1_queue', 'rec-' || n, CAST($(envelope_sql "n") AS BLOB) FROM g;
ENTRIES
fi)
COMMIT;
SQL
}

admin_port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
# time_admin LABEL ARGS...: wall-clock milliseconds of one `cmq admin ARGS`.
time_admin() {
    local label=$1 start end
    shift
    start=$(date +%s%N)
    "$build/cli/cmq" admin --address "127.0.0.1:$admin_port" --ca "$work/certs/ca.crt" \
        --cert "$work/certs/ops-admin.crt" --key "$work/certs/ops-admin.key" --raw "$@" \
        >"$work/listing.json"
    end=$(date +%s%N)
    printf '  %-34s %6.0f ms  %s\n' "$label" "$(((end - start) / 1000000))" \
        "$(head -c 90 "$work/listing.json")"
}
list_pages() {
    local middle last
    time_admin "help (connection only)" help
    time_admin "first page" queue_messages receiver_1_queue 0 100
    middle=$(sqlite_or_pg_id $((count / 2)))
    time_admin "middle page (after_id $middle)" queue_messages receiver_1_queue "$middle" 100
    last=$(sqlite_or_pg_id $((count - 50)))
    time_admin "last page (after_id $last)" queue_messages receiver_1_queue "$last" 100
    time_admin "filter matching nothing" queue_messages receiver_1_queue 0 100 nobody-at-all
}
# The entry id of the queue's n-th entry (ids follow insertion order but need not start at 1).
sqlite_or_pg_id() {
    if [ "$driver" = sqlite ]; then
        sqlite3 "$work/data/ciphermq.db" "SELECT id FROM queue_entries ORDER BY id LIMIT 1 OFFSET $1"
    else
        psql "host=127.0.0.1 port=$pg_port user=postgres dbname=recovery" -tAc \
            "SELECT id FROM queue_entries ORDER BY id LIMIT 1 OFFSET $1"
    fi
}

for driver in "${drivers[@]}"; do
    write_config "$driver" info "admin_cns = [\"ops-admin\"]
[performance]
max_queue_size = $((count * 2))
[admin]
enabled = true
address = \"127.0.0.1:$admin_port\""
    echo "== $driver: $count queued 1 KB messages"
    start_broker # creates the schema
    stop_broker
    "fill_$driver"
    # The first start follows the fill (the database may still be writing it out); later ones
    # (CMQ_RECOVERY_STARTS, default 1) show a settled database.
    for run in $(seq "${CMQ_RECOVERY_STARTS:-1}"); do
        start_broker
        seconds=$(cat "$work/seconds")
        rss=$(awk '/VmRSS/ {printf "%.0f MB", $2 / 1024}' "/proc/$broker_pid/status")
        grep -o "restored [^\"]*" "$work/broker.log" | tail -1 || true
        grep -o "recovered [^\"]* in [0-9]* ms" "$work/broker.log" | tail -1 || true
        grep -o "queue heads read in [^\"]*" "$work/broker.log" | tail -1 || true
        printf 'start %d: start-up to ready: %.1f s, broker RSS after recovery: %s\n' "$run" \
            "$seconds" "$rss"
        # The count after ready (none when every queue's head holds all of it).
        if grep -q "more to count" "$work/broker.log" && ! grep -q "; 0 queues with more" "$work/broker.log"; then
            for _ in $(seq 6000); do
                grep -q "queues counted" "$work/broker.log" && break
                sleep 0.05
            done
            grep -o "queue backlogs counted in the background in [0-9]* ms" "$work/broker.log" |
                tail -1 || true
            printf 'start %d: start-up to exact figures (backlog counted): %.1f s\n' "$run" \
                "$(echo "$(date +%s.%N) - $(cat "$work/started")" | bc)"
        fi
        [ -z "${CMQ_RECOVERY_LOG:-}" ] || cp "$work/broker.log" "$CMQ_RECOVERY_LOG.$driver.$run"
        [ -z "${CMQ_RECOVERY_LIST:-}" ] || [ "$run" != 1 ] || list_pages
        stop_broker
    done
done
