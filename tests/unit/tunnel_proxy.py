#!/usr/bin/python3
# tunnel_proxy.py -- a "proxy" that forwards everything it is sent without looking at it, for
# tests/unit/test_conformance_sandbox.c: the deployment T2.connect-sni-mismatch (and the other
# proxy probes) must catch. A CONNECT is answered 200 and tunnelled, whatever the ClientHello
# names, to the TLS upstream TLS_PORT; any other request goes as it came to HTTP_PORT, except,
# with ADMIN_SOCKET, bytes that start like a frame of decisiond's protocol (a length whose first
# byte is 0), which go to that Unix socket: a route out that reaches the control plane.
#
#   tunnel_proxy.py PORT_FILE HTTP_PORT TLS_PORT [ADMIN_SOCKET]
#
# Binds 127.0.0.1:0 and writes the port to PORT_FILE through a rename (its presence means the
# port accepts connections). Standard library only.
import os
import socket
import sys
import threading


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


def serve(conn, http_port, tls_port, admin):
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
    admin = sys.argv[4] if len(sys.argv) > 4 else None
    lsock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    lsock.bind(("127.0.0.1", 0))
    lsock.listen(64)
    tmp = port_file + ".tmp"
    with open(tmp, "w") as f:
        f.write("%d\n" % lsock.getsockname()[1])
    os.rename(tmp, port_file)
    while True:
        conn, _ = lsock.accept()
        threading.Thread(target=serve, args=(conn, http_port, tls_port, admin),
                         daemon=True).start()


if __name__ == "__main__":
    main()
