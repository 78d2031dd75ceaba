#!/usr/bin/env bash
# Publish rate through a topic exchange holding 10 bindings and holding 100,000 (bench/README.md,
# "Topic routing"). The bindings other than the bench's own are written straight into the
# broker's tables (what 100,000 bind requests would have stored: patterns with `*` and `#`
# after each receiver's own first word), then the broker is started and ciphermq-bench runs
# 1 publisher + 1 consumer through the exchange (--topic). The two sizes alternate, ROUNDS
# times each, so the shared machine's drift hits both alike.
#   bench/topic.sh [BUILD_DIR] [SECONDS] [ROUNDS] [sqlite|postgresql]
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=$(cd "${1:-$root/build}" && pwd)
seconds=${2:-8}
rounds=${3:-3}
driver=${4:-sqlite}
work=$(mktemp -d /tmp/cmq-topic.XXXXXX)
dbname=topics
source "$root/bench/common.sh"
if [ "$driver" = sqlite ]; then pg_port=5432; else start_pg; fi # the port is unused on SQLite

# seed_sql N NOW: the exchange, a filler queue and N-1 bindings of three shapes; the bench
# binds the N-th.
seed_sql() {
    local n=$(($1 - 1)) now=$2
    cat <<SQL
INSERT INTO exchanges (name, type, creator, created_at) VALUES ('bench_topics', 'topic', 'receiver_1', $now);
INSERT INTO queues (name, owner, created_at) VALUES ('receiver_1_filler', 'receiver_1', $now);
WITH RECURSIVE g(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM g WHERE i < $n)
  INSERT INTO bindings (queue, exchange, routing_key)
  SELECT 'receiver_1_filler', 'bench_topics', 'receiver_1_f' || i ||
         CASE i % 3 WHEN 0 THEN '.*.eu' WHEN 1 THEN '.#' ELSE '.orders.#.eu' END FROM g;
SQL
}

fresh_database() { # N
    rm -rf "$work/data"
    if [ "$driver" = sqlite ]; then
        run_broker && stop_broker # creates the schema
        seed_sql "$1" "strftime('%Y-%m-%dT%H:%M:%fZ')" | sqlite3 "$work/data/ciphermq.db"
        stored=$(sqlite3 "$work/data/ciphermq.db" "SELECT COUNT(*) FROM bindings")
    else
        local pg="host=127.0.0.1 port=$pg_port user=postgres"
        psql "$pg dbname=postgres" -qc "DROP DATABASE IF EXISTS $dbname" -c "CREATE DATABASE $dbname"
        run_broker && stop_broker
        seed_sql "$1" "now()" | psql "$pg dbname=$dbname" -q
        stored=$(psql "$pg dbname=$dbname" -Atc "SELECT COUNT(*) FROM bindings")
    fi
}

write_config "$driver" warn "[performance]
max_bindings_per_cn = 1000000"
declare -A rates
for round in $(seq "$rounds"); do
    for n in 10 100000; do
        fresh_database "$n"
        run_broker
        line=$("$build/bench/ciphermq-bench" --certs "$work/certs" --broker "127.0.0.1:$port" \
            -d "$seconds" --topic --broker-pid "$broker_pid" --json)
        rss=$(awk '/VmRSS/ {printf "%.0f", $2 / 1024}' "/proc/$broker_pid/status")
        stop_broker
        rate=$(python3 -c 'import json,sys; print(round(json.loads(sys.argv[1])["publish_rate"]))' "$line")
        rates[$n]="${rates[$n]:-} $rate"
        echo "round $round, $stored bindings stored (+1 the bench's): $rate msg/s published (broker RSS ${rss} MB)"
    done
done
python3 - "${rates[10]}" "${rates[100000]}" <<'PY'
import statistics, sys
small, large = ([float(x) for x in a.split()] for a in sys.argv[1:3])
s, l = statistics.median(small), statistics.median(large)
print(f"median: 10 bindings {s:.0f} msg/s, 100,000 bindings {l:.0f} msg/s: {100 * l / s:.1f}% of it")
PY
