"""The line protocol over mTLS for the Python bench scripts (memory-budget.sh, stress-consume.sh):
a client TLS context for a test identity and a connection read and written line by line.
The scripts put bench/ on sys.path (PYTHONPATH) and import it."""
import socket
import ssl


def tls_context(certs, identity):
    """A client context presenting certs/<identity>.crt, trusting certs/ca.crt. The test
    certificates name no host, so only the chain is checked."""
    ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
    ctx.load_verify_locations(f"{certs}/ca.crt")
    ctx.load_cert_chain(f"{certs}/{identity}.crt", f"{certs}/{identity}.key")
    ctx.check_hostname = False
    return ctx


class Lines:
    """One connection, read a line at a time; recv() in chunks of `chunk` bytes."""

    def __init__(self, sock, chunk=1 << 20):
        self.sock, self.buf, self.chunk = sock, b"", chunk

    def send(self, line):
        self.sock.sendall(line + b"\n")

    def read(self):
        while b"\n" not in self.buf:
            data = self.sock.recv(self.chunk)
            if not data:
                raise ConnectionError("broker closed the connection")
            self.buf += data
        line, self.buf = self.buf.split(b"\n", 1)
        return line

    def request(self, line):
        self.send(line)
        return self.read()


def connect(ctx, port, timeout=60):
    """A TLS socket to the broker on 127.0.0.1:port (handshake done)."""
    return ctx.wrap_socket(socket.create_connection(("127.0.0.1", port), timeout=timeout))
