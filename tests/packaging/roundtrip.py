#!/usr/bin/env python3
"""A minimal CipherMQ client for the packaging test: mTLS with certificates made by
`cmq certs`, the line protocol spoken directly (docs/PROTOCOL.md), standard library only so it
runs with the system /usr/bin/python3 against the installed broker.

  roundtrip.py --port P --certs DIR setup            declare the exchange, queue and binding
  roundtrip.py --port P --certs DIR publish ID       publish message ID, wait for "ACK ID"
  roundtrip.py --port P --certs DIR fetch ID         fetch the next message: must be ID; ack it
  roundtrip.py --port P --certs DIR roundtrip ID     publish ID, then fetch and ack it

DIR holds ca.crt and <cn>.crt/.key for the sender (pkg-sender) and receiver (pkg-receiver).
Exits non-zero with the reason on stderr when a reply is not the expected one.
"""
import argparse
import json
import socket
import ssl
import sys

SENDER = "pkg-sender"
RECEIVER = "pkg-receiver"
QUEUE = RECEIVER + "_packaging"  # receivers own the queues named after their CN
EXCHANGE = "CipherMQ_exchange"


class Client:
    def __init__(self, port, certs, cn):
        context = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
        context.minimum_version = ssl.TLSVersion.TLSv1_2
        context.load_verify_locations(f"{certs}/ca.crt")
        context.load_cert_chain(f"{certs}/{cn}.crt", f"{certs}/{cn}.key")
        raw = socket.create_connection(("127.0.0.1", port), timeout=15)
        self.sock = context.wrap_socket(raw, server_hostname="localhost")
        self.buffer = b""

    def line(self):
        while b"\n" not in self.buffer:
            chunk = self.sock.recv(65536)
            if not chunk:
                raise SystemExit(f"connection closed by the broker (buffer: {self.buffer!r})")
            self.buffer += chunk
        line, self.buffer = self.buffer.split(b"\n", 1)
        return line.decode()

    def request(self, text, expected):
        self.sock.sendall(text.encode() + b"\n")
        reply = self.line()
        if reply != expected:
            raise SystemExit(f"{text.split(' ')[0]}: expected {expected!r}, got {reply!r}")
        return reply


def envelope(message_id):
    # The broker relays envelopes without decrypting them; the fields only have to be present.
    return json.dumps({"message_id": message_id, "receiver_client_id": RECEIVER,
                       "enc_session_key": "ZW5j", "nonce": "bm9uY2U=",
                       "ciphertext": "Y2lwaGVy"}, separators=(",", ":"))


def setup(args):
    receiver = Client(args.port, args.certs, RECEIVER)
    receiver.request(f"declare_exchange {EXCHANGE}", "Exchange declared")
    receiver.request(f"declare_queue {QUEUE}", "Queue declared")
    receiver.request(f"bind {QUEUE} {EXCHANGE} {QUEUE}", "Queue bound")


def publish(args):
    sender = Client(args.port, args.certs, SENDER)
    sender.request(f"publish {EXCHANGE} {QUEUE} {envelope(args.id)}", f"ACK {args.id}")


def fetch(args):
    receiver = Client(args.port, args.certs, RECEIVER)
    receiver.request(f"fetch {QUEUE}", f"Message: {args.id} {envelope(args.id)}")
    receiver.request(f"ack {args.id}", f"ACK_CONFIRMED {args.id}")


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--port", type=int, required=True)
    parser.add_argument("--certs", required=True)
    parser.add_argument("action", choices=["setup", "publish", "fetch", "roundtrip"])
    parser.add_argument("id", nargs="?", default="")
    args = parser.parse_args()
    if args.action == "setup":
        setup(args)
    elif args.action == "publish":
        publish(args)
    elif args.action == "fetch":
        fetch(args)
    else:
        publish(args)
        fetch(args)
    print(f"{args.action} {args.id}: ok")


if __name__ == "__main__":
    sys.exit(main())
