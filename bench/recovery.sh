#!/usr/bin/env bash
# Start-up time of the real broker with N queued 1 KB messages (bench/README.md, "Recovery").
# The messages are written straight into the broker's tables (what the broker itself would
# have written for N acknowledged publishes to one queue), then the broker is started and timed
# from exec to its "ready on" log line, which it prints only after every queued message is
# loaded and the listener is up.
#   bench/recovery.sh [BUILD_DIR] [N] [postgresql|sqlite ...]
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=$(cd "${1:-$root/build}" && pwd)
count=${2:-1000000}
drivers=("${@:3}")
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
INSERT INTO message_bodies (message_id, envelope)
  SELECT 'rec-' || g, convert_to($(envelope_sql "g::text"), 'UTF8') FROM generate_series(1, $count) g;
INSERT INTO queue_entries (queue, message_id)
  SELECT 'receiver_1_queue', 'rec-' || g FROM generate_series(1, $count) g ORDER BY g;
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
WITH RECURSIVE g(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM g WHERE n < $count)
  INSERT INTO message_bodies (message_id, envelope) SELECT 'rec-' || n, CAST($(envelope_sql "n") AS BLOB) FROM g;
WITH RECURSIVE g(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM g WHERE n < $count)
  INSERT INTO queue_entries (queue, message_id) SELECT 'receiver_1_queue', 'rec-' || n FROM g;
COMMIT;
SQL
}

for driver in "${drivers[@]}"; do
    write_config "$driver" info "[performance]
max_queue_size = $((count * 2))"
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
        printf 'start %d: start-up to ready: %.1f s, broker RSS after recovery: %s\n' "$run" \
            "$seconds" "$rss"
        [ -z "${CMQ_RECOVERY_LOG:-}" ] || cp "$work/broker.log" "$CMQ_RECOVERY_LOG.$driver.$run"
        stop_broker
    done
done
