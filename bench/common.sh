# Shared by the benchmark scripts: a work directory with test certificates, a throwaway
# PostgreSQL server, a free port for the broker, and its config. Source it after setting
#   root (the repository), work (an empty directory) and dbname (the database to create).
# Provides: pg_port, port, broker_pid, start_pg, write_config DRIVER [EXTRA_TOML], run_broker,
# stop_broker, cleanup.
broker_pid=""
pg_port=0

cleanup() {
    [ -n "$broker_pid" ] && kill "$broker_pid" 2>/dev/null && wait "$broker_pid" 2>/dev/null || true
    bash "$root/tests/support/postgres.sh" stop "$work/pg" >/dev/null 2>&1 || true
    rm -rf "$work"
}
trap cleanup EXIT

bash "$root/tests/certs/gen.sh" "$work/certs" >/dev/null
port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')

# A freshly made cluster creates each 16 MB WAL segment the first time it needs one, zero-filled
# and fsynced while the committing transaction waits: 20-80 ms commits every few seconds
# (bench/README.md, "Commit stalls were the fresh cluster's WAL segments"). A server in service
# recycles old segments instead, and keeps min_wal_size of them (docs/OPERATIONS.md recommends
# 1GB). So the benchmark server keeps 1 GB too and writes 1 GB of WAL, then checkpoints, before
# any run: the runs meet recycled segments, as on a server in service. BENCH_PG_WARM_ROWS=0
# skips it (to see the fresh cluster).
start_pg() {
    PG_EXTRA="-c min_wal_size=1GB ${PG_EXTRA:-}" \
        bash "$root/tests/support/postgres.sh" start "$work/pg" >/dev/null
    pg_port=$(sed -E 's/.*port=([0-9]+).*/\1/' <"$work/pg/connection")
    local conn="host=127.0.0.1 port=$pg_port user=postgres dbname=postgres"
    local rows=${BENCH_PG_WARM_ROWS:-1000000} # 1,000,000 rows of 1 KB: about 1 GB of WAL
    if [ "$rows" -gt 0 ]; then
        psql "$conn" -qc "CREATE TABLE wal_warm_up AS
                              SELECT repeat(md5(i::text), 32) AS filler FROM generate_series(1, $rows) i" \
            -c "DROP TABLE wal_warm_up" -c "CHECKPOINT" >/dev/null
    fi
    psql "$conn" -qc "CREATE DATABASE $dbname" >/dev/null
}

# write_config DRIVER LOG_LEVEL [EXTRA_TOML]: rate limiting and the per-address handshake cap off,
# one sender and one receiver.
write_config() {
    cat >"$work/config.toml" <<CONF
[server]
address = "127.0.0.1:$port"
# Every benchmark connection comes from 127.0.0.1: 64 publishers connecting at once must not
# meet the per-address handshake cap (32) meant for slowloris protection.
max_handshakes_per_ip = 256
[tls]
cert_path = "$work/certs/server.crt"
key_path = "$work/certs/server.key"
ca_cert_path = "$work/certs/ca.crt"
[logging]
level = "$2"
info_file_path = "$work/logs/info.log"
debug_file_path = "$work/logs/debug.log"
error_file_path = "$work/logs/error.log"
[database]
driver = "$1"
path = "$work/data/ciphermq.db"
host = "127.0.0.1"
port = $pg_port
user = "postgres"
dbname = "$dbname"
[encryption]
aes_key = "$(openssl rand -base64 32)"
[rate_limit]
enabled = false
[acl]
sender_cns = ["sender_1"]
receiver_cns = ["receiver_1"]
${3:-}
CONF
}

# run_broker: starts it ($broker_binary if set, else the build's) on $work/config.toml (output in
# $work/broker.log) and waits for its "ready on" line.
run_broker() {
    local log=$work/broker.log
    : >"$log"
    "${broker_binary:-$build/broker/ciphermq-broker}" --config "$work/config.toml" >"$log" 2>&1 &
    broker_pid=$!
    until grep -q " ready on " "$log"; do
        kill -0 "$broker_pid" 2>/dev/null || { cat "$log" >&2; exit 1; }
        sleep 0.05
    done
}
stop_broker() {
    kill "$broker_pid"
    wait "$broker_pid" 2>/dev/null || true
    broker_pid=""
}
