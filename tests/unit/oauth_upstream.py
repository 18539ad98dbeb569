#!/usr/bin/python3
# oauth_upstream.py -- a small OAuth 2.0 authorization server and protected API for
# tests/unit/test_proxy_oauth.c (RFC 6749 client-credentials and refresh grants, RFC 6750 bearer
# tokens), written on the standard library's http.server, so that the proxy's token response
# interception meets the shapes a real server sends.
#
#   oauth_upstream.py PORT_FILE LOG_FILE
#
# Binds 127.0.0.1:0, writes the port to PORT_FILE (through a rename: its presence means the port
# accepts connections). Every request is appended to LOG_FILE as one JSON line: method, path,
# headers (name, value pairs as received), body (latin-1 text), and for token answers the real
# tokens issued ("issued": [...]), so a test can check what reached the server and that no real
# token ever reached the agent.
#
# Client authentication (RFC 6749 2.3.1): client "app" with secret CLIENT_SECRET, either as
# client_secret in the form body (client_secret_post) or as Authorization: Basic
# base64("app:" + CLIENT_SECRET) (client_secret_basic). A refresh grant needs only a valid
# refresh token (a public client's refresh, RFC 6749 section 6).
#
#   POST /token/json, /btoken/json   client_credentials or refresh_token grant, JSON answer
#   POST /token/form, /btoken/form   the same, answered application/x-www-form-urlencoded
#   POST /token/chunked              the JSON answer, chunked
#   POST /token/<attack>             an answer a dishonest or odd server sends (see ATTACKS);
#                                    each holds the bytes ATTACK_TOKEN somewhere
#   POST /token/error                400 {"error": "invalid_grant", ...} (an OAuth error)
#   POST /token/cut, /token/badchunk a token answer cut short, or with a malformed chunk
#   GET  /api/..., /bapi/...         200 {"ok": true} with Authorization: Bearer <a live access
#                                    token>, else 401
# Access tokens are "AT-" and refresh tokens "RT-" followed by 32 hex digits; a refresh rotates
# the refresh token (the old one is dead).
import base64
import http.server
import json
import os
import secrets
import sys
import threading
import urllib.parse

CLIENT_SECRET = "cs+5f0c/2a9e=&x"  # bytes a form must escape
ATTACK_TOKEN = "AT-attack-0123456789abcdef"

LOCK = threading.Lock()
ACCESS = set()
REFRESH = set()
LOG_PATH = None

ATTACKS = {
    # two members of one name: parsers keep one or the other
    "dup": ('application/json', '{"access_token":"x","access_token":"%s","token_type":"Bearer"}'
            % ATTACK_TOKEN, []),
    # a number instead of a string
    "number": ('application/json', '{"access_token":12345,"token_type":"Bearer","x":"%s"}'
               % ATTACK_TOKEN, []),
    # a token nested below the top level, which a swap of the top level would miss
    "nested": ('application/json', '{"access_token":"AT-1","token_type":"Bearer",'
               '"data":{"access_token":"%s"}}' % ATTACK_TOKEN, []),
    # the token a second time under another name
    "twice": ('application/json', '{"access_token":"%s","token_type":"Bearer","copy":"%s"}'
              % (ATTACK_TOKEN, ATTACK_TOKEN), []),
    # the token in a header as well
    "header": ('application/json', '{"access_token":"%s","token_type":"Bearer"}' % ATTACK_TOKEN,
               [("X-Token", ATTACK_TOKEN)]),
    # the token only in a header (the body has none)
    "headeronly": ('application/json', '{"token_type":"Bearer","status":"ok"}',
                   [("X-Access-Token", ATTACK_TOKEN)]),
    # the token in a cookie
    "cookie": ('application/json', '{"access_token":"AT-2","token_type":"Bearer"}',
               [("Set-Cookie", "session=%s; HttpOnly" % ATTACK_TOKEN)]),
    # an OpenID Connect id_token
    "idtoken": ('application/json', '{"access_token":"AT-3","token_type":"Bearer","id_token":"%s"}'
                % ATTACK_TOKEN, []),
    # another token type (DPoP, RFC 9449)
    "dpop": ('application/json', '{"access_token":"%s","token_type":"DPoP"}' % ATTACK_TOKEN, []),
    # neither JSON nor a form
    "text": ('text/plain', 'access_token=%s' % ATTACK_TOKEN, []),
    # a form answer with the token twice
    "formdup": ('application/x-www-form-urlencoded',
                'access_token=%s&token_type=bearer&access%%5Ftoken=%s' % (ATTACK_TOKEN, ATTACK_TOKEN),
                []),
    # too large for oauth.response_max
    "large": ('application/json', '{"access_token":"%s","token_type":"Bearer","pad":"%s"}'
              % (ATTACK_TOKEN, "x" * 70000), []),
    # an error answer that carries a token all the same
    "errortoken": ('application/json', '{"error":"invalid_grant","acc\\u0065ss_token":"%s"}'
                   % ATTACK_TOKEN, [], 400),
    # an escaped member name: a real token response, to be swapped like any other
    # (red team of issue 16, B) the token a second time under another name, escaped: a search
    # of the swapped body's bytes does not find it, the agent's JSON parser decodes it
    "twiceescaped": ('application/json', '{"access_token":"%s","token_type":"Bearer",'
                     '"copy":"\\u0041%s"}' % (ATTACK_TOKEN, ATTACK_TOKEN[1:]), []),
    # the same in a form answer, percent-encoded
    # (red team of issue 16, B) the token as a header field's name, not its value
    "headername": ('application/json', '{"access_token":"%s","token_type":"Bearer"}' % ATTACK_TOKEN,
                   [(ATTACK_TOKEN, "1")]),
    "formtwiceenc": ('application/x-www-form-urlencoded',
                     'access_token=%s&token_type=bearer&copy=%%41%s'
                     % (ATTACK_TOKEN, ATTACK_TOKEN[1:]), []),
}


def log(entry):
    with LOCK:
        with open(LOG_PATH, "a") as f:
            f.write(json.dumps(entry) + "\n")


def new_pair():
    at = "AT-" + secrets.token_hex(16)
    rt = "RT-" + secrets.token_hex(16)
    with LOCK:
        ACCESS.add(at)
        REFRESH.add(rt)
    return at, rt


class Handler(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, fmt, *args):
        pass

    def answer(self, status, ctype, body, headers=(), chunked=False, reason=None):
        data = body.encode("latin-1")
        self.send_response(status, reason)
        self.send_header("Content-Type", ctype)
        self.send_header("Cache-Control", "no-store")
        for k, v in headers:
            self.send_header(k, v)
        if chunked:
            self.send_header("Transfer-Encoding", "chunked")
            self.end_headers()
            half = len(data) // 2
            for part in (data[:half], data[half:]):
                self.wfile.write(b"%x\r\n%s\r\n" % (len(part), part))
            self.wfile.write(b"0\r\n\r\n")
        else:
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

    def client_ok(self, form):
        auth = self.headers.get("Authorization", "")
        if auth.startswith("Basic "):
            try:
                user, _, pw = base64.b64decode(auth[6:]).decode().partition(":")
            except Exception:
                return False
            return user == "app" and pw == CLIENT_SECRET
        return form.get("client_id") == ["app"] and form.get("client_secret") == [CLIENT_SECRET]

    def token(self, kind, form):
        grant = form.get("grant_type", [""])[0]
        if grant == "client_credentials":
            if not self.client_ok(form):
                return self.answer(401, "application/json",
                                   '{"error":"invalid_client","error_description":"bad secret"}')
        elif grant == "refresh_token":
            rt = form.get("refresh_token", [""])[0]
            with LOCK:
                live = rt in REFRESH
                REFRESH.discard(rt)
            if not live:
                return self.answer(400, "application/json",
                                   '{"error":"invalid_grant","error_description":'
                                   '"the refresh_token is unknown or used"}')
        else:
            return self.answer(400, "application/json", '{"error":"unsupported_grant_type"}')
        at, rt = new_pair()
        log({"issued": [at, rt]})
        if kind == "form":
            return self.answer(200, "application/x-www-form-urlencoded",
                               urllib.parse.urlencode({"access_token": at, "token_type": "bearer",
                                                       "expires_in": "3600", "refresh_token": rt}))
        body = json.dumps({"access_token": at, "token_type": "Bearer", "expires_in": 3600,
                           "refresh_token": rt, "scope": "read"})
        return self.answer(200, "application/json;charset=UTF-8", body,
                           chunked=(kind == "chunked"))

    def do_POST(self):
        n = int(self.headers.get("Content-Length", "0"))
        body = self.rfile.read(n).decode("latin-1")
        log({"method": "POST", "path": self.path, "headers": list(self.headers.items()),
             "body": body})
        parts = self.path.split("?")[0].strip("/").split("/")
        if len(parts) != 2 or parts[0] not in ("token", "btoken"):
            return self.answer(404, "text/plain", "no\n")
        kind = parts[1]
        form = urllib.parse.parse_qs(body, keep_blank_values=True)
        if kind in ("json", "form", "chunked"):
            return self.token(kind, form)
        if kind == "error":
            return self.answer(400, "application/json",
                               '{"error":"invalid_grant","error_description":'
                               '"the refresh_token expired"}')
        if kind == "escaped":
            at, rt = new_pair()
            log({"issued": [at, rt]})
            return self.answer(200, "application/json",
                               '{"acc\\u0065ss_token":"%s","token_type":"bearer",'
                               '"refresh\\u005ftoken":"%s"}' % (at, rt))
        if kind == "cut":
            # a token answer cut short: the length promises more than comes, then a close
            data = ('{"access_token":"%s","token_type":"Bearer"' % ATTACK_TOKEN).encode()
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data) + 100))
            self.end_headers()
            self.wfile.write(data)
            self.wfile.flush()
            self.close_connection = True
            return None
        if kind == "badchunk":
            # a chunked token answer with a malformed chunk size after the token
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Transfer-Encoding", "chunked")
            self.end_headers()
            data = ('{"access_token":"%s",' % ATTACK_TOKEN).encode()
            self.wfile.write(b"%x\r\n%s\r\nzz\r\n" % (len(data), data))
            self.wfile.flush()
            self.close_connection = True
            return None
        if kind == "reason":
            # (red team of issue 16, B) the token as the status line's reason phrase
            return self.answer(200, "application/json",
                               '{"access_token":"%s","token_type":"Bearer"}' % ATTACK_TOKEN,
                               reason=ATTACK_TOKEN)
        if kind in ATTACKS:
            a = ATTACKS[kind]
            return self.answer(a[3] if len(a) > 3 else 200, a[0], a[1], a[2])
        return self.answer(404, "text/plain", "no\n")

    def do_GET(self):
        log({"method": "GET", "path": self.path, "headers": list(self.headers.items())})
        auth = self.headers.get("Authorization", "")
        with LOCK:
            ok = auth.startswith("Bearer ") and auth[7:] in ACCESS
        if self.path.startswith(("/api/", "/bapi/")) and ok:
            return self.answer(200, "application/json", '{"ok":true}')
        return self.answer(401, "application/json", '{"error":"invalid_token"}',
                           [("WWW-Authenticate", 'Bearer error="invalid_token"')])


def main():
    global LOG_PATH
    port_file, LOG_PATH = sys.argv[1], sys.argv[2]
    srv = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    tmp = port_file + ".tmp"
    with open(tmp, "w") as f:
        f.write("%d\n" % srv.server_address[1])
    os.rename(tmp, port_file)
    srv.serve_forever()


if __name__ == "__main__":
    main()
