#!/usr/bin/python3
# tunnel_proxy.py -- a "proxy" that forwards everything it is sent without looking at it, for
# tests/unit/test_conformance_sandbox.c: the deployment T2.connect-sni-mismatch (and the other
# proxy probes) must catch. A CONNECT is answered 200 and tunnelled, whatever the ClientHello
# names, to the TLS upstream TLS_PORT; any other request goes as it came to HTTP_PORT, except,
# with ADMIN_SOCKET, bytes that start like a frame of decisiond's protocol (a length whose first
# byte is 0), which go to that Unix socket: a route out that reaches the control plane.
#
# With CERT and KEY (PEM) a CONNECT is answered 200 and the tunnel terminated with them instead:
# the request read inside the TLS session goes as it came to the host and port its Host field
# names (plain TCP), whatever the CONNECT named, and the answer comes back in the session (the
# deployment T2.connect-host-mismatch must catch: inner requests never checked).
#
#   tunnel_proxy.py PORT_FILE HTTP_PORT TLS_PORT [ADMIN_SOCKET|- [CERT KEY]]
#
# Binds 127.0.0.1:0 and writes the port to PORT_FILE through a rename (its presence means the
# port accepts connections). Standard library only.
import os
import socket
import ssl
import sys
import threading

HEAD_MAX = 65536  # bytes of a request head read before giving up


def pipe(src, dst):
    try:
        while True:
            data = src.recv(65536)
            if not data:
                break
            dst.sendall(data)
    except OSError:
        pass
    finally:
        try:
            dst.shutdown(socket.SHUT_WR)
        except OSError:
            pass


def read_head(conn):
    head = b""
    while b"\r\n\r\n" not in head and len(head) < HEAD_MAX:
        data = conn.recv(4096)
        if not data:
            return None
        head += data
    return head if b"\r\n\r\n" in head else None


def by_host(conn, tls):
    """The tunnel terminated with tls; its one request relayed to where its Host field says."""
    conn.sendall(b"HTTP/1.1 200 Connection established\r\n\r\n")
    try:
        conn.settimeout(10)
        inner = tls.wrap_socket(conn, server_side=True)
        head = read_head(inner)
        if head is None:
            return
        host = None
        for line in head.split(b"\r\n\r\n", 1)[0].split(b"\r\n")[1:]:
            name, _, value = line.partition(b":")
            if name.strip().lower() == b"host":
                host = value.strip().decode("ascii", "replace")
        if host is None or ":" not in host:
            return
        name, port = host.rsplit(":", 1)
        up = socket.create_connection((name, int(port)), timeout=10)
        try:
            up.sendall(head)
            while True:
                data = up.recv(65536)
                if not data:
                    break
                inner.sendall(data)
        except OSError:
            pass
        up.close()
        inner.close()
    except (OSError, ValueError, ssl.SSLError):
        pass
    finally:
        conn.close()


def serve(conn, http_port, tls_port, admin, tls):
    head = b""
    while b"\r\n\r\n" not in head:
        data = conn.recv(4096)
        if not data:
            conn.close()
            return
        head += data
    try:
        if admin is not None and head[:1] == b"\x00":
            up = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
            up.connect(admin)
            rest = head
        elif head.startswith(b"CONNECT ") and tls is not None:
            by_host(conn, tls)
            return
        elif head.startswith(b"CONNECT "):
            up = socket.create_connection(("127.0.0.1", tls_port))
            conn.sendall(b"HTTP/1.1 200 Connection established\r\n\r\n")
            rest = head.split(b"\r\n\r\n", 1)[1]
        else:
            up = socket.create_connection(("127.0.0.1", http_port))
            rest = head
        if rest:
            up.sendall(rest)
    except OSError:
        conn.close()
        return
    threading.Thread(target=pipe, args=(up, conn), daemon=True).start()
    pipe(conn, up)


def main():
    port_file, http_port, tls_port = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
    admin = sys.argv[4] if len(sys.argv) > 4 and sys.argv[4] != "-" else None
    tls = None
    if len(sys.argv) > 6:
        tls = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        tls.load_cert_chain(sys.argv[5], sys.argv[6])
        tls.set_alpn_protocols(["http/1.1"])
    lsock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    lsock.bind(("127.0.0.1", 0))
    lsock.listen(64)
    tmp = port_file + ".tmp"
    with open(tmp, "w") as f:
        f.write("%d\n" % lsock.getsockname()[1])
    os.rename(tmp, port_file)
    while True:
        conn, _ = lsock.accept()
        threading.Thread(target=serve, args=(conn, http_port, tls_port, admin, tls),
                         daemon=True).start()


if __name__ == "__main__":
    main()
