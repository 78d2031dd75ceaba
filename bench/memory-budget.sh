#!/usr/bin/env bash
# The memory budget under a flood: PUBLISHERS connections publish MESSAGES envelopes of SIZE
# ciphertext bytes in all, as fast as the broker answers, into a queue nobody consumes, against
# a broker on SQLite with performance.memory_budget_mb = BUDGET_MB. Reports how many were
# acknowledged and how many refused by the memory alarm, the broker's peak RSS while flooding,
# then drains the queue with a consumer and checks that the alarm went off and publishes pass
# again (bench/README.md, "Memory budget").
#   bench/memory-budget.sh [BUDGET_MB=64] [MESSAGES=2000] [SIZE=262144] [PUBLISHERS=4]
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
budget=${1:-64}
messages=${2:-2000}
size=${3:-262144}
publishers=${4:-4}
build=${CMQ_BUILD_DIR:-$root/build}
work=$(mktemp -d /tmp/cmq-memory-budget.XXXXXX)
dbname=memory
source "$root/bench/common.sh"
pg_port=5432 # unused with SQLite, but must be a valid port
write_config sqlite info "[performance]
max_queue_size = 1000000
memory_budget_mb = $budget
# Hold the whole flood in the queue's window, as before windows existed: this measures the alarm,
# not paging (with the default window the flood stays in the database and no alarm goes on).
queue_window_messages = 1000000
queue_window_bytes = 1099511627776
queue_window_budget_mb = 1048576
[server]
max_line_bytes = $((size * 2 + 4096))"
# [server] appears twice now: fold the extra key into the first one.
python3 - "$work/config.toml" <<'PY'
import re, sys
path = sys.argv[1]
text = open(path).read()
extra = re.search(r"\n\[server\]\n(max_line_bytes = \d+)\n", text)
text = text.replace(extra.group(0), "\n")
text = text.replace("[server]\n", "[server]\n" + extra.group(1) + "\n", 1)
open(path, "w").write(text)
PY

"$build/broker/ciphermq-broker" --config "$work/config.toml" >"$work/broker.log" 2>&1 &
broker_pid=$!
until grep -qs " ready on " "$work/broker.log"; do
    kill -0 "$broker_pid" 2>/dev/null || { cat "$work/broker.log" >&2; exit 1; }
    sleep 0.05
done
baseline_kb=$(awk '/^VmRSS:/ {print $2}' "/proc/$broker_pid/status")

PYTHONPATH="$root/bench" python3 - "$work/certs" "$port" "$broker_pid" "$messages" "$size" "$publishers" "$budget" \
    "$baseline_kb" <<'PY'
import base64, sys, threading, time

import lineclient
from lineclient import Lines

certs, port, pid = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
messages, size, publishers, budget_mb, baseline_kb = (int(a) for a in sys.argv[4:9])

def connect(identity):
    return Lines(lineclient.connect(lineclient.tls_context(certs, identity), port))

def rss_kb():
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1])

ciphertext = base64.b64encode(b"\x5a" * size)
def envelope(mid):
    return (b'{"message_id":"' + mid + b'","receiver_client_id":"receiver_1",'
            b'"enc_session_key":"ZW5j","nonce":"bm9uY2U=","ciphertext":"' + ciphertext + b'"}')

receiver = connect("receiver_1")
for line in (b"declare_queue receiver_1_flood", b"declare_exchange CipherMQ_exchange",
             b"bind receiver_1_flood CipherMQ_exchange receiver_1_flood"):
    reply = receiver.request(line)
    assert not reply.startswith(b"Error"), reply

acked, refused, other = [0], [0], []
peak = [rss_kb()]
lock = threading.Lock()
flooding = True

def sample():
    while flooding:
        peak[0] = max(peak[0], rss_kb())
        time.sleep(0.02)

def publisher(n):
    conn = connect("sender_1")
    for i in range(n, messages, publishers):
        mid = b"flood-%d" % i
        reply = conn.request(b"publish CipherMQ_exchange receiver_1_flood " + envelope(mid))
        with lock:
            if reply == b"ACK " + mid:
                acked[0] += 1
            elif reply.startswith(b"Error: Memory alarm: "):
                refused[0] += 1
            else:
                other.append(reply[:200])

sampler = threading.Thread(target=sample)
sampler.start()
started = time.monotonic()
threads = [threading.Thread(target=publisher, args=(n,)) for n in range(publishers)]
for t in threads:
    t.start()
for t in threads:
    t.join()
flood_s = time.monotonic() - started
flooding = False
sampler.join()
peak[0] = max(peak[0], rss_kb())

env_bytes = len(envelope(b"flood-0"))
print(f"budget {budget_mb} MiB; {messages} messages of {env_bytes} envelope bytes "
      f"({messages * env_bytes / 2**20:.0f} MiB offered) from {publishers} publishers in {flood_s:.1f} s")
print(f"acknowledged {acked[0]} ({acked[0] * env_bytes / 2**20:.1f} MiB), refused by the memory "
      f"alarm {refused[0]}, other replies {len(other)} {other[:3]}")
print(f"broker RSS: {baseline_kb / 1024:.0f} MiB at start, peak {peak[0] / 1024:.0f} MiB while "
      f"flooding (+{(peak[0] - baseline_kb) / 1024:.0f} MiB)")

# Drain: fetch and ack everything, then a publish must pass again.
started = time.monotonic()
drained = 0
while True:
    reply = receiver.request(b"fetch receiver_1_flood")
    if reply == b"No messages":
        break
    mid = reply.split(b" ", 2)[1]
    assert receiver.request(b"ack " + mid) == b"ACK_CONFIRMED " + mid
    drained += 1
conn = connect("sender_1")
after = conn.request(b"publish CipherMQ_exchange receiver_1_flood " + envelope(b"after-drain"))
print(f"drained {drained} in {time.monotonic() - started:.1f} s; publish after the drain: "
      f"{after.decode()[:80]}")
ok = (not other and drained == acked[0] and after == b"ACK after-drain"
      and acked[0] * env_bytes <= budget_mb * 2**20)
sys.exit(0 if ok else 1)
PY
grep -E "memory (budget|alarm)" "$work/logs/info.log" | sed 's/^/log: /' | head -5 || true
