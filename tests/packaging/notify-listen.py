#!/usr/bin/env python3
"""Plays systemd's part of sd_notify for the packaging test: binds a unix datagram socket at
SOCKET (mode 0666, so the broker's unprivileged user can send to it) and appends every
notification it receives to LOG, one per line with newlines shown as ";". Runs until killed.
"""
import os
import socket
import sys

path, log = sys.argv[1], sys.argv[2]
sock = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
sock.bind(path)
os.chmod(path, 0o666)
with open(log, "a", buffering=1) as out:
    out.write("LISTENING\n")
    while True:
        data = sock.recv(4096)
        out.write(data.decode(errors="replace").replace("\n", ";") + "\n")
