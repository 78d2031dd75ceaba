#!/usr/bin/env bash
# Memory per idle mTLS connection, and traffic on other connections while they are held
# (bench/README.md, "Idle connections"). Against a broker on SQLite:
#  1. a ciphermq-bench run (W=256, SECONDS) on its own, then the broker's RSS;
#  2. N connections with receiver_1's certificate, each completing the handshake and one round
#     trip (`heartbeat 3600`, which also keeps the idle timeout away), spread over four
#     127.0.0.x source addresses, then held idle; the broker's RSS again: (after - before) / N
#     is the memory per idle connection;
#  3. the same ciphermq-bench run while the N connections are held, then every one of them
#     must still answer a round trip.
#   bench/idle-connections.sh [BUILD_DIR] [N=10000] [SECONDS=10]
# Needs N + 100 open files in this shell (ulimit -n); the broker raises its own soft limit.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=$(cd "${1:-$root/build}" && pwd)
count=${2:-10000}
seconds=${3:-10}
work=$(mktemp -d /tmp/cmq-idle.XXXXXX)
dbname=idle
source "$root/bench/common.sh"
pg_port=5432 # unused with SQLite, but must be a valid port

if [ "$(ulimit -n)" != unlimited ] && [ "$(ulimit -n)" -lt $((count + 100)) ]; then
    ulimit -n "$(ulimit -Hn)" 2>/dev/null || true
    if [ "$(ulimit -n)" != unlimited ] && [ "$(ulimit -n)" -lt $((count + 100)) ]; then
        echo "ulimit -n is $(ulimit -n): too low for $count connections" >&2
        exit 1
    fi
fi

# The benchmark's own connections come on top of the N idle ones (the default max_connections,
# 20000, would do for N = 10000).
write_config sqlite warn "[performance]
max_queue_size = 1000000"
sed -i "s/^max_handshakes_per_ip = .*/&\nmax_connections = $((count + 100))/" "$work/config.toml"

"$build/broker/ciphermq-broker" --config "$work/config.toml" >"$work/broker.log" 2>&1 &
broker_pid=$!
until grep -qs " ready on " "$work/broker.log"; do
    kill -0 "$broker_pid" 2>/dev/null || { cat "$work/broker.log" >&2; exit 1; }
    sleep 0.05
done
echo "broker open-file limit: $(awk '/^Max open files/ {print $4 " soft, " $5 " hard"}' \
    "/proc/$broker_pid/limits")"

python3 - "$work/certs" "$port" "$broker_pid" "$count" "$seconds" "$build/bench/ciphermq-bench" \
    <<'PY'
import asyncio, ssl, sys, time

certs, port, pid, count, seconds, bench = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), \
    int(sys.argv[4]), int(sys.argv[5]), sys.argv[6]
sources = [f"127.0.0.{i}" for i in range(1, 5)]
in_flight = 64  # handshakes at once: below the per-address handshake cap

def status_kb(field):
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith(field + ":"):
                return int(line.split()[1])

def context():
    ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
    ctx.load_verify_locations(f"{certs}/ca.crt")
    ctx.load_cert_chain(f"{certs}/receiver_1.crt", f"{certs}/receiver_1.key")
    ctx.check_hostname = False
    return ctx

async def round_trip(conn):
    reader, writer = conn
    writer.write(b"heartbeat 3600\n")
    await writer.drain()
    reply = await asyncio.wait_for(reader.readline(), 60)
    if reply != b"Heartbeat 3600\n":
        raise RuntimeError(f"unexpected reply {reply[:100]!r}")

async def open_one(i, ctx, gate):
    async with gate:
        conn = await asyncio.wait_for(asyncio.open_connection(
            "127.0.0.1", port, ssl=ctx, local_addr=(sources[i % len(sources)], 0)), 60)
        await round_trip(conn)
        return conn

async def run_bench(label):
    proc = await asyncio.create_subprocess_exec(
        bench, "--certs", certs, "--broker", f"127.0.0.1:{port}", "--window", "256",
        "--duration", str(seconds), "--broker-pid", str(pid),
        stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.STDOUT)
    out, _ = await proc.communicate()
    print(f"== ciphermq-bench, W=256, {seconds}s, {label} (exit {proc.returncode})")
    print(out.decode().rstrip())
    return proc.returncode

async def main():
    ok = await run_bench("no idle connections") == 0
    await asyncio.sleep(1)
    before = status_kb("VmRSS")
    ctx = context()
    gate = asyncio.Semaphore(in_flight)
    started = time.monotonic()
    results = await asyncio.gather(*(open_one(i, ctx, gate) for i in range(count)),
                                   return_exceptions=True)
    conns = [r for r in results if not isinstance(r, BaseException)]
    failures = [r for r in results if isinstance(r, BaseException)]
    took = time.monotonic() - started
    await asyncio.sleep(2)
    after = status_kb("VmRSS")
    print(f"== {len(conns)} of {count} idle mTLS connections established in {took:.1f} s "
          f"({len(failures)} failed{': ' + repr(failures[0]) if failures else ''})")
    print(f"broker RSS {before / 1024:.1f} MiB before, {after / 1024:.1f} MiB with them held: "
          f"{(after - before) / max(len(conns), 1):.1f} KB per idle connection")
    ok = await run_bench(f"{len(conns)} idle connections held") == 0 and ok
    alive = await asyncio.gather(*(round_trip(c) for c in conns), return_exceptions=True)
    dead = [r for r in alive if isinstance(r, BaseException)]
    print(f"after the run: {len(conns) - len(dead)} of {len(conns)} idle connections still "
          f"answer; broker RSS {status_kb('VmRSS') / 1024:.1f} MiB, peak "
          f"{status_kb('VmHWM') / 1024:.1f} MiB")
    for _, writer in conns:
        writer.close()
    return ok and not failures and not dead and len(conns) == count

sys.exit(0 if asyncio.run(main()) else 1)
PY
