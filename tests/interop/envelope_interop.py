#!/usr/bin/env python3
"""Envelope interop between our C++ client code and the existing clients' Python cryptography.

The Python side does exactly what the existing Python sender and receiver do: PyNaCl's SealedBox
for the session key, cryptography's ChaCha20Poly1305 for the body, standard base64 fields, key
files holding one base64 line. Both directions are checked, plus tampered envelopes, which must
be refused. Usage: envelope_interop.py PATH_TO_envelope_tool. Exits non-zero on any mismatch.
"""

import base64
import json
import os
import stat
import subprocess
import sys
import tempfile
import uuid
from datetime import datetime, timezone

from cryptography.exceptions import InvalidTag
from cryptography.hazmat.primitives.ciphers.aead import ChaCha20Poly1305
from nacl.exceptions import CryptoError
from nacl.public import PrivateKey, PublicKey, SealedBox

PAYLOADS = [
    ("empty", b""),
    ("ascii", b"CipherMQ Sample message with ID: 1234abcd"),
    ("non-ascii", "héllo wörld — Grüße, привет, 你好, 🔐\n\"quoted\" \\ back".encode("utf-8")),
    ("binary", bytes(range(256))),
    ("1 MiB", os.urandom(1024 * 1024)),
]
FIELD_ORDER = ["message_id", "receiver_client_id", "enc_session_key", "nonce", "ciphertext",
               "sent_time"]

failures = []


def check(condition, what):
    if not condition:
        failures.append(what)
        print(f"FAIL: {what}", file=sys.stderr)
    return condition


def run_tool(tool, args, stdin=b""):
    return subprocess.run([tool, *args], input=stdin, capture_output=True, timeout=120)


def python_open(envelope, private_key):
    """The existing Python receiver's decryption."""
    session_key = SealedBox(private_key).decrypt(base64.b64decode(envelope["enc_session_key"]))
    cipher = ChaCha20Poly1305(session_key)
    return cipher.decrypt(base64.b64decode(envelope["nonce"]),
                          base64.b64decode(envelope["ciphertext"]), None)


def python_seal(plaintext, public_key_b64, receiver_client_id):
    """The existing Python sender's encryption and message layout."""
    sealed_box = SealedBox(PublicKey(base64.b64decode(public_key_b64)))
    session_key = os.urandom(32)
    nonce = os.urandom(12)
    enc_session_key = sealed_box.encrypt(session_key)
    ciphertext_with_tag = ChaCha20Poly1305(session_key).encrypt(nonce, plaintext, None)
    correlation_id = str(uuid.uuid4())[:8]
    return {
        "message_id": f"python_sender-{correlation_id}-{receiver_client_id}",
        "ciphertext": base64.b64encode(ciphertext_with_tag).decode("utf-8"),
        "receiver_client_id": receiver_client_id,
        "enc_session_key": base64.b64encode(enc_session_key).decode("utf-8"),
        "nonce": base64.b64encode(nonce).decode("utf-8"),
        "sent_time": datetime.now(timezone.utc).isoformat(),
        "routing_key": f"{receiver_client_id}_key",
    }


PADDING_SCHEME = "buckets-v1"


def iso7816_unpad(padded):
    """ISO/IEC 7816-4: the data, a 0x80 byte, then zeros."""
    stripped = padded.rstrip(b"\0")
    if not stripped.endswith(b"\x80"):
        raise ValueError("no padding marker")
    return stripped[:-1]


def bucket(size):
    """docs/PROTOCOL.md: powers of two from 256 bytes to 64 KiB, then whole 64 KiB, > size."""
    needed, step = size + 1, 64 << 10
    if needed > step:
        return -(-needed // step) * step
    result = 256
    while result < needed:
        result *= 2
    return result


def python_open_padded(envelope, private_key):
    """A receiver that knows the padding field, written from docs/PROTOCOL.md alone."""
    session_key = SealedBox(private_key).decrypt(base64.b64decode(envelope["enc_session_key"]))
    padded = ChaCha20Poly1305(session_key).decrypt(
        base64.b64decode(envelope["nonce"]), base64.b64decode(envelope["ciphertext"]),
        PADDING_SCHEME.encode("ascii"))
    return iso7816_unpad(padded), len(padded)


def python_seal_padded(plaintext, public_b64):
    envelope = python_seal(b"", public_b64, "receiver_1")
    session_key = os.urandom(32)
    nonce = os.urandom(12)
    padded = plaintext + b"\x80" + b"\0" * (bucket(len(plaintext)) - len(plaintext) - 1)
    envelope.update(
        enc_session_key=base64.b64encode(
            SealedBox(PublicKey(base64.b64decode(public_b64))).encrypt(session_key)).decode(),
        nonce=base64.b64encode(nonce).decode(),
        ciphertext=base64.b64encode(ChaCha20Poly1305(session_key).encrypt(
            nonce, padded, PADDING_SCHEME.encode("ascii"))).decode(),
        padding=PADDING_SCHEME)
    return envelope


def padded_both_ways(tool, workdir):
    """Padded envelopes: Python (from the documented scheme) and C++ read each other's; an
    existing receiver, which knows no padding field, refuses one instead of misreading it."""
    private_key = PrivateKey.generate()
    public_b64 = base64.b64encode(bytes(private_key.public_key)).decode("ascii")
    for name, plaintext in PAYLOADS:
        result = run_tool(tool, ["seal-padded", public_b64], plaintext)
        if not check(result.returncode == 0, f"C++ seal-padded ({name}) failed"):
            continue
        envelope = json.loads(result.stdout)
        check(envelope.get("padding") == PADDING_SCHEME, f"C++ padded JSON names the scheme ({name})")
        try:
            opened, padded_size = python_open_padded(envelope, private_key)
            check(opened == plaintext, f"Python opened a padded C++ envelope ({name}) with other bytes")
            check(padded_size == bucket(len(plaintext)),
                  f"C++ padded {name} to {padded_size}, the documented bucket is {bucket(len(plaintext))}")
        except (CryptoError, InvalidTag, ValueError) as error:
            check(False, f"Python could not open a padded C++ envelope ({name}): {error!r}")
        try:
            python_open(envelope, private_key)
            check(False, f"an existing receiver opened a padded envelope ({name}) as unpadded")
        except InvalidTag:
            pass

    keydir = os.path.join(workdir, "padded_keys")
    result = run_tool(tool, ["keygen", keydir])
    if not check(result.returncode == 0, "C++ keygen (padded) failed"):
        return
    receiver_b64 = result.stdout.decode("ascii").strip()
    for name, plaintext in PAYLOADS:
        envelope = python_seal_padded(plaintext, receiver_b64)
        result = run_tool(tool, ["open", keydir], json.dumps(envelope).encode("utf-8"))
        check(result.returncode == 0 and result.stdout == plaintext,
              f"C++ opened a padded Python envelope ({name}): {result.stderr.decode()}")
        stripped = {k: v for k, v in envelope.items() if k != "padding"}
        result = run_tool(tool, ["open", keydir], json.dumps(stripped).encode("utf-8"))
        check(result.returncode != 0 and result.stdout == b"",
              f"C++ refused a padded envelope whose padding field was stripped ({name})")


def flip_base64(field, index=0):
    raw = bytearray(base64.b64decode(field))
    raw[index] ^= 0x01
    return base64.b64encode(bytes(raw)).decode("ascii")


def cpp_seals_python_opens(tool):
    private_key = PrivateKey.generate()
    public_b64 = base64.b64encode(bytes(private_key.public_key)).decode("ascii")
    for name, plaintext in PAYLOADS:
        result = run_tool(tool, ["seal", public_b64], plaintext)
        if not check(result.returncode == 0,
                     f"C++ seal ({name}) failed: {result.stderr.decode(errors='replace')}"):
            continue
        line = result.stdout.decode("utf-8")
        check(line.count("\n") == 1 and line.endswith("\n"), f"C++ JSON ({name}) is one line")
        envelope = json.loads(line)
        check(list(envelope)[:6] == FIELD_ORDER, f"C++ JSON field order ({name}): {list(envelope)}")
        check(envelope.get("routing_key") == "interop_key", f"C++ JSON extra field ({name})")
        sent = datetime.fromisoformat(envelope["sent_time"])
        check(sent.utcoffset() is not None and sent.utcoffset().total_seconds() == 0,
              f"C++ sent_time ({name}) is UTC RFC 3339: {envelope['sent_time']}")
        check(len(base64.b64decode(envelope["enc_session_key"], validate=True)) == 80,
              f"C++ enc_session_key size ({name})")
        check(len(base64.b64decode(envelope["nonce"], validate=True)) == 12,
              f"C++ nonce size ({name})")
        try:
            opened = python_open(envelope, private_key)
            check(opened == plaintext, f"Python opened C++ envelope ({name}) with other bytes")
        except (CryptoError, InvalidTag) as error:
            check(False, f"Python could not open C++ envelope ({name}): {error!r}")

        # Tampering must be caught by the Python side as well.
        for field in ("ciphertext", "nonce", "enc_session_key"):
            tampered = dict(envelope, **{field: flip_base64(envelope[field])})
            try:
                python_open(tampered, private_key)
                check(False, f"Python opened a C++ envelope with {field} altered ({name})")
            except (CryptoError, InvalidTag):
                pass
        if name != "1 MiB":
            continue
        try:
            python_open(envelope, PrivateKey.generate())
            check(False, "Python opened a C++ envelope with the wrong private key")
        except CryptoError:
            pass


def python_seals_cpp_opens(tool, workdir):
    keydir = os.path.join(workdir, "receiver_keys")
    result = run_tool(tool, ["keygen", keydir])
    if not check(result.returncode == 0, f"C++ keygen failed: {result.stderr.decode()}"):
        return
    printed_b64 = result.stdout.decode("ascii").strip()
    private_path = os.path.join(keydir, "private.key")
    check(stat.S_IMODE(os.stat(private_path).st_mode) == 0o600, "C++ private key file is 0600")
    # The key files as the existing Python receiver reads them.
    with open(private_path, "r") as key_file:
        private_key = PrivateKey(base64.b64decode(key_file.read()))
    with open(private_path + ".pub", "r") as key_file:
        public_b64 = key_file.read().strip()
    check(public_b64 == printed_b64, "C++ keygen printed the public key it saved")
    check(base64.b64encode(bytes(private_key.public_key)).decode("ascii") == public_b64,
          "C++ public key file matches the private key as PyNaCl derives it")

    for name, plaintext in PAYLOADS:
        envelope = python_seal(plaintext, public_b64, "receiver_1")
        message = json.dumps(envelope, ensure_ascii=False).encode("utf-8")
        result = run_tool(tool, ["open", keydir], message)
        check(result.returncode == 0,
              f"C++ could not open Python envelope ({name}): {result.stderr.decode()}")
        check(result.stdout == plaintext, f"C++ opened Python envelope ({name}) with other bytes")

    # Altered or misaddressed envelopes must be refused, not decrypted into garbage.
    envelope = python_seal(b"tamper me", public_b64, "receiver_1")
    cases = {
        "ciphertext altered": dict(envelope, ciphertext=flip_base64(envelope["ciphertext"])),
        "nonce altered": dict(envelope, nonce=flip_base64(envelope["nonce"])),
        "enc_session_key altered":
            dict(envelope, enc_session_key=flip_base64(envelope["enc_session_key"], 40)),
        "sealed to another key": python_seal(
            b"tamper me", base64.b64encode(bytes(PrivateKey.generate().public_key)).decode(),
            "receiver_1"),
    }
    for name, bad in cases.items():
        result = run_tool(tool, ["open", keydir], json.dumps(bad).encode("utf-8"))
        check(result.returncode != 0 and result.stdout == b"",
              f"C++ refused a Python envelope with {name}")


def main():
    if len(sys.argv) != 2:
        print("usage: envelope_interop.py PATH_TO_envelope_tool", file=sys.stderr)
        return 2
    tool = sys.argv[1]
    with tempfile.TemporaryDirectory() as workdir:
        cpp_seals_python_opens(tool)
        python_seals_cpp_opens(tool, workdir)
        padded_both_ways(tool, workdir)
    if failures:
        print(f"{len(failures)} interop check(s) failed", file=sys.stderr)
        return 1
    print(f"envelope interop OK: {len(PAYLOADS)} payloads each way, tampering refused both ways, "
          "padded envelopes both ways")
    return 0


if __name__ == "__main__":
    sys.exit(main())
