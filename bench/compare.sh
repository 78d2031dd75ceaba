#!/usr/bin/env bash
# CipherMQ (PostgreSQL and SQLite) against RabbitMQ on this machine, the same rows back to back:
# mTLS with certificate identities, durable queues, persistent 1 KB payloads, publisher confirms,
# manual acks, prefetch 256. Prints every run and then each row's ratio (bench/README.md).
#   bench/compare.sh [BUILD_DIR] [DURATION_SECONDS] [BACKLOG]
# COMPARE_ROWS picks rows (default all); COMPARE_REPEAT=n runs each row n rounds (the three
# systems alternately in each) and reports medians, with each ratio's range over the rounds;
# COMPARE_TOML is appended to both CipherMQ brokers'
# config, e.g. COMPARE_TOML=$'[performance]\ndeliver_before_commit = true'.
# The logs of the run (both brokers, PostgreSQL's with every statement over 100 ms, checkpoints
# and autovacuum runs, RabbitMQ's) and each run's JSON line with its start and end time are kept
# in COMPARE_LOGS (default /tmp/cmq-compare-logs.<UTC time>), so that a row far off its usual
# figure can be matched against what the servers logged while it ran.
# Installs Debian's rabbitmq-server and librabbitmq-dev when missing (needs root), keeps the
# package's own service stopped and disabled, and runs a RabbitMQ node of its own: own config,
# data directory, node name and loopback-only ports, removed at exit.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=$(cd "${1:-$root/build}" && pwd)
seconds=${2:-8}
backlog=${3:-20000}
work=$(mktemp -d /tmp/cmq-compare.XXXXXX)
dbname=ciphermq_compare
started=$(date +%s)
echo "compare.sh: $(date -u '+%F %T UTC'), $(git -C "$root" rev-parse --short HEAD 2>/dev/null)," \
    "$(nproc) cores, load average at start: $(cut -d' ' -f1-3 /proc/loadavg)"
[ -z "${COMPARE_TOML:-}" ] || echo "CipherMQ config added: $(echo "$COMPARE_TOML" | tr '\n' ' ')"

# --- RabbitMQ from Debian, and the C client library -------------------------------------------
if [ ! -x /usr/lib/rabbitmq/bin/rabbitmq-server ] || [ ! -f /usr/include/amqp_ssl_socket.h ]; then
    if [ "$(id -u)" != 0 ]; then
        echo "compare.sh: needs rabbitmq-server and librabbitmq-dev; run as root to install" >&2
        exit 1
    fi
    echo "installing rabbitmq-server and librabbitmq-dev (Debian packages)"
    DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends \
        rabbitmq-server librabbitmq-dev >"$work/apt.log" 2>&1 || { cat "$work/apt.log"; exit 1; }
fi
# The package's own service listens on 5672 on every interface with the default guest user:
# it must not run. Our node below has its own config and ports.
if [ -d /run/systemd/system ]; then
    systemctl disable --now rabbitmq-server >/dev/null 2>&1 || true
elif pgrep -u rabbitmq -x beam.smp >/dev/null 2>&1; then
    service rabbitmq-server stop >/dev/null 2>&1 || true
fi
[ -d /run/systemd/system ] || update-rc.d rabbitmq-server disable >/dev/null 2>&1 || true

# shellcheck disable=SC2046 # pkg-config's flags are words
cc -O2 -Wall -Wextra -std=c11 -o "$work/rabbitmq-load" "$root/bench/rabbitmq-load.c" \
    $(pkg-config --cflags --libs librabbitmq 2>/dev/null || echo -lrabbitmq) -lpthread

# --- CipherMQ: certificates, PostgreSQL, two brokers (bench/common.sh) ------------------------
source "$root/bench/common.sh" # makes $work/certs, $port, start_pg, write_config, cleanup
free_port() {
    python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'
}
declare -A broker_port broker_pids
rmq_pid=""
export ERL_EPMD_PORT ERL_EPMD_ADDRESS=127.0.0.1
ERL_EPMD_PORT=$(free_port)
pg_datadir=""
logs_kept=${COMPARE_LOGS:-/tmp/cmq-compare-logs.$(date -u +%Y%m%dT%H%M%S)}
keep_logs() {
    mkdir -p "$logs_kept" || return 0
    local driver
    for driver in postgresql sqlite; do
        [ -d "$work/$driver" ] || continue
        mkdir -p "$logs_kept/$driver"
        cp -r "$work/$driver/broker.log" "$work/$driver/logs" "$logs_kept/$driver/" 2>/dev/null || true
    done
    [ -z "${pg_datadir:-}" ] || cp "$pg_datadir/server.log" "$logs_kept/postgresql-server.log" 2>/dev/null || true
    cp -r "$work/rabbitmq/log" "$logs_kept/rabbitmq" 2>/dev/null || true
    cp "$work/results.jsonl" "$logs_kept/" 2>/dev/null || true
    echo "compare.sh: logs and per-run results kept in $logs_kept" >&2
}
compare_cleanup() {
    keep_logs
    for pid in "${broker_pids[@]}"; do kill "$pid" 2>/dev/null && wait "$pid" 2>/dev/null || true; done
    if [ -n "$rmq_pid" ]; then
        kill "$rmq_pid" 2>/dev/null && wait "$rmq_pid" 2>/dev/null || true
    fi
    epmd -kill >/dev/null 2>&1 || true # ours: ERL_EPMD_PORT is this run's port
    cleanup
}
trap compare_cleanup EXIT

PG_EXTRA="-c log_min_duration_statement=100 -c log_checkpoints=on \
-c log_autovacuum_min_duration=0 ${PG_EXTRA:-}" start_pg
pg_datadir=$(cat "$work/pg/datadir")
for driver in postgresql sqlite; do
    port=$(free_port)
    broker_port[$driver]=$port
    write_config "$driver" warn "${COMPARE_TOML:-}"
    mkdir -p "$work/$driver"
    sed -e "s#$work/logs/#$work/$driver/logs/#" -e "s#$work/data/#$work/$driver/data/#" \
        "$work/config.toml" >"$work/$driver/config.toml"
    "$build/broker/ciphermq-broker" --config "$work/$driver/config.toml" >"$work/$driver/broker.log" 2>&1 &
    broker_pids[$driver]=$!
done

# --- RabbitMQ: a node of our own -----------------------------------------------------------------
rmq=$work/rabbitmq
rmq_port=$(free_port)
dist_port=$(free_port)
mkdir -p "$rmq/log"
: >"$rmq/rabbitmq-env.conf"
echo '[rabbitmq_auth_mechanism_ssl].' >"$rmq/enabled_plugins"
cat >"$rmq/definitions.json" <<JSON
{"vhosts": [{"name": "/"}],
 "users": [
  {"name": "sender_1", "password_hash": "", "hashing_algorithm": "rabbit_password_hashing_sha256", "tags": []},
  {"name": "receiver_1", "password_hash": "", "hashing_algorithm": "rabbit_password_hashing_sha256", "tags": []}],
 "permissions": [
  {"user": "sender_1", "vhost": "/", "configure": ".*", "write": ".*", "read": ".*"},
  {"user": "receiver_1", "vhost": "/", "configure": ".*", "write": ".*", "read": ".*"}]}
JSON
cat >"$rmq/rabbitmq.conf" <<CONF
listeners.tcp = none
listeners.ssl.default = 127.0.0.1:$rmq_port
ssl_options.cacertfile = $work/certs/ca.crt
ssl_options.certfile = $work/certs/server.crt
ssl_options.keyfile = $work/certs/server.key
ssl_options.verify = verify_peer
ssl_options.fail_if_no_peer_cert = true
ssl_options.versions.1 = tlsv1.3
ssl_options.versions.2 = tlsv1.2
auth_mechanisms.1 = EXTERNAL
ssl_cert_login_from = common_name
load_definitions = $rmq/definitions.json
log.console = false
log.file = $rmq/log/rabbit.log
log.file.level = warning
disk_free_limit.absolute = 100MB
CONF
(
    export HOME=$rmq RABBITMQ_CONF_ENV_FILE=$rmq/rabbitmq-env.conf \
        RABBITMQ_NODENAME=cmqcompare$$@localhost RABBITMQ_CONFIG_FILE=$rmq/rabbitmq.conf \
        RABBITMQ_ADVANCED_CONFIG_FILE=$rmq/advanced.config \
        RABBITMQ_ENABLED_PLUGINS_FILE=$rmq/enabled_plugins RABBITMQ_MNESIA_BASE=$rmq/mnesia \
        RABBITMQ_LOG_BASE=$rmq/log RABBITMQ_PID_FILE=$rmq/pid RABBITMQ_DIST_PORT=$dist_port \
        RABBITMQ_SERVER_ADDITIONAL_ERL_ARGS="-kernel inet_dist_use_interface {127,0,0,1}"
    exec /usr/lib/rabbitmq/bin/rabbitmq-server
) >"$rmq/server.out" 2>&1 &
rmq_pid=$!

listening() { (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null; }
wait_listening() { # NAME PORT PID
    for _ in $(seq 1200); do
        listening "$2" && return 0
        kill -0 "$3" 2>/dev/null || break
        sleep 0.1
    done
    echo "compare.sh: $1 did not start; its output:" >&2
    cat "$work/$1/broker.log" "$rmq/server.out" "$rmq/log/rabbit.log" 2>/dev/null | tail -30 >&2
    exit 1
}
wait_listening postgresql "${broker_port[postgresql]}" "${broker_pids[postgresql]}"
wait_listening sqlite "${broker_port[sqlite]}" "${broker_pids[sqlite]}"
wait_listening rabbitmq "$rmq_port" "$rmq_pid"
echo "servers up after $(($(date +%s) - started)) s: RabbitMQ $(dpkg-query -W -f '${Version}' rabbitmq-server)" \
    "on 127.0.0.1:$rmq_port, CipherMQ on ${broker_port[postgresql]} (PostgreSQL) and ${broker_port[sqlite]} (SQLite)"

# --- Runs -------------------------------------------------------------------------------------------
# CPU clock ticks of a process and all its descendants: each live one's own (utime, stime) and
# what its exited children had (cutime, cstime), so a PostgreSQL backend or autovacuum worker
# that ends during a run still counts (without them a run could come out negative).
tree_ticks() {
    local total=0 pid child
    for pid in "$@"; do
        [ -r "/proc/$pid/stat" ] || continue
        total=$((total + $(sed -E 's/^.*\) //' "/proc/$pid/stat" | cut -d' ' -f12-15 | tr ' ' '+')))
        for child in $(pgrep -P "$pid" 2>/dev/null); do total=$((total + $(tree_ticks "$child"))); done
    done
    echo "$total"
}
server_pids() {
    case $1 in
        rabbitmq) echo "$rmq_pid" ;;
        postgresql) echo "${broker_pids[postgresql]} $(head -1 "$pg_datadir/postmaster.pid")" ;;
        sqlite) echo "${broker_pids[sqlite]}" ;;
    esac
}
results=$work/results.jsonl
TIMEFORMAT='%U %S %R'
# Before each run: PostgreSQL finishes what earlier runs left it (dirty pages to write, an
# autovacuum of the tables they filled), so that work does not land in the next run, which may
# be another system's: once the 1,000 msg/s row on SQLite had a p99 of 69 ms, and a PostgreSQL
# drain ran at 1,230 msg/s, while the server caught up with the rows before (bench/README.md).
settle_postgres() {
    local conn="host=127.0.0.1 port=$pg_port user=postgres dbname=postgres" waited=0
    psql "$conn" -qc "CHECKPOINT" >/dev/null 2>&1 || return 0
    while [ "$(psql "$conn" -Atc "SELECT count(*) FROM pg_stat_activity
                                   WHERE backend_type = 'autovacuum worker'" 2>/dev/null)" != 0 ] &&
        [ $waited -lt 60 ]; do
        sleep 0.5
        waited=$((waited + 1))
    done
}
# The machine's CPU time so far: "<stolen> <total>" clock ticks of all CPUs (/proc/stat). On a
# virtual machine the hypervisor's share ("steal") goes to other guests; 64 × W=1 on SQLite ran at
# 8,300 msg/s with 27% stolen and 15,700 with none, the same build minutes apart
# (bench/README.md, "What made 64 × W=1 bimodal"), so every run reports it.
cpu_ticks() {
    awk '/^cpu / { print $9, $2 + $3 + $4 + $5 + $6 + $7 + $8 + $9 }' /proc/stat
}
run_one() { # ROW SYSTEM ARGS...: one run; appends its JSON line (with CPU figures) to $results
    local row=$1 system=$2
    shift 2
    local before after out=$work/out.json stolen_before stolen_after
    settle_postgres
    local started_at
    started_at=$(date -u '+%F %T')
    # shellcheck disable=SC2046
    before=$(tree_ticks $(server_pids "$system"))
    stolen_before=$(cpu_ticks)
    if [ "$system" = rabbitmq ]; then
        { time "$work/rabbitmq-load" --host localhost --port "$rmq_port" --certs "$work/certs" --json "$@" \
            >"$out" 2>"$work/run.err"; } 2>"$work/time" || true
    else
        { time "$build/bench/ciphermq-bench" --certs "$work/certs" \
            --broker "127.0.0.1:${broker_port[$system]}" --json "$@" \
            >"$out" 2>"$work/run.err"; } 2>"$work/time" || true
    fi
    # shellcheck disable=SC2046
    after=$(tree_ticks $(server_pids "$system"))
    stolen_after=$(cpu_ticks)
    if ! tail -1 "$out" | grep -q '^{'; then
        echo "{}" >"$out"
    fi
    # Warnings (refused publishes, connection errors) go with the run they belong to.
    sort "$work/run.err" | uniq -c | sort -rn | head -5 | sed "s/^/    $row $system stderr: /" >&2
    python3 - "$row" "$system" "$out" "$work/time" "$((after - before))" "$(getconf CLK_TCK)" \
        "$stolen_before" "$stolen_after" "$started_at" "$(date -u '+%F %T')" >>"$results" <<'PY'
import json, sys
row, system, out, timef, ticks, hz, stolen_before, stolen_after, started_at, ended_at = sys.argv[1:]
r = json.loads(open(out).read().strip().splitlines()[-1] or "{}")
user, sys_, real = (float(x) for x in open(timef).read().split()[-3:])
n = max(r.get("confirmed", 0), r.get("delivered", 0)) or 1
r.update(row=row, system=system, client_cpu_pct=round(100 * (user + sys_) / real, 1),
         client_us_per_msg=round((user + sys_) * 1e6 / n, 1),
         server_us_per_msg=round(int(ticks) / int(hz) * 1e6 / n, 1))
(s0, t0), (s1, t1) = (map(int, x.split()) for x in (stolen_before, stolen_after))
r["steal_pct"] = round(100 * (s1 - s0) / (t1 - t0), 1) if t1 > t0 else 0
r.update(started_at=started_at, ended_at=ended_at) # UTC, to match the servers' logs
print(json.dumps(r))
PY
    tail -1 "$results" | python3 -c '
import json, sys
r = json.loads(sys.stdin.read())
print("  %-9s %-10s publish %6s msg/s  deliver %6s  drain %6s  confirm p50/p99 %s/%s ms  "
      "e2e p50/p99/p99.9 %s/%s/%s ms  client CPU %s%% (%s us/msg)  server %s us/msg  "
      "steal %s%%" % (
      r["row"], r["system"], r.get("publish_rate"), r.get("deliver_rate"), r.get("drain_rate"),
      r.get("confirm_p50_ms"), r.get("confirm_p99_ms"), r.get("e2e_p50_ms"), r.get("e2e_p99_ms"),
      r.get("e2e_p999_ms"), r["client_cpu_pct"], r["client_us_per_msg"], r["server_us_per_msg"],
      r["steal_pct"]))'
}

systems="rabbitmq postgresql sqlite"
only=${COMPARE_ROWS:-w256 w1 p64w1 rate1000 drain} # e.g. COMPARE_ROWS=rate1000 for one row
run() { [[ " $only " == *" $1 "* ]] && run_one "$@" || true; }
echo "== runs (${seconds}s each, the three systems alternately; 1 KB payload = 1,024 bytes before base64)"
repeat=${COMPARE_REPEAT:-1}
each() { # ROW ARGS...: the row on the three systems alternately, COMPARE_REPEAT rounds
    local row=$1 round system
    shift
    for round in $(seq "$repeat"); do
        for system in $systems; do run "$row" "$system" "$@"; done
    done
}
each w256 -p 1 -w 256 -s 1024 -d "$seconds"
each w1 -p 1 -w 1 -s 1024 -d "$seconds"
each p64w1 -p 64 -w 1 -s 1024 -d "$seconds"
each rate1000 -p 1 -w 256 -s 1024 --rate 1000 -d "$seconds"
each drain -p 1 -w 256 -s 1024 --backlog "$backlog"

echo "== ratios (CipherMQ / RabbitMQ from this run; load average at end: $(cut -d' ' -f1-3 /proc/loadavg)," \
    "$(($(date +%s) - started)) s in all)"
python3 - "$results" "$backlog" <<'PY'
import json, statistics, sys
# Each (row, system)'s runs in the order they ran; with COMPARE_REPEAT rounds a figure is the
# median of its runs, and a ratio also shows its range over the rounds (round i's CipherMQ run
# against round i's RabbitMQ run, which ran next to it).
runs = {}
for line in open(sys.argv[1]):
    r = json.loads(line)
    runs.setdefault((r["row"], r["system"]), []).append(r)
def values(row, system, key):
    return [r.get(key) or 0 for r in runs.get((row, system), [])]
def get(row, system, key):
    found = [v for v in values(row, system, key) if v]
    if not found:
        return 0
    m = statistics.median(found)
    return round(m) if m >= 100 else round(m, 3) # msg/s as whole numbers, ms as measured
def ratio(a, b, each=()):
    if not (a and b):
        return "—"
    spread = [x / y for x, y in each if x and y]
    if len(spread) < 2:
        return "%.2f×" % (a / b)
    return "%.2f× (%.2f–%.2f)" % (a / b, min(spread), max(spread))
def rounds(row, system, key, base_row=None, base_system="rabbitmq", base_key=None):
    return list(zip(values(row, system, key),
                    values(base_row or row, base_system, base_key or key)))
print("| row | RabbitMQ | CipherMQ PostgreSQL | ratio | CipherMQ SQLite | ratio | target |")
print("|---|---|---|---|---|---|---|")
def rate_row(label, row, key, target):
    rmq, pg, sq = (get(row, s, key) for s in ("rabbitmq", "postgresql", "sqlite"))
    print("| %s | %s | %s | %s | %s | %s | %s |" % (label, rmq, pg,
          ratio(pg, rmq, rounds(row, "postgresql", key)), sq,
          ratio(sq, rmq, rounds(row, "sqlite", key)), target))
rate_row("W=256 publish→confirm msg/s", "w256", "publish_rate", "PG ≥ 2.5×, SQLite ≥ 3×")
rate_row("W=1 publish→confirm msg/s (1 publisher)", "w1", "publish_rate", "≥ 1.2×")
rate_row("64 publishers × W=1 msg/s", "p64w1", "publish_rate", "≥ 70% of own W=256")
own = lambda row, key, s: ratio(get(row, s, key), get("w256", s, "publish_rate"),
                                rounds(row, s, key, "w256", s, "publish_rate"))
print("| 64 × W=1 as share of own W=256 | %s | %s | | %s | | ≥ 0.70× |" % (
      own("p64w1", "publish_rate", "rabbitmq"), own("p64w1", "publish_rate", "postgresql"),
      own("p64w1", "publish_rate", "sqlite")))
for pct, key in (("p50", "e2e_p50_ms"), ("p99", "e2e_p99_ms")):
    rmq, pg, sq = (get("rate1000", s, key) for s in ("rabbitmq", "postgresql", "sqlite"))
    target = "≤ 1 ms" if pct == "p50" else "≤ 3 ms"
    print("| end-to-end %s at 1,000 msg/s, ms (ratio: lower is better) | %s | %s | %s | %s | %s | %s |"
          % (pct, rmq, pg, ratio(pg, rmq, rounds("rate1000", "postgresql", key)), sq,
             ratio(sq, rmq, rounds("rate1000", "sqlite", key)), target))
rate_row("drain of a %s backlog msg/s" % sys.argv[2], "drain", "drain_rate",
         "≥ own W=256 rate")
print("| drain as share of own W=256 | %s | %s | | %s | | ≥ 1.00× |" % (
      own("drain", "drain_rate", "rabbitmq"), own("drain", "drain_rate", "postgresql"),
      own("drain", "drain_rate", "sqlite")))
print("| load generator CPU, W=256 (%% of one core) | %s | %s | | %s | | not the bottleneck |" % tuple(
      get("w256", s, "client_cpu_pct") for s in ("rabbitmq", "postgresql", "sqlite")))
print("| server CPU per message, W=256 (µs) | %s | %s | | %s | | |" % tuple(
      get("w256", s, "server_us_per_msg") for s in ("rabbitmq", "postgresql", "sqlite")))
# A row whose runs lost CPU to the hypervisor compares machines, not brokers.
print("| CPU stolen by the hypervisor, most in any row's run (%%) | %s | %s | | %s | | near 0 |" % tuple(
      max([r.get("steal_pct", 0) for (_, system), rs in runs.items() if system == s for r in rs],
          default=0)
      for s in ("rabbitmq", "postgresql", "sqlite")))
PY
