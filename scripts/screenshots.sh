#!/usr/bin/env bash
# Screenshots of the admin console for docs/images/, taken from the real window after real
# traffic: starts a throwaway broker (own certificates, config, data and free ports under a
# temporary directory), sends messages with `cmq` (one receiver consuming, one queue filling
# up, one sender bursting past its rate limit), then runs ciphermq-admin under Xvfb at
# 1280x800 once per tab and captures the screen with ImageMagick's `import`. Then admin actions
# (one by a read-only operator) for the Audit tab, the read-only console, a dead-letter queue
# for the Dead letters tab, and a client whose certificate expires in 10 days for the alarm
# banner.
#
#   scripts/screenshots.sh [BUILD_DIR]     (default: build; needs ciphermq-broker, cmq and
#                                           ciphermq-admin built there)
#   SHOTS="audit readonly" scripts/screenshots.sh   only these pictures (names as in docs/images)
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
build=$(cd "${1:-build}" && pwd)
out="$root/docs/images"
broker_bin="$build/broker/ciphermq-broker"
cmq="$build/cli/cmq"
admin="$build/admin-gui/ciphermq-admin"
for bin in "$broker_bin" "$cmq" "$admin"; do
    [ -x "$bin" ] || { echo "missing $bin: build it first" >&2; exit 2; }
done
bash scripts/ensure-packages.sh xvfb imagemagick x11-utils xdotool

work=$(mktemp -d /tmp/cmq-screenshots.XXXXXX)
pids=()
cleanup() {
    for pid in "${pids[@]}"; do kill "$pid" 2>/dev/null || true; done
    wait 2>/dev/null || true
    rm -rf "$work"
}
trap cleanup EXIT

free_port() {
    python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'
}
data_port=$(free_port)
admin_port=$(free_port)

echo "Certificates and config in $work (data port $data_port, admin port $admin_port)"
certs="$work/certs"
mkdir -p "$certs"
"$cmq" certs init-ca --dir "$certs" --cn "CipherMQ Development CA" >/dev/null
"$cmq" certs server --dir "$certs" --cn localhost --san DNS:localhost,IP:127.0.0.1 >/dev/null
for cn in sender_1 publisher-svc-1 receiver_1 receiver_2 worker-svc-1 ops-admin ops-viewer; do
    "$cmq" certs client --dir "$certs" --cn "$cn" >/dev/null
done
"$cmq" certs client --dir "$certs" --cn expiring-soon --days 10 >/dev/null
cat >"$work/config.toml" <<EOF
[server]
address = "127.0.0.1:$data_port"
connection_type = "tls"

[tls]
cert_path = "$certs/server.crt"
key_path = "$certs/server.key"
ca_cert_path = "$certs/ca.crt"

[logging]
level = "info"
info_file_path = "$work/logs/info.log"
debug_file_path = "$work/logs/debug.log"
error_file_path = "$work/logs/error.log"

[database]
driver = "sqlite"
path = "$work/data/ciphermq.db"

[encryption]
algorithm = "x25519_chacha20_poly1305"
aes_key = "$(openssl rand -base64 32)"

[performance]
max_queue_size = 10000

[admin]
enabled = true
address = "127.0.0.1:$admin_port"
readonly_cns = ["ops-viewer"]

[rate_limit]
enabled = true

[acl]
sender_cns = ["sender_1", "publisher-svc-1"]
receiver_cns = ["receiver_1", "receiver_2", "worker-svc-1", "expiring-soon"]
admin_cns = ["ops-admin", "ops-viewer"]
EOF

"$broker_bin" --config "$work/config.toml" >"$work/broker.out" 2>&1 &
pids+=($!)
for _ in $(seq 1 120); do
    "$cmq" admin --address "127.0.0.1:$admin_port" --ca "$certs/ca.crt" \
        --cert "$certs/ops-admin.crt" --key "$certs/ops-admin.key" help >/dev/null 2>&1 && break
    sleep 0.5
done

as() { # as CN cmq-arguments...: run cmq with CN's identity
    local cn=$1
    shift
    "$cmq" "$@" --broker "127.0.0.1:$data_port" --ca "$certs/ca.crt" \
        --cert "$certs/$cn.crt" --key "$certs/$cn.key" --identity "$work/id/$cn"
}

echo "Traffic: receivers register, receiver_1 consumes, senders publish"
for cn in receiver_1 receiver_2 worker-svc-1 expiring-soon; do
    "$cmq" keygen --identity "$work/id/$cn" >/dev/null
    # Registers the key and declares and binds CN_queue; exits when the time is up.
    as "$cn" listen --timeout 2 >/dev/null 2>&1 || true
done
as worker-svc-1 declare queue worker-svc-1_audit >/dev/null
as worker-svc-1 declare bind worker-svc-1_audit CipherMQ_exchange worker-svc-1_key >/dev/null
as receiver_1 listen >/dev/null 2>&1 &
pids+=($!)
(
    i=0
    while true; do
        n=$((10 + (i % 12) * 3))
        seq 1 "$n" | sed "s/^/order /" | as sender_1 send --to receiver_1 --lines >/dev/null 2>&1 || true
        seq 1 $((1 + i % 4)) | sed "s/^/report /" | as sender_1 send --to receiver_2 --lines \
            >/dev/null 2>&1 || true
        # (TEXT as an argument: without one, '-' or --lines, cmq send has nothing to send.)
        [ $((i % 3)) -eq 0 ] && as publisher-svc-1 send --to worker-svc-1 "audit $i" \
            >>"$work/audit-send.out" 2>&1 || true
        i=$((i + 1))
        sleep 0.5
    done
) &
pids+=($!)
# Dead letters for the queue detail's Dead letters tab, and the Queues tab's TTL / DLX /
# delivery-limit columns: worker-svc-1_audit dead-letters to a fanout exchange feeding
# worker-svc-1_dlq; one of its messages is nacked with drop (rejected), then a 4 s TTL lets the
# rest expire there. worker-svc-1 may not publish, so it may not name a dead-letter exchange
# (docs/ACL.md, "Dead-lettering"): ops-admin provisions that for it, as an operator would.
# cmq has no command for these data-path requests, so a few lines of Python send them over
# the same mutual TLS.
raw() { # raw CN LINE...: one reply line per request line; "{id}" is the last fetched message
    python3 - "$certs" "$data_port" "$@" <<'PY'
import socket, ssl, sys
certs, port, cn, lines = sys.argv[1], int(sys.argv[2]), sys.argv[3], sys.argv[4:]
context = ssl.create_default_context(cafile=f"{certs}/ca.crt")
context.load_cert_chain(f"{certs}/{cn}.crt", f"{certs}/{cn}.key")
with context.wrap_socket(socket.create_connection(("127.0.0.1", port)),
                         server_hostname="localhost") as tls:
    stream = tls.makefile("rwb")
    fetched = ""
    for line in lines:
        stream.write(line.replace("{id}", fetched).encode() + b"\n")
        stream.flush()
        reply = stream.readline().decode().strip()
        if reply.startswith("Message: "):
            fetched = reply.split(" ")[1]
        print(reply[:120])
PY
}
expect() { # expect TEXT: the replies on stdin contain TEXT, or the script stops saying so
    local replies
    replies=$(cat)
    grep -qF "$1" <<<"$replies" || { echo "expected '$1', got: $replies" >&2; exit 1; }
}
raw worker-svc-1 "declare_exchange worker-svc-1_dlx fanout" "declare_queue worker-svc-1_dlq" \
    "bind worker-svc-1_dlq worker-svc-1_dlx worker-svc-1_dlq" | expect "Queue bound"
raw ops-admin "queue_policy worker-svc-1_audit 0 drop-head dlx=worker-svc-1_dlx delivery_limit=3" |
    expect "Queue policy set"
rejected=no
for _ in $(seq 1 40); do # an audit message to reject (one every 1.5 s)
    if raw worker-svc-1 "fetch worker-svc-1_audit" "nack {id} drop" | grep -q NACK_CONFIRMED; then
        rejected=yes
        break
    fi
    sleep 0.5
done
if [ "$rejected" != yes ]; then
    echo "no audit message reached worker-svc-1_audit; cmq send said:" >&2
    tail -5 "$work/audit-send.out" >&2
    exit 1
fi
raw worker-svc-1 "queue_policy worker-svc-1_audit 0 drop-head 4000" | expect "Queue policy set"

# One burst larger than the publish bucket: the Rate limits tab shows it drained, with
# rejected requests.
seq 1 150 | sed "s/^/burst /" | as publisher-svc-1 send --to receiver_2 --lines \
    >/dev/null 2>&1 || true

display=99
while [ -e "/tmp/.X$display-lock" ]; do display=$((display + 1)); done
Xvfb ":$display" -screen 0 1280x800x24 -nolisten tcp >"$work/xvfb.out" 2>&1 &
pids+=($!)
export DISPLAY=":$display"
for _ in $(seq 1 50); do
    xdpyinfo >/dev/null 2>&1 && break
    sleep 0.2
done
export XDG_CONFIG_HOME="$work/xdg" # recent connections of this run stay out of the user's

connection=(--host localhost --port "$admin_port" --ca "$certs/ca.crt")
admin_args=("${connection[@]}" --cert "$certs/ops-admin.crt" --key "$certs/ops-admin.key"
    --interval 500 -qwindowgeometry 1280x800+0+0)

wanted() { [ -z "${SHOTS:-}" ] || [[ " $SHOTS " == *" $1 "* ]]; }

shot() { # shot NAME SECONDS ciphermq-admin-arguments...
    local name=$1 seconds=$2
    shift 2
    wanted "$name" || return 0
    "$admin" "$@" >"$work/admin-$name.out" 2>&1 &
    local app=$!
    sleep "$seconds"
    import -window root "$out/$name.png"
    kill "$app"
    wait "$app" 2>/dev/null || true
    echo "  docs/images/$name.png"
}

mkdir -p "$out"
echo "Screenshots (DISPLAY $DISPLAY, 1280x800)"
shot overview 45 "${admin_args[@]}" --tab overview
# 20 s: the depth sparklines and lag trends have a history to draw from.
shot queues 20 "${admin_args[@]}" --tab queues
# The dead letters of worker-svc-1_dlq: one rejected, the others expired.
shot dead-letters 10 "${admin_args[@]}" --tab queues --queue worker-svc-1_dlq \
    --queue-tab deadletters
# Who floods the broker: sender_1 publishes most, receiver_1 takes its deliveries,
# publisher-svc-1 trickles. Half a minute of snapshots gives the per-minute rates and the chart.
shot talkers 35 "${admin_args[@]}" --tab talkers
# The Messages tab of a queue with a backlog from two senders: receiver_2_queue, before
# receiver_2 comes online (below).
shot queue-messages 10 "${admin_args[@]}" --tab queues --queue receiver_2_queue \
    --queue-tab messages
# Three queues selected, Ctrl+Shift+P: the one confirmation of a bulk purge lists each with its
# message counts. Cancelled (Escape) after the picture.
if wanted bulk-purge; then
    "$admin" "${admin_args[@]}" --tab queues --select receiver_2_queue,worker-svc-1_queue,worker-svc-1_audit \
        >"$work/admin-bulk.out" 2>&1 &
    app=$!
    sleep 8
    # No window manager under Xvfb: focus the window directly, then the keys.
    xdotool search --sync --pid "$app" --name "CipherMQ Admin" windowfocus --sync key ctrl+shift+p
    sleep 2
    import -window root "$out/bulk-purge.png"
    xdotool key Escape
    kill "$app"
    wait "$app" 2>/dev/null || true
    echo "  docs/images/bulk-purge.png"
fi
# receiver_2 comes online while its queue's detail window is open: the depth chart shows the
# backlog growing, then drained, and the consumer appears in the table.
if wanted queue-detail; then
    "$admin" "${admin_args[@]}" --tab queues --queue receiver_2_queue \
        >"$work/admin-detail.out" 2>&1 &
    app=$!
    sleep 35
    as receiver_2 listen >/dev/null 2>&1 &
    pids+=($!)
    sleep 12
    import -window root "$out/queue-detail.png"
    kill "$app"
    wait "$app" 2>/dev/null || true
    echo "  docs/images/queue-detail.png"
fi
shot exchanges 8 "${admin_args[@]}" --tab exchanges
shot connections 8 "${admin_args[@]}" --tab connections
shot ratelimits 8 "${admin_args[@]}" --tab ratelimits
# A non-admin certificate: the broker refuses it and the connect dialog says why.
shot connect-refused 8 "${connection[@]}" --cert "$certs/sender_1.crt" \
    --key "$certs/sender_1.key" -qwindowgeometry 1280x800+0+0

admin_as() { # admin_as CN cmq-admin-arguments...
    local cn=$1
    shift
    "$cmq" admin --address "127.0.0.1:$admin_port" --ca "$certs/ca.crt" \
        --cert "$certs/$cn.crt" --key "$certs/$cn.key" "$@"
}
# The audit trail: actions that worked, one that failed, and one refused to the read-only
# operator (whose window then shows its actions greyed).
admin_as ops-admin purge receiver_2_queue >/dev/null
admin_as ops-admin purge receiver_9_queue >/dev/null 2>&1 || true
admin_as ops-admin reload >/dev/null
admin_as ops-viewer purge receiver_2_queue >/dev/null 2>&1 || true
admin_as ops-admin purge worker-svc-1_audit >/dev/null
shot audit 8 "${admin_args[@]}" --tab audit
shot readonly 8 "${connection[@]}" --cert "$certs/ops-viewer.crt" --key "$certs/ops-viewer.key" \
    --interval 500 -qwindowgeometry 1280x800+0+0 --tab queues
# A client whose certificate expires in 10 days connects: the amber banner names it, and the
# Queues tab shows it below the banner (the Connections tab highlights its expiry).
as expiring-soon listen >/dev/null 2>&1 &
pids+=($!)
shot alarm-banner 8 "${admin_args[@]}" --tab queues
