#!/usr/bin/python3
"""A WebSocket echo server and client for the proxy's tests (python3-websockets 10.4, Debian).

serve DIR CERT KEY
    Listen on 127.0.0.1 on two ports the kernel picks: plain ws and TLS wss (CERT and KEY, PEM).
    Every message (text or binary) is sent back unchanged. Each completed handshake appends one
    line "PATH auth=AUTHORIZATION" to DIR/ws.log (AUTHORIZATION is the header's value, empty when
    absent), written and flushed before the first message is read. When both ports listen, the
    line "WS_PORT WSS_PORT" is written to DIR/ws.ports (through a rename, never half-written):
    the fixture waits for that file. SIGTERM and SIGINT stop the server (exit status 0).

client URI [--proxy HOST:PORT] [--tunnel] [--cacert FILE] [--header "Name: value"]... [MESSAGE...]
    Connect to URI (ws:// or wss://), send each MESSAGE as a text message and print each answer as
    "recv MESSAGE" on its own line, then close. With --proxy, go through an HTTP proxy: wss always,
    and ws with --tunnel, through "CONNECT host:port" (the proxy's answer must be 200); plain ws
    without --tunnel as an absolute-form request ("GET http://host:port/path HTTP/1.1" with the
    Upgrade headers), as a forward proxy receives it. --cacert names the CA that the server's
    certificate must chain to (the name checked is URI's host). Exit status: 0 when every message
    came back, 2 when the handshake was refused (the line "status NNN" is printed; for a refused
    CONNECT, "connect-status NNN"), 1 on any other failure (the reason on stderr). Every step is
    bounded by a 20 s timeout.
"""

import asyncio
import logging
import os
import signal
import socket
import ssl
import sys
import urllib.parse

import websockets
from websockets.legacy.client import WebSocketClientProtocol

TIMEOUT = 20
MAX_MESSAGE = 16 * 1024 * 1024
MAX_PROXY_HEAD = 16 * 1024


def serve(folder, cert, key):
    logging.basicConfig(filename=os.path.join(folder, "ws.err"), level=logging.WARNING)
    log = open(os.path.join(folder, "ws.log"), "a", encoding="utf-8")

    async def echo(ws, path=None):
        auth = ws.request_headers.get("Authorization", "")
        log.write("%s auth=%s\n" % (ws.path, auth))
        log.flush()
        async for message in ws:
            await ws.send(message)

    async def main():
        ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        ctx.load_cert_chain(cert, key)
        stop = asyncio.get_running_loop().create_future()
        for sig in (signal.SIGTERM, signal.SIGINT):
            asyncio.get_running_loop().add_signal_handler(sig, stop.set_result, None)
        plain = await websockets.serve(echo, "127.0.0.1", 0, max_size=MAX_MESSAGE)
        tls = await websockets.serve(echo, "127.0.0.1", 0, ssl=ctx, max_size=MAX_MESSAGE)
        ports = "%d %d\n" % (plain.sockets[0].getsockname()[1], tls.sockets[0].getsockname()[1])
        tmp = os.path.join(folder, "ws.ports.tmp")
        with open(tmp, "w", encoding="ascii") as f:
            f.write(ports)
        os.rename(tmp, os.path.join(folder, "ws.ports"))
        await stop
        plain.close()
        tls.close()
        await plain.wait_closed()
        await tls.wait_closed()

    asyncio.run(main())
    log.close()
    return 0


class ProxyRefused(Exception):
    pass


def proxy_tunnel(proxy, host, port):
    """A socket to proxy on which "CONNECT host:port" was answered 200 (bytes after the head are
    not expected: the client speaks first)."""
    phost, pport = proxy.rsplit(":", 1)
    s = socket.create_connection((phost, int(pport)), timeout=TIMEOUT)
    target = "%s:%d" % (host, port)
    s.sendall(("CONNECT %s HTTP/1.1\r\nHost: %s\r\n\r\n" % (target, target)).encode("ascii"))
    head = b""
    while b"\r\n\r\n" not in head:
        chunk = s.recv(1)
        if not chunk or len(head) > MAX_PROXY_HEAD:
            s.close()
            raise ProxyRefused("connect-status none")
        head += chunk
    status = head.split(b"\r\n", 1)[0].split(b" ")
    code = status[1].decode("ascii", "replace") if len(status) > 1 else "none"
    if code != "200":
        s.close()
        raise ProxyRefused("connect-status %s" % code)
    s.settimeout(None)
    return s


def client(args):
    uri, proxy, tunnel, cacert, headers, messages = None, None, False, None, [], []
    i = 0
    while i < len(args):
        a = args[i]
        if a in ("--proxy", "--cacert", "--header") and i + 1 < len(args):
            value = args[i + 1]
            i += 2
            if a == "--proxy":
                proxy = value
            elif a == "--cacert":
                cacert = value
            else:
                name, _, v = value.partition(":")
                headers.append((name.strip(), v.strip()))
            continue
        if a == "--tunnel":
            tunnel = True
        elif uri is None:
            uri = a
        else:
            messages.append(a)
        i += 1
    if uri is None:
        print("usage: ws_echo.py client URI [options] [MESSAGE...]", file=sys.stderr)
        return 1
    parts = urllib.parse.urlsplit(uri)
    secure = parts.scheme == "wss"
    host = parts.hostname
    port = parts.port or (443 if secure else 80)
    kwargs = {"extra_headers": headers, "open_timeout": TIMEOUT, "max_size": MAX_MESSAGE}
    if secure:
        ctx = ssl.create_default_context(cafile=cacert)
        kwargs["ssl"] = ctx
    if proxy is not None and not (secure or tunnel):
        phost, pport = proxy.rsplit(":", 1)
        prefix = "http://%s:%d" % (host, port)

        class AbsoluteForm(WebSocketClientProtocol):
            def write_http_request(self, path, request_headers):
                super().write_http_request(prefix + path, request_headers)

        kwargs["create_protocol"] = AbsoluteForm
        kwargs["host"] = phost
        kwargs["port"] = int(pport)

    async def run():
        async with websockets.connect(uri, **kwargs) as ws:
            for m in messages:
                await ws.send(m)
                answer = await asyncio.wait_for(ws.recv(), TIMEOUT)
                if isinstance(answer, bytes):
                    answer = answer.decode("utf-8", "replace")
                print("recv %s" % answer, flush=True)

    try:
        if proxy is not None and (secure or tunnel):
            kwargs["sock"] = proxy_tunnel(proxy, host, port)
            if secure:
                kwargs["server_hostname"] = host
        asyncio.run(run())
    except ProxyRefused as e:
        print(str(e), flush=True)
        return 2
    except websockets.exceptions.InvalidStatusCode as e:
        print("status %d" % e.status_code, flush=True)
        return 2
    except Exception as e:  # any other failure: the reason for the test's message
        print("ws client: %s: %s" % (type(e).__name__, e), file=sys.stderr)
        return 1
    return 0


def main(argv):
    if len(argv) == 5 and argv[1] == "serve":
        return serve(argv[2], argv[3], argv[4])
    if len(argv) >= 3 and argv[1] == "client":
        return client(argv[2:])
    print(__doc__, file=sys.stderr)
    return 1


if __name__ == "__main__":
    sys.exit(main(sys.argv))
