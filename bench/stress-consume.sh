#!/usr/bin/env bash
# Consumer churn against a (sanitizer-built) broker: ROUNDS times connect / `consume <new queue>`
# / close after a random delay (0-3 ms, often before the declare commits), from WORKERS
# connections at once, while a publisher binds the churned queues and publishes to them, so any
# consumer left registered for a closed connection would be handed a delivery. Passes when the
# broker is still up, every publish was answered, and the sanitizers reported nothing
# (bench/README.md, "Consumer churn").
#   bench/stress-consume.sh [BUILD_DIR] [ROUNDS] [WORKERS]
# BUILD_DIR is best a build with -fsanitize=address,undefined (see bench/README.md).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=$(cd "${1:-$root/build-asan}" && pwd)
rounds=${2:-100000}
workers=${3:-4}
work=$(mktemp -d /tmp/cmq-stress-consume.XXXXXX)
dbname=stress
source "$root/bench/common.sh"
pg_port=5432 # unused with SQLite, but must be a valid port
write_config sqlite warn "[performance]
max_queue_size = 1000
max_queues_per_cn = 1000000
max_bindings_per_cn = 1000000"

export ASAN_OPTIONS="log_path=$work/asan:abort_on_error=1:detect_leaks=0"
export UBSAN_OPTIONS="log_path=$work/ubsan:print_stacktrace=1:halt_on_error=1"
"$build/broker/ciphermq-broker" --config "$work/config.toml" >"$work/broker.log" 2>&1 &
broker_pid=$!
until grep -qs " ready on " "$work/broker.log"; do
    kill -0 "$broker_pid" 2>/dev/null || { cat "$work/broker.log" >&2; exit 1; }
    sleep 0.05
done

status=0
PYTHONPATH="$root/bench" python3 - "$work/certs" "$port" "$rounds" "$workers" <<'PY' || status=$?
import multiprocessing, random, sys, threading, time

import lineclient

certs, port, rounds, workers = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4])

def context(identity):
    return lineclient.tls_context(certs, identity)

def connect(ctx):
    return lineclient.connect(ctx, port, timeout=30)

class Lines(lineclient.Lines):
    def __init__(self, sock):
        super().__init__(sock, chunk=65536)

def queue_name(i):
    return b"receiver_1_churn_%d" % i

def churn(worker, counter):
    ctx = context("receiver_1")
    rng = random.Random(worker)
    while True:
        with counter.get_lock():
            i = counter.value
            if i >= rounds:
                return
            counter.value += 1
        sock = connect(ctx)
        sock.sendall(b"consume " + queue_name(i) + b"\n")
        delay = rng.choice([0, 0, 0.0005, 0.001, 0.003])
        if delay:
            time.sleep(delay)
        sock.close()  # no close_notify wait: the broker sees the connection go at once

def publish(counter, done, result):
    # Binds queues churned a little earlier and publishes to each: a consumer left behind for
    # a closed connection would get the delivery.
    ctx_r, ctx_s = context("receiver_1"), context("sender_1")
    receiver, sender = Lines(connect(ctx_r)), Lines(connect(ctx_s))
    assert receiver.request(b"declare_exchange CipherMQ_exchange") == b"Exchange declared"
    published = acked = 0
    next_queue = 0
    while not done.is_set() or next_queue < counter.value - 1:
        if next_queue >= counter.value - 50 and not done.is_set():
            time.sleep(0.01)
            continue
        q = queue_name(next_queue)
        next_queue += 7
        reply = receiver.request(b"bind " + q + b" CipherMQ_exchange " + q)
        if reply != b"Queue bound":
            continue  # not declared (its connection closed before the consume was read)
        envelope = (b'{"message_id":"s-' + q + b'","receiver_client_id":"receiver_1",'
                    b'"enc_session_key":"ZW5j","nonce":"bm9uY2U=","ciphertext":"Y2lwaGVy"}')
        reply = sender.request(b"publish CipherMQ_exchange " + q + b" " + envelope)
        published += 1
        if reply.startswith(b"ACK "):
            acked += 1
        else:
            print("publish refused:", reply.decode(errors="replace"), file=sys.stderr)
    result.extend([published, acked])

counter = multiprocessing.Value("q", 0)
done = threading.Event()
result = []
start = time.monotonic()
procs = [multiprocessing.Process(target=churn, args=(w, counter)) for w in range(workers)]
for p in procs:
    p.start()
publisher = threading.Thread(target=publish, args=(counter, done, result))
publisher.start()
for p in procs:
    p.join()
elapsed = time.monotonic() - start
done.set()
publisher.join()
failed = [p.exitcode for p in procs if p.exitcode != 0]
print(f"rounds: {counter.value} in {elapsed:.1f} s ({counter.value / elapsed:.0f}/s), "
      f"{workers} workers; published to churned queues: {result[0] if result else '?'}, "
      f"acked: {result[1] if result else '?'}; failed workers: {len(failed)}")
sys.exit(1 if failed or not result or result[0] != result[1] else 0)
PY

if ! kill -0 "$broker_pid" 2>/dev/null; then
    echo "FAIL: the broker died" >&2
    tail -20 "$work/broker.log" >&2
    status=1
fi
if ls "$work"/asan* "$work"/ubsan* >/dev/null 2>&1; then
    echo "FAIL: sanitizer reports:" >&2
    cat "$work"/asan* "$work"/ubsan* >&2 || true
    status=1
fi
grep -E "runtime error|AddressSanitizer" "$work/broker.log" >&2 && status=1
[ "$status" = 0 ] && echo "PASS: broker up, no sanitizer report"
exit "$status"
