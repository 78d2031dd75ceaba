#!/usr/bin/env bash
# High-availability soak with a history checker (bench/README.md, "High-availability soak");
# not a CI test. Follows docs/OPERATIONS.md's "High availability" chapter step by step:
#
#   1. a PostgreSQL primary and a synchronous streaming standby (tests/support/postgres.sh
#      start + start-standby: pg_basebackup -R, synchronous_standby_names, synchronous_commit);
#   2. two broker nodes a and b with the same [database], listing both PostgreSQL servers
#      (database.host/port arrays), each with a [cluster] section of its own;
#   3. clients listing both nodes: SOAK_PUBLISHERS publishers and SOAK_CONSUMERS consumers of
#      bench/soak.py, which record every SENT/ACK/ERR/DELIVER in history files;
#   4. ROUNDS rounds of faults, in turn:
#        kill    kill -9 of the active node (restarted: it comes back as a standby)
#        freeze  SIGSTOP of the active past the lease, SIGCONT once the other node took over
#        pg      PostgreSQL failover: the primary dies (pg_ctl stop -m immediate), the standby
#                is promoted (pg_ctl promote); a new standby is then made from it on the old
#                port (the brokers' host lists stay as they are)
#        partition  where network namespaces can be made (root): each node runs in one of its
#                own, joined to the host by a veth pair with private addresses (10.214.N.1/.2
#                and .5/.6, nothing else); the active node's link goes down until the other
#                node took over, then up again
#      waiting after each for an active node again (with a deadline);
#   5. the publishers drain, and soak.py check reads every history:
#        acknowledged but never delivered (must be 0), duplicates (a figure: at least once).
#
#   bench/ha-soak.sh [BUILD_DIR] [ROUNDS=24]     SOAK_PARTITION=off: no namespaces
# Results: $SOAK_OUT (default build-ha-soak)/result.json, rounds.log and the histories.
# bench/soak.py has no heartbeat: a client of a cut-off node waits until the link is back (the
# old node then resets the connection) and moves on; the client library would move sooner.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=$(cd "${1:-$root/build}" && pwd)
rounds=${2:-24}
publishers=${SOAK_PUBLISHERS:-2}
consumers=${SOAK_CONSUMERS:-2}
rate=${SOAK_RATE:-100}
drain=${SOAK_DRAIN:-120}
lease_ms=${SOAK_LEASE_MS:-3000}
out=${SOAK_OUT:-$root/build-ha-soak}
broker_bin=$build/broker/ciphermq-broker
[ -x "$broker_bin" ] || { echo "ha-soak.sh: $broker_bin not built" >&2; exit 1; }
work=$(mktemp -d /tmp/cmq-ha-soak.XXXXXX)
dbname=hasoak
client_pids=()
declare -A node_pid=() node_port=() node_addr=([a]=127.0.0.1 [b]=127.0.0.1)
declare -A db_addr=([a]=127.0.0.1 [b]=127.0.0.1) host_if=() netns=()
source "$root/bench/common.sh"
remove_namespaces() {
    for n in "${!netns[@]}"; do
        ip link del "${host_if[$n]}" 2>/dev/null || true
        ip netns del "${netns[$n]}" 2>/dev/null || true
    done
}
# Every step may fail (a process already gone) without ending the trap early under set -e.
stop_everything() {
    for p in "${client_pids[@]}" "${node_pid[@]}"; do
        kill -CONT "$p" 2>/dev/null || true
        kill -9 "$p" 2>/dev/null || true
    done
    cleanup || true
    remove_namespaces
}
trap stop_everything EXIT
rm -rf "$out"
mkdir -p "$out"
soak=(python3 "$root/bench/soak.py")
pgscript=(bash "$root/tests/support/postgres.sh")
log() { echo "[$(date +%T)] $*" | tee -a "$out/rounds.log"; }

# 0. Where namespaces can be made: one per node, and PostgreSQL listening on their host ends.
partitions=0
if [ "${SOAK_PARTITION:-on}" != off ] && ip netns add "cmqsoak-probe-$$" 2>/dev/null; then
    ip netns del "cmqsoak-probe-$$"
    partitions=1
    net=$(($$ % 250 + 1))
    offset=0
    for n in a b; do
        netns[$n]=cmqsoak-$n-$$
        host_if[$n]=cmqs$n$(($$ % 100000))
        db_addr[$n]=10.214.$net.$((offset + 1))
        node_addr[$n]=10.214.$net.$((offset + 2))
        offset=$((offset + 4))
        ip netns add "${netns[$n]}"
        ip link add "${host_if[$n]}" type veth peer name "${host_if[$n]}n"
        ip link set "${host_if[$n]}n" netns "${netns[$n]}"
        ip addr add "${db_addr[$n]}/30" dev "${host_if[$n]}"
        ip link set "${host_if[$n]}" up
        ip -n "${netns[$n]}" addr add "${node_addr[$n]}/30" dev "${host_if[$n]}n"
        ip -n "${netns[$n]}" link set "${host_if[$n]}n" up
        ip -n "${netns[$n]}" link set lo up
    done
    export PG_EXTRA="-c listen_addresses=127.0.0.1,${db_addr[a]},${db_addr[b]}"
fi

# 1. PostgreSQL: primary and synchronous standby.
start_pg
if ((partitions)); then
    # Copied to every standby by pg_basebackup.
    echo "host all all 10.214.$net.0/29 trust" >>"$(cat "$work/pg/datadir")/pg_hba.conf"
    psql "host=127.0.0.1 port=$pg_port user=postgres dbname=postgres" -qtAc "SELECT pg_reload_conf()" >/dev/null
fi
"${pgscript[@]}" start-standby "$work/pg" >/dev/null
pg_primary=$pg_port
pg_standby=$(sed -E 's/.*port=([0-9]+).*/\1/' <"$work/pg/standby-connection")
pg_list="host=127.0.0.1,127.0.0.1 port=$pg_primary,$pg_standby user=postgres dbname=$dbname"
pg_list+=" target_session_attrs=read-write connect_timeout=2"
sql() { psql "$pg_list" -XqtAc "$1" 2>/dev/null || true; }

# 2. Two broker nodes.
free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }
node_port[a]=$port
node_port[b]=$(free_port)
write_config postgresql info "[performance]
max_queue_size = 1000000
[cluster]
node_id = \"NODE\"
client_address = \"127.0.0.1:PORT\"
lease_ms = $lease_ms
poll_ms = $((lease_ms / 10))"
for n in a b; do
    # Restarting as a standby while cut off: keep trying until the link is back.
    sed -e "s/^host = .*/host = [\"${db_addr[$n]}\", \"${db_addr[$n]}\"]/" \
        -e "s/^port = .*/port = [$pg_primary, $pg_standby]\nconnect_attempts = 1000\nconnect_retry_delay_ms = 500/" \
        -e "s/127.0.0.1:$port/${node_addr[$n]}:${node_port[$n]}/" \
        -e "s/127.0.0.1:PORT/${node_addr[$n]}:${node_port[$n]}/" -e "s/\"NODE\"/\"$n\"/" \
        -e "s#$work/logs/#$work/logs-$n/#" \
        "$work/config.toml" >"$work/$n.toml"
done

# start_node N: starts node N and waits (60 s) for its "ready on" line.
start_node() {
    local log=$out/node-$1.log deadline=$((SECONDS + 60)) lines
    echo "---- start $(date +%T.%N)" >>"$log"
    lines=$(wc -l <"$log")
    if ((partitions)); then
        ip netns exec "${netns[$1]}" "$broker_bin" --config "$work/$1.toml" >>"$log" 2>&1 &
    else
        "$broker_bin" --config "$work/$1.toml" >>"$log" 2>&1 &
    fi
    node_pid[$1]=$!
    until tail -n +"$lines" "$log" | grep -q " ready on "; do
        kill -0 "${node_pid[$1]}" 2>/dev/null || { tail -n 20 "$log" >&2; return 1; }
        ((SECONDS < deadline)) || { echo "ha-soak.sh: node $1 not ready in 60 s" >&2; return 1; }
        sleep 0.05
    done
}

# leader [SINCE]: "<epoch> <node>" of a node that renewed its lease within the lease time (and
# after the server time SINCE), else empty.
leader() {
    sql "SELECT epoch || ' ' || node_id FROM cluster_leader WHERE id = 1 AND
         renewed_at > greatest(now() - interval '$lease_ms milliseconds',
                               '${1:--infinity}'::timestamptz)"
}

# wait_for_active OLD_EPOCH [new|SINCE]: until a node holds a fresh lease (new: with a newer
# epoch than OLD_EPOCH; SINCE: renewed after that server time); prints the seconds it took.
# Deadline 90 s.
wait_for_active() {
    local started=$EPOCHREALTIME now epoch since=""
    [ "${2:-}" = new ] || since=${2:-}
    while :; do
        read -r epoch _ <<<"$(leader "$since")" || true
        if [ -n "${epoch:-}" ] && { [ "${2:-}" != new ] || ((epoch > $1)); }; then break; fi
        now=$EPOCHREALTIME
        (( ${now%.*} - ${started%.*} < 90 )) || { log "no active node within 90 s" >&2; return 1; }
        sleep 0.1
    done
    now=$EPOCHREALTIME
    awk -v a="$started" -v b="$now" 'BEGIN { printf "%.1f", b - a }'
}

start_node a
start_node b
wait_for_active 0 >/dev/null
read -r epoch active <<<"$(leader)"
log "PostgreSQL primary :$pg_primary, synchronous standby :$pg_standby; nodes" \
    "a ${node_addr[a]}:${node_port[a]}, b ${node_addr[b]}:${node_port[b]}; active $active" \
    "(epoch $epoch); partitions: $([ $partitions = 1 ] && echo "namespaces ${netns[*]}" || echo off)"

# 3. Clients listing both nodes (the active one first for the setup).
queue=receiver_1_hasoak
other=$([ "$active" = a ] && echo b || echo a)
brokers="${node_addr[$active]}:${node_port[$active]},${node_addr[$other]}:${node_port[$other]}"
"${soak[@]}" setup --broker "$brokers" --certs "$work/certs" --queue "$queue"
incarnation=0
for ((c = 1; c <= consumers; c++)); do
    "${soak[@]}" consumer --broker "$brokers" --certs "$work/certs" --queue "$queue" \
        --history "$out/consumer-$c.log" &
    client_pids+=($!)
done
publisher_pids=()
for ((p = 1; p <= publishers; p++)); do
    "${soak[@]}" publisher --broker "$brokers" --certs "$work/certs" --queue "$queue" \
        --name "ha-p$p" --rate "$rate" --drain "$drain" --history "$out/publisher-$p.log" &
    publisher_pids+=($!)
    client_pids+=($!)
done

# 4. Rounds of faults.
kinds=(kill freeze pg)
((partitions)) && kinds+=(partition)
declare -A count=([kill]=0 [freeze]=0 [pg]=0 [partition]=0)
started=$SECONDS
for ((round = 1; round <= rounds; round++)); do
    sleep "$((1 + RANDOM % 2)).$((RANDOM % 10))"
    kind=${kinds[$(((round - 1) % ${#kinds[@]}))]}
    read -r epoch active <<<"$(leader)" || true
    [ -n "${active:-}" ] || { wait_for_active 0 >/dev/null; read -r epoch active <<<"$(leader)"; }
    case $kind in
    kill)
        kill -9 "${node_pid[$active]}"
        wait "${node_pid[$active]}" 2>/dev/null || true
        took=$(wait_for_active "$epoch" new)
        start_node "$active"
        what="kill -9 of active $active: another node active after $took s"
        ;;
    freeze)
        kill -STOP "${node_pid[$active]}"
        took=$(wait_for_active "$epoch" new)
        kill -CONT "${node_pid[$active]}"
        what="SIGSTOP of active $active: another node active after $took s, then SIGCONT"
        ;;
    pg)
        "${pgscript[@]}" crash-server "$work/pg"
        "${pgscript[@]}" promote-standby "$work/pg"
        took=$(wait_for_active 0 "$(sql 'SELECT now()')")
        old_primary=$pg_primary
        pg_primary=$pg_standby
        pg_standby=$old_primary
        "${pgscript[@]}" swap-roles "$work/pg"
        STANDBY_PORT=$pg_standby "${pgscript[@]}" start-standby "$work/pg" >/dev/null
        what="PostgreSQL failover to :$pg_primary: a node active on it after $took s; new synchronous standby :$pg_standby"
        ;;
    partition)
        ip link set "${host_if[$active]}" down
        took=$(wait_for_active "$epoch" new)
        ip link set "${host_if[$active]}" up
        what="link of active $active cut: another node active after $took s; link restored"
        ;;
    esac
    count[$kind]=$((count[$kind] + 1))
    log "round $round/$rounds ($kind): $what;" \
        "$(cat "$out"/publisher-*.log 2>/dev/null | grep -c '^ACK ') ACKs so far"
done
log "faults done in $((SECONDS - started)) s: ${count[kill]} kill -9, ${count[freeze]} SIGSTOP," \
    "${count[pg]} PostgreSQL failovers, ${count[partition]} partitions; draining publishers"

# 5. Drain and check.
kill -TERM "${publisher_pids[@]}"
for p in "${publisher_pids[@]}"; do wait "$p" || true; done
status=0
"${soak[@]}" check --wait "$drain" --json "$out/result.json" "$out"/publisher-*.log \
    "$out"/consumer-*.log || status=$?
log "check exit $status: $(python3 -c 'import json,sys; r=json.load(open(sys.argv[1]));
print("acknowledged", r["acknowledged"], "acknowledged-but-lost", r["acknowledged_never_delivered"],
      "duplicate deliveries", r["duplicate_deliveries"], "delivered after error only", r["delivered_after_error_only"])' "$out/result.json")"
log "load average at end: $(cut -d' ' -f1-3 /proc/loadavg)"
exit "$status"
