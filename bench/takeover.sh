#!/usr/bin/env bash
# Time for a standby to serve again after kill -9 of the active node, with N queued 1 KB
# messages (bench/README.md, "Takeover"). Two brokers on one throwaway PostgreSQL database:
# node a active, node b standby; N messages are written straight into the broker's tables
# (what N acknowledged publishes to one queue leave there), then a is killed with SIGKILL and
# the clock runs until b logs that it serves (after it took the lock, bumped the epoch and
# recovered every queued message).
#   bench/takeover.sh [BUILD_DIR] [N]
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=$(cd "${1:-$root/build}" && pwd)
count=${2:-10000}
work=$(mktemp -d /tmp/cmq-takeover.XXXXXX)
dbname=takeover
source "$root/bench/common.sh"
start_pg
standby_pid=""
trap 'kill -9 $standby_pid 2>/dev/null || true; cleanup' EXIT

port_b=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
write_config postgresql info "[performance]
max_queue_size = $((count * 2))
[cluster]
node_id = \"a\"
client_address = \"127.0.0.1:$port\""
cp "$work/config.toml" "$work/a.toml"
sed -e "s/127.0.0.1:$port/127.0.0.1:$port_b/" -e 's/node_id = "a"/node_id = "b"/' \
    "$work/a.toml" >"$work/b.toml"

# run NAME: starts that node, waits for its "ready on" line, leaves its pid in $started_pid.
run() {
    local log=$work/$1.log
    : >"$log"
    "$build/broker/ciphermq-broker" --config "$work/$1.toml" >"$log" 2>&1 &
    started_pid=$!
    until grep -q " ready on " "$log"; do
        kill -0 "$started_pid" 2>/dev/null || { cat "$log" >&2; exit 1; }
        sleep 0.05
    done
}

run a
broker_pid=$started_pid
run b
standby_pid=$started_pid
grep -q "standby" "$work/b.log" || { echo "node b did not start as a standby" >&2; exit 1; }

ciphertext=$(head -c 768 /dev/urandom | base64 -w0)
envelope="'{\"message_id\":\"' || g || '\",\"receiver_client_id\":\"receiver_1\",\"enc_session_key\":\"$(printf 'k%.0s' $(seq 108))\",\"nonce\":\"bm9uY2Vub25jZTEy\",\"ciphertext\":\"$ciphertext\"}'"
psql "host=127.0.0.1 port=$pg_port user=postgres dbname=$dbname" -q <<SQL
INSERT INTO exchanges (name, type, creator, created_at) VALUES ('CipherMQ_exchange', 'direct', 'receiver_1', now());
INSERT INTO queues (name, owner, created_at) VALUES ('receiver_1_queue', 'receiver_1', now());
INSERT INTO bindings VALUES ('receiver_1_queue', 'CipherMQ_exchange', 'receiver_1_key');
INSERT INTO message_metadata (message_id, client_id, exchange, routing_key, sent_time)
  SELECT 'tk-' || g, 'sender_1', 'CipherMQ_exchange', 'receiver_1_key', now() FROM generate_series(1, $count) g;
INSERT INTO message_bodies (message_id, envelope)
  SELECT 'tk-' || g, convert_to($envelope, 'UTF8') FROM generate_series(1, $count) g;
INSERT INTO queue_entries (queue, message_id)
  SELECT 'receiver_1_queue', 'tk-' || g FROM generate_series(1, $count) g ORDER BY g;
VACUUM ANALYZE;
SQL

echo "== kill -9 of the active node with $count queued 1 KB messages"
start=$(date +%s.%N)
kill -9 "$broker_pid"
wait "$broker_pid" 2>/dev/null || true
broker_pid=""
until grep -q "active (node b" "$work/b.log"; do
    kill -0 "$standby_pid" 2>/dev/null || { cat "$work/b.log" >&2; exit 1; }
    sleep 0.01
done
seconds=$(echo "$(date +%s.%N) - $start" | bc)
grep -o "node b is active with epoch [^\"]*\|active (node b[^\"]*" "$work/b.log" || true
printf 'kill -9 to serving on the standby: %.2f s\n' "$seconds"
[ -z "${CMQ_TAKEOVER_LOG:-}" ] || cp "$work/b.log" "$CMQ_TAKEOVER_LOG"
kill "$standby_pid"
wait "$standby_pid" 2>/dev/null || true
standby_pid=""
