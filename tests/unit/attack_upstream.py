#!/usr/bin/python3
# attack_upstream.py -- an HTTP/1.1 upstream for tests/unit/test_proxy_attacks.c that behaves as
# ordinary, non-colluding services do (httpbin-style header echoes, gzip when the client asks for
# it, byte ranges, chunked streaming, redirects), so a test can see what reaches the agent when
# the proxy relays such answers.
#
#   attack_upstream.py PORT_FILE LOG_FILE [PORT]
#
# Binds 127.0.0.1:PORT (0 when not given: the kernel's choice), writes the port to PORT_FILE (through a rename: its presence means the port
# accepts connections), and serves every connection in a thread of its own, kept alive. Every
# request head received is appended to LOG_FILE as one line: the request line, then " | " and
# each field "name: value" joined by " | " (so a test sees exactly what upstream got).
#
# What it answers (the auth value is the request's Authorization field, "" when absent):
#   .../status-101...  an ordinary 101 (no Upgrade, no Sec-WebSocket-Accept), as httpbin's
#                /status/101 sends, after which the connection goes on serving HTTP requests
#   /gz/...      200, "auth=<value>\n"; gzip-encoded (Content-Encoding: gzip) when the request's
#                Accept-Encoding lists gzip, as httpbin's /gzip and any compressing server do
#   /range/...   200 "auth=<value>\n", or 206 with the byte range of a "Range: bytes=A-B" field
#   /split/...   200 chunked: "auth=" + the first 6 bytes of the value in one chunk, the rest and
#                "\n" in a second chunk, written apart (two TCP writes, 50 ms between)
#   /trailer/... 200 chunked "ok\n" with the auth value in a trailer field X-Echo
#   /reason/...  200 with the auth value as the status line's reason phrase
#   /early/...   103 Early Hints echoing the auth value in X-Echo, then 200 "ok\n"
#   /wsauth/...  a WebSocket upgrade answered 101, then one text message "auth=<value>", compressed
#                (permessage-deflate) when the client offered it, as servers do by default,
#                then a close frame and a FIN
#   /wsfrag/...  the same, never compressed, the message sent in two fragments split inside the
#                value (servers fragment long messages as they please)
#   /login/...   302 to /accounts/login/?next=<the request target, percent-encoded>, as a login
#                redirect of Django, Flask-Login or Rails does for a request without a session
#   /rst/...     the connection reset (SO_LINGER 0) as soon as the head is read, the body unread
#   /drop/...    nothing: the connection is closed once the request is read (a server that took
#                the request and died before answering)
#   /lower/...   200 "auth=<value in lower case>\n" (a case-insensitive echo)
#   /redirect/.. 302 to the URL in the query (?to=URL), with the auth value echoed in a
#                X-Seen-Auth field
#   /u101/...    101 Switching Protocols to any request, then echoes every byte raw
#   /body/...    200 "len=<bytes of body received> sha=<sha256 hex of them>\n"
#   anything     200 "ok <request line>\n"
import base64
import gzip
import hashlib
import os
import socket
import sys
import threading
import time
import urllib.parse
import zlib

WS_GUID = "258EAFA5-E914-47DA-95CA-C5AB0DC85B11"


def ws_frame(first_byte, payload):
    if len(payload) < 126:
        head = bytes([first_byte, len(payload)])
    else:
        head = bytes([first_byte, 126]) + len(payload).to_bytes(2, "big")
    return head + payload


def ws_auth(conn, lines, auth, fragmented):
    """Answer a WebSocket upgrade with 101 and send one text message "auth=<value>": with
    permessage-deflate when the client offered it (RFC 7692, as most servers do by default),
    else in two fragments split inside the value (fragmented) or in one frame."""
    key = field(lines, "sec-websocket-key") or ""
    accept = base64.b64encode(hashlib.sha1((key + WS_GUID).encode()).digest()).decode()
    ext = (field(lines, "sec-websocket-extensions") or "").lower()
    deflate = "permessage-deflate" in ext and not fragmented
    head = ("HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
            "Sec-WebSocket-Accept: %s\r\n" % accept)
    if deflate:
        head += "Sec-WebSocket-Extensions: permessage-deflate\r\n"
    conn.sendall((head + "\r\n").encode())
    msg = ("auth=%s" % auth).encode("latin-1")
    if deflate:
        c = zlib.compressobj(wbits=-15)
        data = c.compress(msg) + c.flush(zlib.Z_SYNC_FLUSH)
        conn.sendall(ws_frame(0xC1, data[:-4]))
    elif fragmented:
        conn.sendall(ws_frame(0x01, msg[:12]) + ws_frame(0x80, msg[12:]))
    else:
        conn.sendall(ws_frame(0x81, msg))
    # then a close frame and the end of the stream, so that nothing is left waiting for more
    conn.sendall(ws_frame(0x88, b"\x03\xe8"))
    conn.shutdown(socket.SHUT_WR)
    while conn.recv(65536):
        pass


def log_head(log_path, head_lines):
    with open(log_path, "a", encoding="latin-1") as f:
        f.write(" | ".join(head_lines) + "\n")


def read_head(conn, buf):
    while b"\r\n\r\n" not in buf:
        data = conn.recv(65536)
        if not data:
            return None, buf
        buf += data
    head, rest = buf.split(b"\r\n\r\n", 1)
    return head.decode("latin-1").split("\r\n"), rest


def field(lines, name):
    for line in lines[1:]:
        k, _, v = line.partition(":")
        if k.strip().lower() == name:
            return v.strip()
    return None


def answer(conn, status, body, extra=()):
    head = "HTTP/1.1 %s\r\nContent-Length: %d\r\n" % (status, len(body))
    for h in extra:
        head += h + "\r\n"
    conn.sendall(head.encode("latin-1") + b"\r\n" + body)


def serve(conn, log_path):
    buf = b""
    try:
        while True:
            lines, buf = read_head(conn, buf)
            if lines is None:
                return
            log_head(log_path, lines)
            if lines[0].split(" ")[1].startswith("/rst/"):
                # a server that refuses the request at its head and resets (SO_LINGER 0)
                conn.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, b"\x01\0\0\0\0\0\0\0")
                return
            length = int(field(lines, "content-length") or "0")
            while len(buf) < length:
                data = conn.recv(65536)
                if not data:
                    return
                buf += data
            body, buf = buf[:length], buf[length:]
            target = lines[0].split(" ")[1]
            auth = field(lines, "authorization") or ""
            echo = ("auth=%s\n" % auth).encode("latin-1")
            if "/status-101" in target:
                # httpbin's /status/101: an ordinary response whose status happens to be 101;
                # the connection stays an HTTP/1.1 one and serves the next request
                conn.sendall(b"HTTP/1.1 101 Switching Protocols\r\nContent-Length: 0\r\n\r\n")
            elif target.startswith("/gz/"):
                ae = (field(lines, "accept-encoding") or "").lower()
                if "gzip" in ae:
                    answer(conn, "200 OK", gzip.compress(echo), ["Content-Encoding: gzip"])
                else:
                    answer(conn, "200 OK", echo)
            elif target.startswith("/range/"):
                rng = field(lines, "range")
                if rng and rng.startswith("bytes="):
                    a, _, b = rng[6:].partition("-")
                    a, b = int(a), min(int(b), len(echo) - 1)
                    answer(conn, "206 Partial Content", echo[a:b + 1],
                           ["Content-Range: bytes %d-%d/%d" % (a, b, len(echo))])
                else:
                    answer(conn, "200 OK", echo)
            elif target.startswith("/split/"):
                first = ("auth=" + auth[:6]).encode("latin-1")
                second = (auth[6:] + "\n").encode("latin-1")
                conn.sendall(b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n" +
                             b"%x\r\n" % len(first) + first + b"\r\n")
                time.sleep(0.05)
                conn.sendall(b"%x\r\n" % len(second) + second + b"\r\n0\r\n\r\n")
            elif target.startswith("/trailer/"):
                conn.sendall(b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\nTrailer: X-Echo\r\n"
                             b"\r\n3\r\nok\n\r\n0\r\nX-Echo: " + auth.encode("latin-1") +
                             b"\r\n\r\n")
            elif target.startswith("/reason/"):
                answer(conn, "200 " + auth, b"ok\n")
            elif target.startswith("/early/"):
                conn.sendall(b"HTTP/1.1 103 Early Hints\r\nX-Echo: " + auth.encode("latin-1") +
                             b"\r\n\r\n")
                answer(conn, "200 OK", b"ok\n")
            elif target.startswith("/wsauth/") or target.startswith("/wsfrag/"):
                ws_auth(conn, lines, auth, target.startswith("/wsfrag/"))
                return
            elif target.startswith("/login/"):
                nxt = urllib.parse.quote(target, safe="")
                answer(conn, "302 Found", b"", ["Location: /accounts/login/?next=" + nxt])
            elif target.startswith("/drop/"):
                return
            elif target.startswith("/lower/"):
                answer(conn, "200 OK", ("auth=%s\n" % auth.lower()).encode("latin-1"))
            elif target.startswith("/redirect/"):
                to = target.partition("?to=")[2]
                answer(conn, "302 Found", b"", ["Location: " + to, "X-Seen-Auth: " + auth])
            elif target.startswith("/u101/"):
                conn.sendall(b"HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\n"
                             b"Connection: Upgrade\r\n\r\n")
                if buf:
                    conn.sendall(buf)
                while True:
                    data = conn.recv(65536)
                    if not data:
                        return
                    conn.sendall(data)
            elif target.startswith("/body/"):
                answer(conn, "200 OK", ("len=%d sha=%s\n" % (
                    len(body), hashlib.sha256(body).hexdigest())).encode())
            else:
                answer(conn, "200 OK", ("ok %s\n" % lines[0]).encode("latin-1"))
    except (OSError, ValueError):
        pass
    finally:
        conn.close()


def main():
    port_file, log_path = sys.argv[1], sys.argv[2]
    s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    s.bind(("127.0.0.1", int(sys.argv[3]) if len(sys.argv) > 3 else 0))
    s.listen(64)
    open(log_path, "a").close()
    with open(port_file + ".tmp", "w") as f:
        f.write("%d\n" % s.getsockname()[1])
    os.rename(port_file + ".tmp", port_file)
    while True:
        conn, _ = s.accept()
        threading.Thread(target=serve, args=(conn, log_path), daemon=True).start()


if __name__ == "__main__":
    main()
