#!/usr/bin/python3
# model_upstream.py -- a model API upstream for tests/unit/test_proxy_model.c: it speaks the shapes
# of OpenAI's /v1/chat/completions and /v1/responses and Anthropic's /v1/messages, as JSON or as
# an SSE stream, and reports whatever token usage the test asks for (more than the request's
# ceiling, or hostile values), so a test can see what the proxy reads and decisiond charges.
#
#   model_upstream.py PORT_FILE LOG_FILE [CERT KEY]
#
# With CERT and KEY (PEM files) it speaks HTTPS (TLS on every connection) instead of HTTP.
# Binds 127.0.0.1 on a port of the kernel's choice, writes it to PORT_FILE (through a rename: its
# presence means the port accepts connections), serves each connection in a thread, kept alive.
# Each request is appended to LOG_FILE as one line: "<method> <target> <body length>".
#
# What it answers, by the request's path (any prefix) and query:
#   .../v1/chat/completions   JSON {"choices": ..., "usage": {"prompt_tokens": IN,
#                             "completion_tokens": OUT}}; with "stream": true in the body, an SSE
#                             stream of chunks ("usage": null) and a last chunk with the usage, then
#                             "data: [DONE]"
#   .../v1/responses          JSON {"output": ..., "usage": {"input_tokens": IN, "output_tokens":
#                             OUT}}; streamed: response.created (usage null), deltas, then
#                             response.completed with the usage under "response"
#   .../v1/messages           JSON {"content": ..., "usage": {"input_tokens": IN, "output_tokens":
#                             OUT}}; streamed: message_start (input_tokens IN, output_tokens 1),
#                             content deltas, message_delta (output_tokens OUT), message_stop
# Query parameters:
#   in=N, out=N   the counts (default 40 and 30: more than the tests' ceilings)
#   raw=TEXT      the usage's counts written as this JSON text instead of IN and OUT (e.g. -5,
#                 12.5, 1e3, 99999999999999999999, "7")
#   twice=1       a second usage object: JSON, a duplicate "usage" member (not strict JSON);
#                 SSE, a second usage report with lower counts (a dishonest upstream)
#   frame=length|chunked|close   the body's framing (default chunked for SSE, length for JSON)
#   cut=1         the body is cut (the connection closed) before the usage
#   crlf=1        SSE lines end in "\r\n" instead of "\n"
#   slow=1        the body is written one byte at a time
#   cache=N       Anthropic: the usage also has cache_creation_input_tokens N and
#                 cache_read_input_tokens N + 1 (input the prompt cache took: not in input_tokens)
#   pad=N         JSON: N bytes of per-token detail ("logprobs") before the usage, as an answer
#                 with logprobs or audio has (the body can pass the proxy's 4 MiB reader bound)
#   gate=NAME     the body is written up to its usage, then held until the file NAME exists in
#                 LOG_FILE's folder (polled), then the rest (a test closes the agent's side first)
# A request whose Accept-Encoding offers gzip gets the body gzip-compressed (Content-Encoding).
import gzip
import json
import os
import socket
import ssl
import sys
import threading
import time
import urllib.parse


def usage_json(shape, q, counts):
    a, b = counts
    if shape == "chat":
        return '{"prompt_tokens": %s, "completion_tokens": %s, "total_tokens": 0}' % (a, b)
    if shape == "messages" and "cache" in q:
        c = int(q["cache"])
        return '{"input_tokens": %s, "cache_creation_input_tokens": %d, ' \
               '"cache_read_input_tokens": %d, "output_tokens": %s}' % (a, c, c + 1, b)
    return '{"input_tokens": %s, "output_tokens": %s}' % (a, b)


def counts_of(q):
    if "raw" in q:
        return (q["raw"], q["raw"])
    return (q.get("in", "40"), q.get("out", "30"))


def json_body(shape, q):
    u = usage_json(shape, q, counts_of(q))
    if shape == "chat":
        head = '{"id": "c1", "object": "chat.completion", "choices": [{"index": 0, ' \
               '"message": {"role": "assistant", "content": "hello"}}], '
    elif shape == "responses":
        head = '{"id": "r1", "object": "response", "output": [{"type": "message", ' \
               '"content": [{"type": "output_text", "text": "hello"}]}], '
    else:
        head = '{"id": "m1", "type": "message", "content": [{"type": "text", "text": "hello"}], '
    if q.get("twice") == "1":
        head += '"usage": {"prompt_tokens": 1, "completion_tokens": 1, "input_tokens": 1, ' \
                '"output_tokens": 1}, '
    if "pad" in q:
        head += '"logprobs": "' + "x" * int(q["pad"]) + '", '
    return (head + '"usage": ' + u + '}').encode()


def sse_events(shape, q):
    counts = counts_of(q)
    ev = []
    if shape == "chat":
        for w in ("hel", "lo"):
            ev.append((None, '{"id": "c1", "object": "chat.completion.chunk", "choices": '
                             '[{"index": 0, "delta": {"content": "%s"}}], "usage": null}' % w))
        ev.append((None, '{"id": "c1", "object": "chat.completion.chunk", "choices": [], '
                         '"usage": ' + usage_json(shape, q, counts) + '}'))
        if q.get("twice") == "1":
            ev.append((None, '{"id": "c1", "choices": [], "usage": '
                             '{"prompt_tokens": 1, "completion_tokens": 1}}'))
        ev.append((None, "[DONE]"))
    elif shape == "responses":
        ev.append(("response.created", '{"type": "response.created", "response": '
                                       '{"id": "r1", "status": "in_progress", "usage": null}}'))
        ev.append(("response.output_text.delta",
                   '{"type": "response.output_text.delta", "delta": "hello"}'))
        ev.append(("response.completed", '{"type": "response.completed", "response": '
                                         '{"id": "r1", "status": "completed", "usage": ' +
                   usage_json(shape, q, counts) + '}}'))
        if q.get("twice") == "1":
            ev.append(("response.completed", '{"type": "response.completed", "response": '
                                             '{"usage": {"input_tokens": 1, "output_tokens": 1}}}'))
    else:
        start_usage = '{"input_tokens": %s, "output_tokens": 1}' % counts[0]
        if "cache" in q:
            start_usage = usage_json(shape, q, (counts[0], 1))
        ev.append(("message_start", '{"type": "message_start", "message": {"id": "m1", '
                                    '"usage": %s}}' % start_usage))
        ev.append(("content_block_delta", '{"type": "content_block_delta", "index": 0, '
                                          '"delta": {"type": "text_delta", "text": "hello"}}'))
        ev.append(("message_delta", '{"type": "message_delta", "delta": {"stop_reason": '
                                    '"end_turn"}, "usage": {"output_tokens": %s}}' % counts[1]))
        if q.get("twice") == "1":
            ev.append(("message_delta", '{"type": "message_delta", "usage": '
                                        '{"output_tokens": 1}}'))
        ev.append(("message_stop", '{"type": "message_stop"}'))
    nl = "\r\n" if q.get("crlf") == "1" else "\n"
    out = ": a comment line" + nl + nl
    for name, data in ev:
        if name is not None:
            out += "event: " + name + nl
        out += "data: " + data + nl + nl
    return out.encode()


def read_head(f):
    lines = []
    while True:
        line = f.readline()
        if not line:
            return None
        if line in (b"\r\n", b"\n"):
            return lines
        lines.append(line.decode("latin-1").rstrip("\r\n"))


def handle(conn, log, tls):
    if tls is not None:
        try:
            conn = tls.wrap_socket(conn, server_side=True)
        except (ssl.SSLError, OSError):
            conn.close()
            return
    f = conn.makefile("rb")
    while True:
        lines = read_head(f)
        if not lines:
            break
        method, target, _ = lines[0].split(" ", 2)
        fields = {}
        for l in lines[1:]:
            k, v = l.split(":", 1)
            fields[k.strip().lower()] = v.strip()
        n = int(fields.get("content-length", "0"))
        body = f.read(n) if n > 0 else b""
        with open(log, "a") as lf:
            lf.write("%s %s %d\n" % (method, target, len(body)))
        url = urllib.parse.urlsplit(target)
        q = dict(urllib.parse.parse_qsl(url.query))
        path = url.path
        shape = "chat" if path.endswith("/chat/completions") else \
            "responses" if path.endswith("/responses") else \
            "messages" if path.endswith("/messages") else None
        stream = False
        try:
            stream = bool(json.loads(body or b"{}").get("stream"))
        except ValueError:
            pass
        if shape is None:
            payload, ctype = b"ok\n", "text/plain"
        elif stream:
            payload, ctype = sse_events(shape, q), "text/event-stream"
        else:
            payload, ctype = json_body(shape, q), "application/json"
        if shape is not None and "gzip" in fields.get("accept-encoding", ""):
            # As real servers do when the client offers it: the usage would be unreadable.
            payload = gzip.compress(payload)
            ctype += "\r\nContent-Encoding: gzip"
        framing = q.get("frame", "chunked" if stream else "length")
        cut = q.get("cut") == "1"
        if cut:
            payload = payload[:len(payload) // 2]
        head = "HTTP/1.1 200 OK\r\nContent-Type: %s\r\n" % ctype
        if framing == "length" and not cut:
            head += "Content-Length: %d\r\n" % len(payload)
        elif framing == "length":
            head += "Content-Length: %d\r\n" % (2 * len(payload) + 10)
        elif framing == "chunked":
            head += "Transfer-Encoding: chunked\r\n"
        else:
            head += "Connection: close\r\n"
        conn.sendall((head + "\r\n").encode())
        pieces = [payload[i:i + 1] for i in range(len(payload))] if q.get("slow") == "1" \
            else [payload[i:i + 65536] for i in range(0, len(payload), 65536)] if "pad" in q \
            else [payload[i:i + 64] for i in range(0, len(payload), 64)]
        gate = None
        if "gate" in q and b'"usage": {' in payload:
            at = payload.index(b'"usage": {')
            pieces = [payload[:at], None, payload[at:]]
            gate = os.path.join(os.path.dirname(log), os.path.basename(q["gate"]))
        for p in pieces:
            if p is None:
                for _ in range(2000):
                    if os.path.exists(gate):
                        break
                    time.sleep(0.01)
                continue
            if framing == "chunked":
                conn.sendall(b"%x\r\n" % len(p) + p + b"\r\n")
            else:
                conn.sendall(p)
        if cut or framing == "close":
            break
        if framing == "chunked":
            conn.sendall(b"0\r\n\r\n")
    try:
        conn.shutdown(socket.SHUT_RDWR)
    except OSError:
        pass
    conn.close()


def main():
    port_file, log = sys.argv[1], sys.argv[2]
    tls = None
    if len(sys.argv) > 4:
        tls = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        tls.load_cert_chain(sys.argv[3], sys.argv[4])
    s = socket.socket()
    s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    s.bind(("127.0.0.1", 0))
    s.listen(64)
    with open(port_file + ".tmp", "w") as pf:
        pf.write(str(s.getsockname()[1]))
    os.rename(port_file + ".tmp", port_file)
    while True:
        c, _ = s.accept()
        threading.Thread(target=handle, args=(c, log, tls), daemon=True).start()


if __name__ == "__main__":
    main()
