#!/usr/bin/env bash
# Framing cost: streams junk lines (no spaces, unknown command) of several lengths up to the
# 1 MiB line limit to a broker in 1 KiB TLS writes (small writes, as a slow or hostile sender makes them), and reports the broker's CPU time per MiB
# received for each length (read from /proc/<pid>/stat). With linear framing the cost per MiB
# does not depend on the line length; a framer that rescans a line on every read costs in
# proportion to it.
#
#   bench/framing.sh [BUILD_DIR=build] [MIB_PER_LENGTH=64] [BROKER_BINARY]
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
build=$(cd "${1:-build}" && pwd)
mib=${2:-64}
broker=${3:-$build/broker/ciphermq-broker}
work=$(mktemp -d)
dbname=unused
source "$root/bench/common.sh"

pg_port=5432 # unused by the SQLite driver, but must be a valid port
write_config sqlite warn
"$broker" --config "$work/config.toml" >"$work/broker.out" 2>&1 &
broker_pid=$!
for _ in $(seq 100); do
    grep -q " ready on " "$work/broker.out" 2>/dev/null && break
    sleep 0.1
done

grep -q " ready on " "$work/broker.out" || { cat "$work/broker.out"; exit 1; }
python3 - "$port" "$work/certs" "$broker_pid" "$mib" <<'PY'
import os, socket, ssl, sys
port, certs, pid, mib = int(sys.argv[1]), sys.argv[2], sys.argv[3], int(sys.argv[4])
tick = os.sysconf("SC_CLK_TCK")

def cpu_seconds():
    fields = open(f"/proc/{pid}/stat").read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / tick

context = ssl.create_default_context(cafile=f"{certs}/ca.crt")
context.load_cert_chain(f"{certs}/sender_1.crt", f"{certs}/sender_1.key")
context.check_hostname = False
WRITE = 1024
print(f"{'line bytes':>12} {'lines':>6} {'MiB':>5} {'broker CPU s':>13} {'CPU ms per MiB':>15}")
for length in (16 << 10, 64 << 10, 256 << 10, 1 << 20):
    with socket.create_connection(("127.0.0.1", port)) as raw, \
            context.wrap_socket(raw, server_hostname="localhost") as tls:
        tls.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        line = b"x" * length + b"\n"
        lines = (mib << 20) // len(line)
        before = cpu_seconds()
        for _ in range(lines):
            for start in range(0, len(line), WRITE):
                tls.sendall(line[start:start + WRITE])
        replies = b""
        while replies.count(b"\n") < lines:
            chunk = tls.recv(65536)
            if not chunk:
                sys.exit("broker closed the connection")
            replies += chunk
        assert replies.startswith(b"Unknown command\n"), replies[:80]
        used = cpu_seconds() - before
        sent = lines * len(line) / (1 << 20)
        print(f"{length:>12} {lines:>6} {sent:>5.0f} {used:>13.2f} {1000 * used / sent:>15.1f}")
PY
