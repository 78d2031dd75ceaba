#!/usr/bin/env bash
# The fencing trigger's cost on publish throughput (bench/README.md, "Fencing cost"): the
# PostgreSQL rows of bench/run.sh (one publisher and one consumer of ciphermq-bench, 1 KB
# envelopes, windows 256 and 1) against two databases on one throwaway server, one as the
# migrations leave it (the ciphermq_fence triggers on every table the broker writes) and one
# with those triggers dropped after the broker created them; alternately, ROUNDS times.
#   bench/fence-cost.sh [BUILD_DIR] [SECONDS=20] [ROUNDS=2]
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=$(cd "${1:-$root/build}" && pwd)
seconds=${2:-20}
rounds=${3:-2}
work=$(mktemp -d /tmp/cmq-fence.XXXXXX)
dbname=fence_on
source "$root/bench/common.sh"
start_pg
on_db() { psql "host=127.0.0.1 port=$pg_port user=postgres dbname=$1" -qtAc "$2"; }
on_db postgres "CREATE DATABASE fence_off" >/dev/null

for ((round = 1; round <= rounds; round++)); do
    for fence in on off; do
        dbname=fence_$fence write_config postgresql warn
        run_broker
        if [ "$fence" = off ]; then
            for table in $(on_db fence_off "SELECT DISTINCT event_object_table FROM
                    information_schema.triggers WHERE trigger_name = 'ciphermq_fence'"); do
                on_db fence_off "DROP TRIGGER ciphermq_fence ON $table"
            done
        fi
        triggers=$(on_db "fence_$fence" "SELECT count(*) FROM information_schema.triggers
                   WHERE trigger_name = 'ciphermq_fence'")
        for window in 256 1; do
            echo "== round $round, fence $fence ($triggers trigger events), window $window, ${seconds}s"
            "$build/bench/ciphermq-bench" --certs "$work/certs" --broker "127.0.0.1:$port" \
                --window "$window" --duration "$seconds" --broker-pid "$broker_pid" || true
        done
        stop_broker
    done
done
