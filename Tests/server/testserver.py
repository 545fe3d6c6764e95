#!/usr/bin/env python3
"""Local HTTP/1.1 test server for the httpcontent test suites (Swift, C, Python) and demo.

Standard library only (Python 3.11). Binds 127.0.0.1, keep-alive capable
(every response carries Content-Length or uses chunked encoding).

CLI:
    python3 testserver.py [--port 0] [--host 127.0.0.1] [--verbose]
                          [--exit-on-stdin-eof] [--lifetime SECONDS]
Prints exactly one line "PORT <n>" after binding, then serves until
SIGTERM/SIGINT, stdin EOF (with --exit-on-stdin-eof) or the lifetime expires.

Library:
    from testserver import start_server
    server, port = start_server()      # serving in a daemon thread
    server.shutdown()

Endpoints (GET/HEAD/POST/PUT/DELETE/PATCH/OPTIONS; HEAD sends headers only):
    /status/<code>        status <code>; body "status <code>" (none for 204/304)
                          ?json=1 JSON error doc (?message=), ?ctype=, ?body=
    /bytes/<n>            n bytes, byte i = i % 251; ?chunked=1 [&chunk=8192], ?ctype=
    /text                 ?charset=utf-8&text=héllo wörld, ?nocharset=1, ?raw_hex=
    /json                 ?doc=<json text> sent as-is, ?ctype=
    /ctype                ?type=<content-type>&body=<text>, ?none=1 (no Content-Type)
    /gzip/<n>             /bytes/<n> gzip-encoded if Accept-Encoding has gzip
    /gzip-bomb/<n>        n zero bytes, always gzip-encoded
    /redirect/<n>         302 -> /redirect/<n-1>; /redirect/0 is 200 "done"
    /redirect-to          ?url=<url>&status=302
    /redirect-loop        302 -> itself
    /slow                 ?bytes=N&delay=S&chunk=C: C bytes every S seconds
    /stall                ?bytes=N: headers only, then silence (max 60 s)
    /json-hold            ?head=<text>&tail=<text>&hold=S: JSON, chunked: head, then silence for S
                          seconds (default 10; ends early when the client goes away), then tail
    /truncated            ?bytes=N&declared=M: declares M (default 2N), sends N, closes
    /echo                 JSON {method, path, target, query, args, headers, body_hex, body_len}
    /echo/raw             request body back verbatim, X-Request-Content-Type header
    /headers              JSON {"headers": [[name, value], ...]}
    /image/<fmt>          3x2 png|jpeg|gif|webp|bmp, ?ctype=; /image/lying-png (100000x100000)
    /range/<n>            /bytes/<n> honouring a single Range: bytes=a-[b] (206/416); ?norange=1;
                          ?reset_after=K sends K bytes of the range then resets the connection
    /reset                ?bytes=N: declares 2N, sends N, then TCP RST
    /ndjson               ?n=K: K lines {"i": i}, each terminated by "\\n"
    /big-json-array       ?n=K: streamed (chunked) JSON array of K objects
    /cookie               ?set=name=value adds Set-Cookie; JSON {"cookie": <Cookie header or null>}
    /auth-check           JSON {"authorization": <Authorization header or null>}
    /user-agent           body = request User-Agent
    /xml/...              see xmlroutes.py (documents as hex with a Content-Type, streamed feeds)
    /pixels/..., /pixels-expected/...   decoded-image corpus and Pillow's pixels (imageserver.py)
    /records/...          record streams: see recordserver.py
    /flaky, /flaky-reset, /attempts, /basic-auth, /bearer, /digest-auth, /versioned
                          session layer endpoints: see sessionroutes.py
    /proxies, /proxies/log   ports of local HTTP (CONNECT) and SOCKS5 proxies, with and without
                          credentials, and what they saw (see proxyserver.py)
    /plist                property lists (see plistserver.py)
    anything else         404 {"error": {"message": "Not Found"}}
"""

import argparse
import functools
import http.server
import json
import re
import select
import socket
import struct
import sys
import threading
import time
import urllib.parse
import zlib

from xmlroutes import XMLRoutes  # /xml/... endpoints (XML handlers' tests)
from recordserver import RecordEndpoints  # /records/...: record-stream endpoints (SSE, JSON lines)

PATTERN = bytes(range(251))
BLOCK = 64 * 1024
MAX_BODY = 256 * 1024 * 1024          # largest request body accepted
MAX_N = 1 << 36                        # largest generated response size
MAX_GZIP_N = 1 << 32                   # gzip bodies are built in memory (compressed)
DEFAULT_AUTH_MSG = "You are not authorized to access this resource."


class BadRequest(Exception):
    """Raised for malformed input; answered with 400."""


def det_bytes(start, length):
    """Bytes start..start+length-1 of the deterministic stream (byte i = i % 251)."""
    off = start % 251
    reps = (off + length) // 251 + 1
    return (PATTERN * reps)[off:off + length]


def to_int(text, name, lo=0, hi=MAX_N):
    if text is None or not re.fullmatch(r"-?[0-9]{1,20}", text):
        raise BadRequest(f"invalid {name}: {text!r}")
    value = int(text)
    if not lo <= value <= hi:
        raise BadRequest(f"{name} out of range: {value}")
    return value


def to_float(text, name, lo=0.0, hi=10.0):
    try:
        value = float(text)
    except (TypeError, ValueError):
        raise BadRequest(f"invalid {name}: {text!r}")
    if not lo <= value <= hi:  # also rejects NaN
        raise BadRequest(f"{name} out of range: {value}")
    return value


# ---------------------------------------------------------------- images

# Small valid images of each format, built here (the Image handler's tests): imagebuilders.py.
from imagebuilders import IMAGES, make_bmp, make_gif, make_jpeg, make_png, make_webp  # noqa: E402,F401


@functools.lru_cache(maxsize=16)
def gzip_body(n, zeros=False):
    """gzip of n deterministic bytes (or n zero bytes), compressed block by block."""
    comp = zlib.compressobj(9, zlib.DEFLATED, 31)  # wbits 31 = gzip container
    parts, zero_block = [], bytes(1 << 20)
    for off in range(0, n, 1 << 20):
        size = min(1 << 20, n - off)
        parts.append(comp.compress(zero_block[:size] if zeros else det_bytes(off, size)))
    parts.append(comp.flush())
    return b"".join(parts)


# ---------------------------------------------------------------- handler

from sessionroutes import SessionRoutes  # noqa: E402  (session layer endpoints)
from proxyserver import ProxyRoutes  # noqa: E402  (local proxies for the proxy tests)
from cacheroutes import CacheRoutes  # noqa: E402  (/cached/...: the HTTP cache's counting origin)


class Handler(SessionRoutes, ProxyRoutes, CacheRoutes, XMLRoutes, RecordEndpoints, http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server_version = "httpcontent-testserver/1.0"
    timeout = 120  # idle/blocked connections are dropped after this many seconds
    # TCP_NODELAY: headers and body go out in separate writes, and on a kept-alive connection
    # Nagle held the body until the client's delayed ACK, 40 ms per request.
    disable_nagle_algorithm = True

    def log_message(self, fmt, *args):
        if getattr(self.server, "verbose", False):
            sys.stderr.write("%s - %s\n" % (self.address_string(), fmt % args))

    # ------------------------------------------------------------ plumbing

    def _read_body(self):
        te = self.headers.get("Transfer-Encoding", "")
        if "chunked" in te.lower():
            parts, total = [], 0
            while True:  # bounded by MAX_BODY
                line = self.rfile.readline(1024)
                if not line.endswith(b"\n"):
                    raise BadRequest("bad chunk size line")
                size = int(line.split(b";", 1)[0].strip() or b"x", 16)
                if size == 0:
                    break
                total += size
                if total > MAX_BODY:
                    raise BadRequest("request body too large")
                data = self.rfile.read(size)
                if len(data) != size or self.rfile.readline(3) not in (b"\r\n", b"\n"):
                    raise BadRequest("truncated chunk")
                parts.append(data)
            for _ in range(100):  # trailers, up to the empty line
                line = self.rfile.readline(8192)
                if line in (b"\r\n", b"\n", b""):
                    break
            return b"".join(parts)
        length = self.headers.get("Content-Length")
        if length is None:
            return b""
        n = to_int(length.strip(), "Content-Length", 0, MAX_BODY)
        data = self.rfile.read(n)
        if len(data) != n:
            raise BadRequest("truncated body")
        return data

    def _head(self, status, ctype=None, length=None, headers=(), chunked=False):
        self.send_response(status)
        if ctype is not None:
            self.send_header("Content-Type", ctype)
        if chunked:
            self.send_header("Transfer-Encoding", "chunked")
        elif length is not None:
            self.send_header("Content-Length", str(length))
        for name, value in headers:
            self.send_header(name, value)
        self.end_headers()

    def _send(self, status, body=b"", ctype="text/plain; charset=utf-8", headers=()):
        if isinstance(body, str):
            body = body.encode("utf-8")
        self._head(status, ctype, len(body), headers)
        if self.command != "HEAD":
            self.wfile.write(body)

    def _json(self, status, obj, headers=()):
        self._send(status, json.dumps(obj), "application/json", headers)

    def _error(self, status, message):
        self._json(status, {"error": {"message": message}})

    def _write_chunk(self, data):
        if data:
            self.wfile.write(b"%x\r\n%s\r\n" % (len(data), data))

    def _end_chunks(self):
        self.wfile.write(b"0\r\n\r\n")

    def _stopping(self):
        return self.server.stopping.is_set()

    def _q(self, name, default=None):
        values = self.query.get(name)
        return values[0] if values else default

    def _dispatch(self):
        try:
            self._route()
        except (ConnectionError, TimeoutError):  # client went away or idled out
            self.close_connection = True

    def _route(self):
        try:
            self.body = self._read_body()  # always consumed, keeps keep-alive in sync
        except (BadRequest, ValueError) as exc:
            self.close_connection = True
            return self._error(400, str(exc))
        parts = urllib.parse.urlsplit(self.path)
        self.route, self.raw_query = parts.path, parts.query
        self.query = urllib.parse.parse_qs(parts.query, keep_blank_values=True)
        segs = [s for s in self.route.split("/") if s]
        handler = getattr(self, "h_" + segs[0].replace("-", "_"), None) if segs else None
        if handler is None:
            return self._error(404, "Not Found")
        try:
            handler(segs[1:])
        except BadRequest as exc:
            self._error(400, str(exc))

    do_GET = do_HEAD = do_POST = do_PUT = do_DELETE = do_PATCH = do_OPTIONS = _dispatch

    def _one_arg(self, args, name="n"):
        if len(args) != 1:
            raise BadRequest(f"expected /{{{name}}}")
        return args[0]

    def _stream(self, n, offset=0):
        sent = 0
        while sent < n and not self._stopping():
            piece = det_bytes(offset + sent, min(BLOCK, n - sent))
            self.wfile.write(piece)
            sent += len(piece)

    # ------------------------------------------------------------ endpoints

    def h_status(self, args):
        code = to_int(self._one_arg(args, "code"), "status", 200, 599)
        if code in (204, 304):
            return self._head(code)  # no body, no Content-Length
        body = f"status {code}"
        ctype = "text/plain; charset=utf-8"
        if self._q("json") == "1":
            body = json.dumps({"error": {"message": self._q("message", DEFAULT_AUTH_MSG)}})
            ctype = "application/json"
        body = self._q("body", body)
        self._send(code, body, self._q("ctype", ctype))

    def h_bytes(self, args):
        n = to_int(self._one_arg(args), "n")
        ctype = self._q("ctype", "application/octet-stream")
        if self._q("chunked") == "1":
            size = to_int(self._q("chunk", "8192"), "chunk", 1, 1 << 24)
            self._head(200, ctype, chunked=True)
            if self.command == "HEAD":
                return
            sent = 0
            while sent < n and not self._stopping():
                piece = det_bytes(sent, min(size, n - sent))
                self._write_chunk(piece)
                sent += len(piece)
            self._end_chunks()
            return
        self._head(200, ctype, n)
        if self.command != "HEAD":
            self._stream(n)

    def h_text(self, args):
        charset = self._q("charset", "utf-8")
        raw = self._q("raw_hex")
        try:
            if raw is not None:
                data = bytes.fromhex(raw)
            else:
                data = self._q("text", "héllo wörld").encode(charset)
        except (LookupError, ValueError, UnicodeError) as exc:
            raise BadRequest(f"cannot encode: {exc}")
        ctype = "text/plain" if self._q("nocharset") == "1" else f"text/plain; charset={charset}"
        self._send(200, data, ctype)

    def h_json(self, args):
        doc = self._q("doc", '{"hello": "world", "n": [1, 2, 3]}')
        self._send(200, doc, self._q("ctype", "application/json"))

    def h_ctype(self, args):
        ctype = None if self._q("none") == "1" else self._q("type", "application/octet-stream")
        # ?link=V (repeatable): a Link field per value.
        self._send(200, self._q("body", ""), ctype, [("Link", v) for v in self.query.get("link", [])])

    def h_gzip(self, args):
        n = to_int(self._one_arg(args), "n", 0, MAX_GZIP_N)
        vary = [("Vary", "Accept-Encoding")]
        if "gzip" in self.headers.get("Accept-Encoding", "").lower():
            return self._send(200, gzip_body(n), "application/octet-stream",
                              vary + [("Content-Encoding", "gzip")])
        self._head(200, "application/octet-stream", n, vary)
        if self.command != "HEAD":
            self._stream(n)

    def h_gzip_bomb(self, args):
        n = to_int(self._one_arg(args), "n", 0, MAX_GZIP_N)
        self._send(200, gzip_body(n, zeros=True), "application/octet-stream",
                   [("Content-Encoding", "gzip")])

    def _redirect(self, status, location):
        self._send(status, f"redirecting to {location}", headers=[("Location", location)])

    def h_redirect(self, args):
        n = to_int(self._one_arg(args), "n", 0, 1 << 20)
        if n == 0:
            self._send(200, "done")
        else:
            self._redirect(302, f"/redirect/{n - 1}")

    def h_redirect_to(self, args):
        url = self._q("url")
        if not url:
            raise BadRequest("missing url")
        self._redirect(to_int(self._q("status", "302"), "status", 300, 399), url)

    def h_redirect_loop(self, args):
        self._redirect(302, "/redirect-loop")

    def h_slow(self, args):
        n = to_int(self._q("bytes", "10"), "bytes", 0, 1 << 30)
        delay = to_float(self._q("delay", "0.1"), "delay")
        chunk = to_int(self._q("chunk", "1"), "chunk", 1, 1 << 24)
        self._head(200, "application/octet-stream", n)
        if self.command == "HEAD":
            return
        sent = 0
        while sent < n and not self._stopping():
            piece = det_bytes(sent, min(chunk, n - sent))
            self.wfile.write(piece)
            sent += len(piece)
            if sent < n:
                time.sleep(delay)
        if sent < n:
            self.close_connection = True

    def h_stall(self, args):
        n = to_int(self._q("bytes", "100"), "bytes", 1)
        self._head(200, "application/octet-stream", n)
        if self.command == "HEAD":
            return
        self.close_connection = True
        self.wfile.flush()
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline and not self._stopping():
            readable, _, _ = select.select([self.connection], [], [], 0.1)
            if readable:  # stop early once the client has gone away
                try:
                    if self.connection.recv(1, socket.MSG_PEEK) == b"":
                        break
                except OSError:
                    break
                time.sleep(0.1)  # client sent more data: keep ignoring it

    def h_json_hold(self, args):
        hold = to_float(self._q("hold", "10"), "hold")
        self._head(200, "application/json", chunked=True)
        if self.command == "HEAD":
            return
        self._write_chunk(self._q("head", "[").encode())
        self.wfile.flush()
        if self._wait_for_client_gone(hold):
            self.close_connection = True
            return
        self._write_chunk(self._q("tail", "]").encode())
        self._end_chunks()

    def _wait_for_client_gone(self, seconds):
        """Waits up to `seconds`; True as soon as the client has closed the connection."""
        deadline = time.monotonic() + seconds
        while time.monotonic() < deadline and not self._stopping():
            readable, _, _ = select.select([self.connection], [], [], 0.05)
            if readable:
                try:
                    if self.connection.recv(1, socket.MSG_PEEK) == b"":
                        return True
                except OSError:
                    return True
                time.sleep(0.05)
        return False

    def h_truncated(self, args):
        n = to_int(self._q("bytes", "100"), "bytes")
        # Only a header value: up to 20 digits, past what 64 bits hold.
        declared = to_int(self._q("declared", str(2 * n)), "declared", hi=10**20)
        self.close_connection = True
        self._head(200, "application/octet-stream", declared)
        if self.command != "HEAD":
            self._stream(min(n, declared))

    def h_reset(self, args):
        n = to_int(self._q("bytes", "100"), "bytes")
        self.close_connection = True
        self._head(200, "application/octet-stream", 2 * n)
        if self.command == "HEAD":
            return
        self._stream(n)
        self.wfile.flush()
        time.sleep(0.05)  # let the data leave before the RST
        self.connection.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
        self.rfile.close()  # drop the makefile() reference so close() really closes
        self.connection.close()

    def _request_headers(self):
        return [[k, v] for k, v in self.headers.items()]

    def h_echo(self, args):
        if args == ["raw"]:
            ctype = self.headers.get("Content-Type")
            extra = [("X-Request-Content-Type", ctype)] if ctype is not None else []
            return self._send(200, self.body, "application/octet-stream", extra)
        if args:
            return self._error(404, "Not Found")
        self._json(200, {
            "method": self.command,
            "path": self.route,
            "target": self.path,  # as sent: absolute-form when it came through a proxy
            "query": self.raw_query,
            "args": urllib.parse.parse_qsl(self.raw_query, keep_blank_values=True),
            "headers": self._request_headers(),
            "body_hex": self.body.hex(),
            "body_len": len(self.body),
        })

    def h_headers(self, args):
        self._json(200, {"headers": self._request_headers()})

    def h_image(self, args):
        fmt = self._one_arg(args, "fmt")
        if fmt not in IMAGES:
            return self._error(404, f"unknown image format {fmt!r}")
        ctype, data = IMAGES[fmt]
        self._send(200, data, self._q("ctype", ctype))

    def h_range(self, args):
        n = to_int(self._one_arg(args), "n")
        start, end, status = 0, n - 1, 200
        extra = [("Accept-Ranges", "bytes")]
        m = re.fullmatch(r"bytes=\s*(\d*)-(\d*)\s*", self.headers.get("Range", "").strip())
        if m and (m[1] or m[2]) and self._q("norange") != "1":
            first = int(m[1]) if m[1] else None
            last = int(m[2]) if m[2] else None
            if first is None:                       # suffix range: the last `last` bytes
                satisfiable, start = last > 0 and n > 0, max(0, n - last)
            else:
                satisfiable, start = first < n, first
                if last is not None:
                    end = min(last, n - 1)
            if first is not None and last is not None and last < first:
                start, end = 0, n - 1               # invalid spec: ignore the header (RFC 9110)
            elif not satisfiable:
                return self._send(416, "range not satisfiable",
                                  headers=extra + [("Content-Range", f"bytes */{n}")])
            else:
                status = 206
                extra.append(("Content-Range", f"bytes {start}-{end}/{n}"))
        length = end - start + 1
        self._head(status, "application/octet-stream", length, extra)
        if self.command == "HEAD":
            return
        cut = self._q("reset_after")
        if cut is None:
            return self._stream(length, start)
        # ?reset_after=K: send K bytes of the range, then reset the connection (resume tests).
        self.close_connection = True
        self._stream(min(length, to_int(cut, "reset_after")), start)
        self.wfile.flush()
        time.sleep(0.05)
        self.connection.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
        self.rfile.close()
        self.connection.close()

    def h_ndjson(self, args):
        k = to_int(self._q("n", "3"), "n", 0, 1_000_000)
        body = "".join(json.dumps({"i": i}) + "\n" for i in range(k))
        self._send(200, body, "application/x-ndjson")

    def h_big_json_array(self, args):
        k = to_int(self._q("n", "1000"), "n", 0, 100_000_000)
        self._head(200, "application/json", chunked=True)
        if self.command == "HEAD":
            return
        self._write_chunk(b"[")
        i = 0
        while i < k and not self._stopping():
            stop = min(k, i + 1000)
            items = ", ".join(json.dumps({"id": j, "name": f"item {j}", "tags": ["a", "b"],
                                         "value": j * 1.5}) for j in range(i, stop))
            self._write_chunk(((", " if i else "") + items).encode())
            i = stop
        self._write_chunk(b"]")
        self._end_chunks()

    def h_cookie(self, args):
        extra = [("Set-Cookie", f"{c}; Path=/") for c in self.query.get("set", [])]
        self._json(200, {"cookie": self.headers.get("Cookie")}, extra)

    def h_auth_check(self, args):
        self._json(200, {"authorization": self.headers.get("Authorization")})

    def h_user_agent(self, args):
        self._send(200, self.headers.get("User-Agent", ""))


# Decoded-image endpoints (issue 17): a module of their own.
sys.path.insert(0, __import__("os").path.dirname(__file__))
import imageserver  # noqa: E402

imageserver.install(Handler)


# ---------------------------------------------------------------- server

class Server(http.server.ThreadingHTTPServer):
    daemon_threads = True
    request_queue_size = 1024  # concurrency tests open hundreds of connections at once
    block_on_close = False
    allow_reuse_address = True

    def __init__(self, addr, handler=Handler, verbose=False):
        self.verbose = verbose
        self.stopping = threading.Event()
        super().__init__(addr, handler)

    def handle_error(self, request, client_address):
        exc = sys.exc_info()[1]
        if self.verbose or not isinstance(exc, (ConnectionError, TimeoutError)):
            super().handle_error(request, client_address)

    def shutdown(self):
        self.stopping.set()  # lets slow/stall/streaming handlers finish early
        super().shutdown()
        self.server_close()


# --- property-list endpoints (plistserver.py) ---
sys.path.insert(0, __import__("os").path.dirname(__import__("os").path.abspath(__file__)))
from plistserver import h_plist as _h_plist  # noqa: E402
Handler.h_plist = _h_plist


def start_server(host="127.0.0.1", port=0, verbose=False):
    """Start a server in a background daemon thread; returns (server, port)."""
    server = Server((host, port), verbose=verbose)
    thread = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.1},
                              name="testserver", daemon=True)
    thread.start()
    return server, server.server_address[1]


def main(argv=None):
    p = argparse.ArgumentParser(description="httpcontent local test server")
    p.add_argument("--host", default="127.0.0.1")
    p.add_argument("--port", type=int, default=0)
    p.add_argument("--verbose", action="store_true")
    p.add_argument("--exit-on-stdin-eof", action="store_true")
    p.add_argument("--lifetime", type=float, default=0.0)
    opts = p.parse_args(argv)

    server, port = start_server(opts.host, opts.port, opts.verbose)
    from serverloop import serve_until_done
    return serve_until_done(server, port, opts.exit_on_stdin_eof, opts.lifetime)


if __name__ == "__main__":
    sys.exit(main())
