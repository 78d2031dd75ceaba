#!/usr/bin/env bash
# A throwaway PostgreSQL server for the test suite: its own data directory, a free port,
# removed by `stop`. Used as a CTest fixture; writes a libpq-style connection line to
# <dir>/connection for the tests to read.
#   postgres.sh start DIR   |   postgres.sh stop DIR   |   postgres.sh restart DIR
#   postgres.sh stop-server DIR | postgres.sh start-server DIR  (an outage: keeps data and port)
#   postgres.sh crash-server DIR  (an immediate stop, as a crash: no checkpoint, backends killed)
#   postgres.sh start-standby DIR  (after start: a streaming standby made by pg_basebackup -R on
#       a free port, <dir>/standby-connection; the primary then commits synchronously to it)
#   postgres.sh promote-standby DIR  (pg_ctl promote: the standby becomes a primary)
#   postgres.sh swap-roles DIR  (after the primary died and the standby was promoted: the
#       promoted one is the primary of DIR from now on, the dead one's data is removed; then
#       STANDBY_PORT=<its old port> postgres.sh start-standby DIR makes a new standby there)
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
start-standby)
    data=$(cat "$dir/datadir")
    primary_port=$(sed -n 's/.*port=\([0-9]*\).*/\1/p' "$dir/connection")
    standby=$(mktemp -d /tmp/cmq-pg-standby.XXXXXX)
    [ "$(id -u)" = 0 ] && chown postgres: "$standby"
    echo "$standby" > "$dir/standby-datadir"
    as_db_user "$pgbin/pg_basebackup" -h 127.0.0.1 -p "$primary_port" -U postgres -D "$standby" \
        -R -X stream -c fast >"$dir/basebackup.log" 2>&1
    # Set after the copy, so that the promoted standby does not wait for a standby of its own.
    psql_primary() { as_db_user "$pgbin/psql" -X -q -t -A -h 127.0.0.1 -p "$primary_port" -U postgres -d postgres -c "$1"; }
    psql_primary "ALTER SYSTEM SET synchronous_standby_names = '*'" >/dev/null
    psql_primary "ALTER SYSTEM SET synchronous_commit = on" >/dev/null
    psql_primary "SELECT pg_reload_conf()" >/dev/null
    started=""
    for attempt in 1 2 3 4 5; do
        port=${STANDBY_PORT:-$(free_port)}
        if start_server "$standby" "$port"; then started=$port; break; fi
    done
    [ -n "$started" ] || { cat "$standby/server.log" >&2 || true; exit 1; }
    echo "host=127.0.0.1 port=$started user=postgres dbname=postgres" > "$dir/standby-connection"
    # Ready once the primary counts it as its synchronous standby (60 s deadline).
    for attempt in $(seq 1 600); do
        [ "$(psql_primary "SELECT count(*) FROM pg_stat_replication WHERE sync_state = 'sync'")" = 1 ] && {
            echo "PostgreSQL standby running on 127.0.0.1:$started (data in $standby)"; exit 0; }
        sleep 0.1
    done
    echo "postgres.sh: the standby did not become synchronous" >&2
    cat "$standby/server.log" >&2 || true
    exit 1
    ;;
swap-roles)
    old=$(cat "$dir/datadir")
    as_db_user "$pgbin/pg_ctl" -D "$old" -m immediate -w stop >/dev/null 2>&1 || true
    rm -rf "$old"
    mv "$dir/standby-datadir" "$dir/datadir"
    mv "$dir/standby-connection" "$dir/connection"
    ;;
promote-standby)
    as_db_user "$pgbin/pg_ctl" -D "$(cat "$dir/standby-datadir")" -w -t 60 promote >/dev/null
    ;;
stop)
    if [ -f "$dir/standby-datadir" ]; then
        standby=$(cat "$dir/standby-datadir")
        as_db_user "$pgbin/pg_ctl" -D "$standby" -m immediate -w stop >/dev/null 2>&1 || true
        rm -rf "$standby" "$dir/standby-datadir" "$dir/standby-connection"
    fi
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
*) echo "usage: postgres.sh start|stop|restart|stop-server|crash-server|start-server|start-standby|promote-standby DIR" >&2; exit 2 ;;
esac
