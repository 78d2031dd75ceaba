#!/usr/bin/env bash
# Runs the recorded benchmark set (bench/README.md): the broker on PostgreSQL (a throwaway server
# on this machine) and on SQLite, 1 publisher + 1 consumer, 1 KB envelopes, windows 256 and 1.
#   bench/run.sh [BUILD_DIR] [SECONDS]
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=$(cd "${1:-$root/build}" && pwd)
seconds=${2:-20}
work=$(mktemp -d /tmp/cmq-bench.XXXXXX)
broker_pid=""
cleanup() {
    [ -n "$broker_pid" ] && kill "$broker_pid" 2>/dev/null && wait "$broker_pid" 2>/dev/null || true
    bash "$root/tests/support/postgres.sh" stop "$work/pg" >/dev/null 2>&1 || true
    rm -rf "$work"
}
trap cleanup EXIT

bash "$root/tests/certs/gen.sh" "$work/certs" >/dev/null
bash "$root/tests/support/postgres.sh" start "$work/pg" >/dev/null
pg=$(cat "$work/pg/connection")
pg_port=$(sed -E 's/.*port=([0-9]+).*/\1/' <<<"$pg")
psql "host=127.0.0.1 port=$pg_port user=postgres dbname=postgres" -qc "CREATE DATABASE ciphermq_bench" >/dev/null
port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')

write_config() { # driver
    cat > "$work/config.toml" <<CONF
[server]
address = "127.0.0.1:$port"
[tls]
cert_path = "$work/certs/server.crt"
key_path = "$work/certs/server.key"
ca_cert_path = "$work/certs/ca.crt"
[logging]
level = "warn"
info_file_path = "$work/logs/info.log"
debug_file_path = "$work/logs/debug.log"
error_file_path = "$work/logs/error.log"
[database]
driver = "$1"
path = "$work/data/ciphermq.db"
host = "127.0.0.1"
port = $pg_port
user = "postgres"
dbname = "ciphermq_bench"
[encryption]
aes_key = "$(openssl rand -base64 32)"
[rate_limit]
enabled = false
[acl]
sender_cns = ["sender_1"]
receiver_cns = ["receiver_1"]
CONF
}

for driver in postgresql sqlite; do
    write_config "$driver"
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
