#!/usr/bin/env python3
"""Load clients and the history checker of the fault-injection soak (bench/soak.sh).

    soak.py setup     --broker H:P[,H:P...] --certs DIR --queue Q
    soak.py publisher --broker H:P --certs DIR --queue Q --name NAME --history FILE
                      [--window W] [--rate MSG_PER_S] [--count N]
    soak.py consumer  --broker H:P --certs DIR --queue Q --history FILE
    soak.py check     HISTORY_FILE... [--wait SECONDS] [--json FILE]

Every client writes one line per event to its history file with an unbuffered write, so what a
client saw survives its own `kill -9`:

    CONNECTED, CLOSED  a connection to the broker was made / lost (for reading the history)
    SENT <id>          a publish was written to the socket (again on every retry)
    ACK <id>           the broker answered `ACK <id>`
    DUP <id>           the broker answered `Error: Duplicate message <id> ignored` (committed)
    ERR <id> <text>    the broker answered another error: not stored; the publisher retries
    DELIVER <id>       a consumer received `Message: <id> ...` (recorded before it acks)
    ACKED <id>         a consumer's ack was confirmed

A publisher keeps every id it has not had a definite answer for (ACK, DUP) and publishes it
again after each reconnect or error, as the client library's outbox does; on SIGTERM it stops
taking new ids (so it does after --count new ones) and exits once nothing is pending (or after
--drain seconds). Replies are matched
to publishes by order (the broker answers in request order) and checked against the id where the
reply names one.
"""

import argparse
import asyncio
import base64
import collections
import json
import logging
import os
import random
import signal
import ssl
import sys
import time

EXCHANGE = "CipherMQ_exchange"


class History:
    def __init__(self, path):
        self.fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o644)

    def write(self, *words):
        os.write(self.fd, (" ".join(words) + "\n").encode())


def tls_context(certs, cn):
    ctx = ssl.create_default_context(ssl.Purpose.SERVER_AUTH, cafile=f"{certs}/ca.crt")
    ctx.load_cert_chain(f"{certs}/{cn}.crt", f"{certs}/{cn}.key")
    return ctx


_next_broker = 0


async def connect(args, cn):
    # --broker may list nodes ("h:p,h:p"): each attempt takes the next, as the client library
    # does after a standby's redirect line, a refused connection or the shutdown notice.
    global _next_broker
    brokers = args.broker.split(",")
    host, port = brokers[_next_broker % len(brokers)].rsplit(":", 1)
    _next_broker += 1
    return await asyncio.open_connection(
        host, int(port), ssl=tls_context(args.certs, cn), server_hostname="localhost",
        limit=1 << 22)


async def connect_retrying(args, cn, stopping=lambda: False):
    delay = 0.05
    while not stopping():
        try:
            return await asyncio.wait_for(connect(args, cn), 10)
        except (OSError, ssl.SSLError, asyncio.TimeoutError):
            await asyncio.sleep(delay)
            delay = min(delay * 2, 0.5)
    return None


def envelope(message_id, padding):
    return json.dumps({
        "message_id": message_id, "receiver_client_id": "receiver_1",
        "enc_session_key": base64.b64encode(os.urandom(48)).decode(),
        "nonce": base64.b64encode(os.urandom(12)).decode(),
        "ciphertext": padding, "sent_time": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
    }, separators=(",", ":"))


async def setup(args):
    reader, writer = await connect(args, "receiver_1")
    for line in (f"declare_exchange {EXCHANGE}", f"declare_queue {args.queue}",
                 f"bind {args.queue} {EXCHANGE} {args.queue}"):
        writer.write(line.encode() + b"\n")
        await writer.drain()
        reply = (await reader.readline()).decode().strip()
        if reply.startswith("Error"):
            sys.exit(f"setup: {line}: {reply}")
    writer.close()


async def publisher(args):
    history = History(args.history)
    stopping = False
    deadline = None

    def stop():
        nonlocal stopping, deadline
        stopping = True
        deadline = time.monotonic() + args.drain

    asyncio.get_running_loop().add_signal_handler(signal.SIGTERM, stop)
    padding = base64.b64encode(os.urandom(args.size)).decode()
    pending = collections.OrderedDict()  # id -> request line, no definite answer yet
    retry = collections.deque()          # ids to publish again
    seq = 0
    interval = 1.0 / args.rate if args.rate > 0 else 0.0

    def done():
        return stopping and (not pending or time.monotonic() > deadline)

    while not done():
        conn = await connect_retrying(args, "sender_1", done)
        if conn is None:
            break
        reader, writer = conn
        history.write("CONNECTED", str(len(pending)))
        inflight = collections.deque()
        retry.extend(i for i in pending if i not in retry)
        slot = asyncio.Event()
        slot.set()
        closed = False

        async def send():
            nonlocal seq, closed
            next_at = time.monotonic()
            while not closed and not done():
                if len(inflight) >= args.window:
                    slot.clear()
                    await slot.wait()
                    continue
                if retry:
                    message_id = retry.popleft()
                    if message_id not in pending:
                        continue
                elif not stopping and args.count and seq >= args.count:
                    stop()
                    continue
                elif not stopping:
                    now = time.monotonic()
                    if now < next_at:
                        await asyncio.sleep(next_at - now)
                    next_at = max(next_at + interval, time.monotonic() - 1)
                    seq += 1
                    message_id = f"{args.name}-{seq}"
                    pending[message_id] = (f"publish {EXCHANGE} {args.queue} "
                                           f"{envelope(message_id, padding)}\n").encode()
                else:
                    await asyncio.sleep(0.05)
                    continue
                inflight.append(message_id)
                history.write("SENT", message_id)
                writer.write(pending[message_id])
                await writer.drain()

        async def receive():
            nonlocal closed
            while not done():
                raw = await reader.readline()
                if not raw:
                    break
                line = raw.decode(errors="replace").rstrip("\r\n")
                if line in ("PING", "Server shutting down") or not inflight:
                    continue
                head = inflight.popleft()
                slot.set()
                if line.startswith("ACK "):
                    named, verdict = line[4:], "ACK"
                elif line.startswith("Error: Duplicate message ") and line.endswith(" ignored"):
                    named, verdict = line[len("Error: Duplicate message "):-len(" ignored")], "DUP"
                else:
                    named, verdict = head, "ERR"
                if named != head:
                    history.write("MISMATCH", head, named)
                if verdict == "ERR":
                    history.write("ERR", head, line)
                    retry.append(head)
                    await asyncio.sleep(0.05)
                else:
                    history.write(verdict, head)
                    pending.pop(head, None)
            closed = True
            slot.set()

        tasks = [asyncio.ensure_future(send()), asyncio.ensure_future(receive())]
        try:
            finished, _ = await asyncio.wait(tasks, return_when=asyncio.FIRST_COMPLETED)
            reasons = [repr(t.exception()) for t in finished if t.exception()]
            history.write("CLOSED", str(len(inflight)), *(reasons or ["eof"]))
        finally:
            for task in tasks:
                task.cancel()
            await asyncio.gather(*tasks, return_exceptions=True)
            writer.close()
        # Whatever had no answer on this connection is published again on the next one.
    history.write("DONE", str(len(pending)))


async def consumer(args):
    history = History(args.history)
    asyncio.get_running_loop().add_signal_handler(signal.SIGTERM, lambda: os._exit(0))
    while True:
        conn = await connect_retrying(args, "receiver_1")
        reader, writer = conn
        history.write("CONNECTED", "-")
        try:
            writer.write(f"consume {args.queue}\n".encode())
            while True:
                raw = await reader.readline()
                if not raw:
                    break
                line = raw.decode(errors="replace")
                if line.startswith("Message: "):
                    message_id = line[9:].split(" ", 1)[0]
                    history.write("DELIVER", message_id)
                    writer.write(f"ack {message_id}\n".encode())
                elif line.startswith("ACK_CONFIRMED "):
                    history.write("ACKED", line[14:].strip())
                await writer.drain()
        except (OSError, ssl.SSLError, asyncio.IncompleteReadError):
            pass
        writer.close()
        await asyncio.sleep(0.05)


def read_history(paths):
    events = collections.defaultdict(collections.Counter)  # kind -> id -> count
    errors = collections.defaultdict(list)
    for path in paths:
        with open(path, errors="replace") as f:
            for line in f:
                parts = line.rstrip("\n").split(" ", 2)
                if len(parts) < 2:
                    continue  # a line cut by kill -9
                events[parts[0]][parts[1]] += 1
                if parts[0] == "ERR" and len(parts) == 3:
                    errors[parts[2]].append(parts[1])
    return events, errors


def verdict(paths):
    events, errors = read_history(paths)
    sent, acked = set(events["SENT"]), set(events["ACK"]) | set(events["DUP"])
    errored, delivered = set(events["ERR"]), events["DELIVER"]
    lost = sorted(acked - set(delivered))
    unconfirmed = sorted(set(delivered) - acked - errored)
    refused_but_delivered = sorted((set(delivered) & errored) - acked)
    foreign = sorted(set(delivered) - sent)
    return {
        "published_ids": len(sent),
        "publish_attempts": sum(events["SENT"].values()),
        "acknowledged": len(acked),
        "acknowledged_as_duplicate": len(set(events["DUP"]) - set(events["ACK"])),
        "error_replies": sum(events["ERR"].values()),
        "error_texts": {text: len(ids) for text, ids in errors.items()},
        "never_answered": len(sent - acked - errored),
        "delivered_ids": len(delivered),
        "deliveries": sum(delivered.values()),
        "duplicate_deliveries": sum(n - 1 for n in delivered.values()),
        "acks_confirmed": len(events["ACKED"]),
        "reply_mismatches": sum(events["MISMATCH"].values()),
        "acknowledged_never_delivered": len(lost),
        "delivered_never_acknowledged_or_errored": len(unconfirmed),
        "delivered_after_error_only": len(refused_but_delivered),
        "delivered_never_published": len(foreign),
        "examples": {"acknowledged_never_delivered": lost[:20],
                     "delivered_never_acknowledged_or_errored": unconfirmed[:20],
                     "delivered_after_error_only": refused_but_delivered[:20]},
    }


def check(args):
    # Consumers may still be draining: wait (bounded) until every acknowledged id arrived.
    deadline = time.monotonic() + args.wait
    while True:
        result = verdict(args.history)
        if result["acknowledged_never_delivered"] == 0 or time.monotonic() > deadline:
            break
        time.sleep(1)
    text = json.dumps(result, indent=2)
    print(text)
    if args.json:
        with open(args.json, "w") as f:
            f.write(text + "\n")
    bad = (result["acknowledged_never_delivered"] or
           result["delivered_never_acknowledged_or_errored"] or
           result["delivered_never_published"] or result["reply_mismatches"])
    return 1 if bad else 0


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    sub = parser.add_subparsers(dest="command", required=True)
    for name in ("setup", "publisher", "consumer"):
        p = sub.add_parser(name)
        p.add_argument("--broker", required=True)
        p.add_argument("--certs", required=True)
        p.add_argument("--queue", required=True)
        if name != "setup":
            p.add_argument("--history", required=True)
        if name == "publisher":
            p.add_argument("--name", required=True)
            p.add_argument("--window", type=int, default=32)
            p.add_argument("--rate", type=float, default=300, help="new messages per second")
            p.add_argument("--size", type=int, default=384, help="random ciphertext bytes")
            p.add_argument("--count", type=int, default=0,
                           help="stop after this many new messages (0: run until SIGTERM)")
            p.add_argument("--drain", type=float, default=60,
                           help="seconds to keep retrying after SIGTERM")
    p = sub.add_parser("check")
    p.add_argument("history", nargs="+")
    p.add_argument("--wait", type=float, default=0)
    p.add_argument("--json")
    args = parser.parse_args()
    if args.command == "check":
        sys.exit(check(args))
    # A write to a connection the broker's kill -9 just reset is expected here, not news.
    logging.getLogger("asyncio").setLevel(logging.CRITICAL)
    asyncio.run({"setup": setup, "publisher": publisher, "consumer": consumer}[args.command](args))


if __name__ == "__main__":
    main()
