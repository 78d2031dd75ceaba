#!/usr/bin/env bash
# A throwaway PostgreSQL server for the test suite: its own data directory, a free port,
# removed by `stop`. Used as a CTest fixture; writes a libpq-style connection line to
# <dir>/connection for the tests to read.
#   postgres.sh start DIR   |   postgres.sh stop DIR   |   postgres.sh restart DIR
#   postgres.sh stop-server DIR | postgres.sh start-server DIR  (an outage: keeps data and port)
#   postgres.sh crash-server DIR  (an immediate stop, as a crash: no checkpoint, backends killed)
set -euo pipefail
action=${1:?start|stop}
dir=${2:?directory}

pgbin=$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -n 1)
[ -x "$pgbin/initdb" ] || { echo "postgres.sh: PostgreSQL server binaries not found (apt-get install postgresql)" >&2; exit 1; }

# PostgreSQL refuses to run as root; run it as the postgres system user then.
as_db_user() {
    if [ "$(id -u)" = 0 ]; then runuser -u postgres -- "$@"; else "$@"; fi
}

free_port() {
    python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'
}

start_server() {
    as_db_user "$pgbin/pg_ctl" -D "$1" -l "$1/server.log" -w -t 60 \
        -o "-p $2 -k $1 -c listen_addresses=127.0.0.1 -c max_connections=200 -c fsync=on ${PG_EXTRA:-}" start >/dev/null
}

case "$action" in
start)
    "$0" stop "$dir" >/dev/null 2>&1 || true
    mkdir -p "$dir"
    data=$(mktemp -d /tmp/cmq-pg.XXXXXX)
    [ "$(id -u)" = 0 ] && chown postgres: "$data"
    echo "$data" > "$dir/datadir"
    as_db_user "$pgbin/initdb" -D "$data" -U postgres --auth=trust -E UTF8 >"$dir/initdb.log" 2>&1
    for attempt in 1 2 3 4 5; do
        port=$(free_port)
        if start_server "$data" "$port"; then
            echo "host=127.0.0.1 port=$port user=postgres dbname=postgres" > "$dir/connection"
            echo "PostgreSQL running on 127.0.0.1:$port (data in $data)"
            exit 0
        fi
    done
    cat "$data/server.log" >&2 || true
    exit 1
    ;;
stop)
    [ -f "$dir/datadir" ] || exit 0
    data=$(cat "$dir/datadir")
    as_db_user "$pgbin/pg_ctl" -D "$data" -m fast -w stop >/dev/null 2>&1 || true
    rm -rf "$data" "$dir/datadir" "$dir/connection"
    ;;
restart)
    data=$(cat "$dir/datadir")
    as_db_user "$pgbin/pg_ctl" -D "$data" -m fast -w restart >/dev/null
    ;;
stop-server)
    data=$(cat "$dir/datadir")
    as_db_user "$pgbin/pg_ctl" -D "$data" -m fast -w stop >/dev/null
    ;;
crash-server)
    data=$(cat "$dir/datadir")
    as_db_user "$pgbin/pg_ctl" -D "$data" -m immediate -w stop >/dev/null
    ;;
start-server)
    data=$(cat "$dir/datadir")
    port=$(sed -n 's/.*port=\([0-9]*\).*/\1/p' "$dir/connection")
    start_server "$data" "$port" || { cat "$data/server.log" >&2; exit 1; }
    ;;
*) echo "usage: postgres.sh start|stop|restart|stop-server|crash-server|start-server DIR" >&2; exit 2 ;;
esac
