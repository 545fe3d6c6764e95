#!/usr/bin/env python3
"""A local HTTP server that misbehaves on purpose, for the hostile-server suites (Swift, C, Python).

Standard library only (Python 3.11), raw sockets (one thread per connection), so it can break
HTTP in ways http.server will not. Binds 127.0.0.1 and, on the same port, 127.0.0.2 when that
address can be bound (else the "other host" is `localhost`), so redirects can cross to a
different host without leaving the machine. Every loop is bounded in count and time (60 s).

CLI (the same contract as testserver.py):
    python3 hostile.py [--port 0] [--exit-on-stdin-eof] [--lifetime SECONDS]
                       [--tls-cert CERT.pem --tls-key KEY.pem] [--verbose]
Prints exactly one line "PORT <n>" after binding, then serves until SIGTERM/SIGINT, stdin EOF
(with --exit-on-stdin-eof) or the lifetime expires. With --tls-cert/--tls-key it speaks HTTPS.

Library:
    from hostile import start_server
    server, port = start_server()            # serving in daemon threads
    server.other_host                        # "127.0.0.2" or "localhost"
    server.shutdown()

Paths (GET; each answers once and closes unless it says otherwise):
    /plain                  200 "genuine" (keep-alive)
    /overlong?declared=N    Content-Length N, then N bytes, then a forged second response
                            ("HTTP/1.1 200 OK ... forged") in the same write; keeps the
                            connection open and answers the next request on it normally
    /truncated?bytes=N      declares 2N, sends N, closes
    /bad-chunk/<kind>       chunked body broken: hex (size "zz"), crlf (data not followed by
                            CRLF), overflow (a size of 20 hex digits), eof (closes mid-chunk)
    /endless-headers        ?delay=S (0.05): a new header line every S seconds, never the blank
                            line (60 s at most)
    /header-flood           header lines as fast as the client reads them, never the blank line
                            (60 s or 1 GiB at most)
    /long-header?size=N     one header line of N bytes (default 100 KiB + 1 KiB)
    /bad-gzip               Content-Encoding: gzip over bytes that are not gzip
    /gzip-bomb?mb=N         N MiB of zeros (default 64), gzip-encoded (~290 KiB on the wire)
    /redirect-scheme/<s>    302 to file:///etc/passwd, ftp://, gopher://, dict://, scp://, ldap://
                            or telnet:// (s = file|ftp|gopher|dict|scp|ldap|telnet)
    /redirect-garbage       302 to a Location that is not a URL at all (control bytes, no scheme)
    /redirect-loop          302 to itself
    /redirect-chain/<n>     302 -> /redirect-chain/<n-1>; 0 is 200 "done"
    /auth-redirect          302 to /auth-echo on the other host (?same=1: on this host)
    /auth-echo              JSON {"host", "authorization", "cookie"} as received
    /deep-json?depth=N      "[" * N + "]" * N (default 1,000,000), streamed chunked
    /bad-utf8/<kind>        text/plain; charset=utf-8, b"abc" + bad sequence + b"def": invalid
                            (0xff), overlong (c0 af), surrogate (ed a0 80), too-big (f4 90 80 80),
                            truncated (e2 82 at the very end), continuation (80)
    /lying-image/<kind>     png (100000x100000), gif (65535x65535), bmp (1000000x1000000),
                            jpeg (65535x65535), zero (png 0x0), short (png cut after 12 bytes)
    /reset-mid-body?bytes=N declares 2N, sends N, then TCP RST
    /drip?bytes=N&interval=S  declares N, sends one byte every S seconds (60 s at most)
    /endless                chunked 64 KiB chunks forever (60 s or 4 GiB at most)
    /disposition?name=X     Content-Disposition: attachment; filename="X", body "payload"
    /hits?path=P            JSON {"hits": how many requests for path P arrived so far}
    anything else           404
"""

import argparse
import json
import socket
import ssl
import struct
import sys
import threading
import time
import urllib.parse
import zlib

LIMIT_SECONDS = 60          # no misbehaviour lasts longer than this
MAX_REQUEST_HEAD = 64 * 1024
PATTERN = bytes(range(251))


def det_bytes(n, start=0):
    off = start % 251
    return (PATTERN * ((off + n) // 251 + 1))[off:off + n]


def _png(width, height):
    def chunk(kind, data):
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data))
    ihdr = struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0)
    return (b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", ihdr)
            + chunk(b"IDAT", zlib.compress(b"\x00" * 10)) + chunk(b"IEND", b""))


def _gif(width, height):
    return b"GIF89a" + struct.pack("<HHBBB", width, height, 0, 0, 0) + b"\x3b"


def _bmp(width, height):
    info = struct.pack("<IiiHHIIiiII", 40, width, height, 1, 24, 0, 0, 2835, 2835, 0, 0)
    return b"BM" + struct.pack("<IHHI", 14 + len(info), 0, 0, 14 + len(info)) + info


def _jpeg(width, height):
    sof0 = struct.pack(">BHHB", 8, height, width, 1) + b"\x01\x11\x00"
    return b"\xff\xd8\xff\xc0" + struct.pack(">H", len(sof0) + 2) + sof0 + b"\xff\xd9"


LYING_IMAGES = {
    "png": ("image/png", _png(100000, 100000)),
    "gif": ("image/gif", _gif(65535, 65535)),
    "bmp": ("image/bmp", _bmp(1000000, 1000000)),
    "jpeg": ("image/jpeg", _jpeg(65535, 65535)),
    "zero": ("image/png", _png(0, 0)),
    "short": ("image/png", _png(3, 2)[:12]),
}

BAD_UTF8 = {
    "invalid": b"\xff",
    "overlong": b"\xc0\xaf",
    "surrogate": b"\xed\xa0\x80",
    "too-big": b"\xf4\x90\x80\x80",
    "continuation": b"\x80",
}

SCHEMES = {
    "file": "file:///etc/passwd",
    "ftp": "ftp://{host}:{port}/etc/passwd",
    "gopher": "gopher://{host}:{port}/1/etc/passwd",
    "dict": "dict://{host}:{port}/d:passwd",
    "scp": "scp://{host}:{port}/etc/passwd",
    "ldap": "ldap://{host}:{port}/dc=example",
    "telnet": "telnet://{host}:{port}/",
}


class Closed(Exception):
    """The client went away, or the connection must end."""


class Connection:
    """One accepted connection: reads request heads, writes raw bytes."""

    def __init__(self, server, sock):
        self.server = server
        self.sock = sock
        self.buf = b""
        self.keep_alive = False

    def read_head(self):
        """The next request's (method, target, headers dict with lowercase names), or None."""
        deadline = time.monotonic() + 10
        while b"\r\n\r\n" not in self.buf:
            if len(self.buf) > MAX_REQUEST_HEAD or time.monotonic() > deadline or self.stopping():
                return None
            try:
                self.sock.settimeout(0.2)
                data = self.sock.recv(65536)
            except (socket.timeout, TimeoutError):
                continue
            except (OSError, ssl.SSLError):
                return None
            if not data:
                return None
            self.buf += data
        head, self.buf = self.buf.split(b"\r\n\r\n", 1)
        lines = head.decode("latin-1").split("\r\n")
        parts = lines[0].split(" ")
        if len(parts) != 3:
            return None
        headers = {}
        for line in lines[1:]:
            name, _, value = line.partition(":")
            headers.setdefault(name.strip().lower(), value.strip())
        length = int(headers.get("content-length", "0") or 0)
        while len(self.buf) < length:  # requests here carry no body to speak of; drop it
            data = self.sock.recv(65536)
            if not data:
                return None
            self.buf += data
        self.buf = self.buf[length:]
        return parts[0], parts[1], headers

    def stopping(self):
        return self.server.stopping.is_set()

    def send(self, data):
        try:
            self.sock.settimeout(5)
            self.sock.sendall(data)
        except (OSError, ssl.SSLError):
            raise Closed()

    def respond(self, status, body=b"", ctype="text/plain; charset=utf-8", headers=(), close=True):
        if isinstance(body, str):
            body = body.encode()
        lines = [f"HTTP/1.1 {status} {REASONS.get(status, 'Whatever')}"]
        if ctype:
            lines.append(f"Content-Type: {ctype}")
        lines.append(f"Content-Length: {len(body)}")
        lines += [f"{k}: {v}" for k, v in headers]
        if close:
            lines.append("Connection: close")
        self.keep_alive = not close
        self.send(("\r\n".join(lines) + "\r\n\r\n").encode("latin-1") + body)

    def head_only(self, status, fields):
        """Sends a status line and header fields, with the blank line: the body is up to the caller."""
        lines = [f"HTTP/1.1 {status} {REASONS.get(status, 'Whatever')}"] + [f"{k}: {v}" for k, v in fields]
        self.send(("\r\n".join(lines) + "\r\n\r\n").encode("latin-1"))

    def reset(self):
        """Ends the connection with a TCP RST instead of a FIN."""
        time.sleep(0.05)  # let the data already written leave first
        try:
            self.sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
        except OSError:
            pass
        raise Closed()

    def sleep(self, seconds):
        """Waits, but returns False early when the server stops."""
        return not self.server.stopping.wait(seconds)


REASONS = {200: "OK", 302: "Found", 404: "Not Found", 400: "Bad Request"}


class Routes:
    """One method per path; each gets the connection, the parsed query and the request headers."""

    def __init__(self, server):
        self.server = server

    @staticmethod
    def _int(query, name, default, lo=0, hi=1 << 40):
        try:
            value = int(query.get(name, [str(default)])[0])
        except ValueError:
            value = default
        return max(lo, min(hi, value))

    @staticmethod
    def _float(query, name, default, lo=0.0, hi=10.0):
        try:
            value = float(query.get(name, [str(default)])[0])
        except ValueError:
            value = default
        return max(lo, min(hi, value))

    def plain(self, c, args, q, h):
        c.respond(200, "genuine", close=False)

    def overlong(self, c, args, q, h):
        n = self._int(q, "declared", 10, 0, 1 << 20)
        forged = b"HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nContent-Length: 6\r\n\r\nforged"
        c.keep_alive = True
        c.send(b"HTTP/1.1 200 OK\r\nContent-Type: application/octet-stream\r\n"
               + f"Content-Length: {n}\r\n\r\n".encode() + det_bytes(n) + forged + b"X" * 1000)

    def truncated(self, c, args, q, h):
        n = self._int(q, "bytes", 1000, 0, 1 << 24)
        c.head_only(200, [("Content-Type", "application/octet-stream"), ("Content-Length", 2 * n)])
        c.send(det_bytes(n))

    def bad_chunk(self, c, args, q, h):
        kind = args[0] if args else "hex"
        body = {
            "hex": b"5\r\nhello\r\nzz\r\nworld\r\n0\r\n\r\n",
            "crlf": b"5\r\nhelloXX5\r\nworld\r\n0\r\n\r\n",
            "overflow": b"5\r\nhello\r\nfffffffffffffffffffff\r\nworld\r\n0\r\n\r\n",
            "eof": b"5\r\nhello\r\n400\r\n" + b"x" * 100,
        }.get(kind)
        if body is None:
            return c.respond(404, "unknown kind")
        c.head_only(200, [("Content-Type", "application/octet-stream"), ("Transfer-Encoding", "chunked")])
        c.send(body)
        c.sleep(0.05)

    def endless_headers(self, c, args, q, h):
        delay = self._float(q, "delay", 0.05, 0.001, 5)
        c.send(b"HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\n")
        deadline = time.monotonic() + LIMIT_SECONDS
        i = 0
        while time.monotonic() < deadline and c.sleep(delay):
            c.send(f"X-Trickle-{i}: {i}\r\n".encode())
            i += 1

    def header_flood(self, c, args, q, h):
        c.send(b"HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\n")
        block = b"".join(b"X-Flood-%d: %s\r\n" % (i, b"f" * 64) for i in range(1000))
        deadline, sent = time.monotonic() + LIMIT_SECONDS, 0
        while time.monotonic() < deadline and sent < (1 << 30) and not c.stopping():
            c.send(block)
            sent += len(block)

    def long_header(self, c, args, q, h):
        n = self._int(q, "size", 100 * 1024 + 1024, 10, 16 << 20)
        line = b"X-Long: " + b"a" * (n - 8)
        c.send(b"HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\n" + line
               + b"\r\nContent-Length: 2\r\nConnection: close\r\n\r\nok")

    def bad_gzip(self, c, args, q, h):
        c.respond(200, b"this is not gzip at all, just text pretending" * 20,
                  "application/octet-stream", [("Content-Encoding", "gzip")])

    def gzip_bomb(self, c, args, q, h):
        mb = self._int(q, "mb", 64, 1, 1024)
        body = _gzip_zeros(mb)
        c.respond(200, body, "application/octet-stream", [("Content-Encoding", "gzip")])

    def redirect_scheme(self, c, args, q, h):
        target = SCHEMES.get(args[0] if args else "")
        if target is None:
            return c.respond(404, "unknown scheme")
        c.respond(302, "redirecting", headers=[("Location", target.format(host="127.0.0.1", port=self.server.port))])

    def redirect_garbage(self, c, args, q, h):
        c.send(b"HTTP/1.1 302 Found\r\nLocation: \x01\x02\xff://\r\nContent-Length: 0\r\n"
               b"Connection: close\r\n\r\n")

    def redirect_loop(self, c, args, q, h):
        c.respond(302, "again", headers=[("Location", "/redirect-loop")], close=False)

    def redirect_chain(self, c, args, q, h):
        try:
            n = max(0, min(1000, int(args[0]))) if args else 0
        except ValueError:
            n = 0
        if n == 0:
            return c.respond(200, "done", close=False)
        c.respond(302, "next", headers=[("Location", f"/redirect-chain/{n - 1}")], close=False)

    def auth_redirect(self, c, args, q, h):
        if q.get("same") == ["1"]:
            location = "/auth-echo"
        else:
            location = f"http://{self.server.other_host}:{self.server.port}/auth-echo"
        c.respond(302, "elsewhere", headers=[("Location", location)])

    def auth_echo(self, c, args, q, h):
        c.respond(200, json.dumps({"host": h.get("host"), "authorization": h.get("authorization"),
                                   "cookie": h.get("cookie")}), "application/json")

    def deep_json(self, c, args, q, h):
        depth = self._int(q, "depth", 1_000_000, 1, 50_000_000)
        c.head_only(200, [("Content-Type", "application/json"), ("Transfer-Encoding", "chunked"),
                          ("Connection", "close")])
        for ch in (b"[", b"]"):
            left = depth
            while left and not c.stopping():
                piece = ch * min(65536, left)
                c.send(b"%x\r\n%s\r\n" % (len(piece), piece))
                left -= len(piece)
        c.send(b"0\r\n\r\n")

    def bad_utf8(self, c, args, q, h):
        kind = args[0] if args else "invalid"
        if kind == "truncated":
            body = b"abc\xe2\x82"
        elif kind in BAD_UTF8:
            body = b"abc" + BAD_UTF8[kind] + b"def"
        else:
            return c.respond(404, "unknown kind")
        c.respond(200, body, "text/plain; charset=utf-8")

    def lying_image(self, c, args, q, h):
        entry = LYING_IMAGES.get(args[0] if args else "")
        if entry is None:
            return c.respond(404, "unknown kind")
        c.respond(200, entry[1], entry[0])

    def reset_mid_body(self, c, args, q, h):
        n = self._int(q, "bytes", 50000, 1, 1 << 24)
        c.head_only(200, [("Content-Type", "application/octet-stream"), ("Content-Length", 2 * n)])
        c.send(det_bytes(n))
        c.reset()

    def drip(self, c, args, q, h):
        n = self._int(q, "bytes", 1000, 1, 1 << 20)
        interval = self._float(q, "interval", 0.25, 0.01, 5)
        c.head_only(200, [("Content-Type", "application/octet-stream"), ("Content-Length", n)])
        deadline = time.monotonic() + LIMIT_SECONDS
        for i in range(n):
            if time.monotonic() > deadline:
                break
            c.send(det_bytes(1, i))
            if not c.sleep(interval):
                break

    def endless(self, c, args, q, h):
        c.head_only(200, [("Content-Type", "application/octet-stream"), ("Transfer-Encoding", "chunked")])
        piece = det_bytes(65536)
        frame = b"%x\r\n%s\r\n" % (len(piece), piece)
        deadline, sent = time.monotonic() + LIMIT_SECONDS, 0
        while time.monotonic() < deadline and sent < (4 << 30) and not c.stopping():
            c.send(frame)
            sent += len(piece)

    def disposition(self, c, args, q, h):
        name = q.get("name", ["../escaped.bin"])[0].replace('"', "")
        c.respond(200, "payload", "application/octet-stream",
                  [("Content-Disposition", f'attachment; filename="{name}"')])

    def hits(self, c, args, q, h):
        path = q.get("path", [""])[0]
        with self.server.lock:
            count = self.server.hits.get(path, 0)
        c.respond(200, json.dumps({"hits": count}), "application/json", close=False)


_gzip_cache = {}
_gzip_lock = threading.Lock()


def _gzip_zeros(mb):
    # Made once per size (64 MiB takes seconds on a busy machine: longer than a test's timeout),
    # under a lock so concurrent requests wait for the one being made; the default size is made
    # when the server starts (see HostileServer.__init__).
    with _gzip_lock:
        if mb not in _gzip_cache:
            comp = zlib.compressobj(1, zlib.DEFLATED, 31)   # fast: ~290 KiB for 64 MiB, 1:229
            block = bytes(1 << 20)
            _gzip_cache[mb] = b"".join(comp.compress(block) for _ in range(mb)) + comp.flush()
        return _gzip_cache[mb]


class HostileServer:
    """Listens on 127.0.0.1 (and 127.0.0.2 when possible) and serves each connection in a thread."""

    def __init__(self, port=0, tls=None, verbose=False):
        self.verbose = verbose
        self.stopping = threading.Event()
        self.lock = threading.Lock()
        self.hits = {}
        self.routes = Routes(self)
        self.context = None
        if tls:
            self.context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
            self.context.load_cert_chain(tls[0], tls[1])
        threading.Thread(target=_gzip_zeros, args=(64,), daemon=True, name="hostile-bomb").start()
        self.listeners = [self._listen("127.0.0.1", port)]
        self.port = self.listeners[0].getsockname()[1]
        self.other_host = "localhost"
        try:
            self.listeners.append(self._listen("127.0.0.2", self.port))
            self.other_host = "127.0.0.2"
        except OSError:
            pass
        self.threads = [threading.Thread(target=self._accept, args=(s,), daemon=True, name="hostile-accept")
                        for s in self.listeners]
        for t in self.threads:
            t.start()

    @staticmethod
    def _listen(host, port):
        s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        s.bind((host, port))
        s.listen(256)
        s.settimeout(0.1)
        return s

    def _accept(self, listener):
        while not self.stopping.is_set():
            try:
                sock, _ = listener.accept()
            except (socket.timeout, TimeoutError):
                continue
            except OSError:
                return
            threading.Thread(target=self._serve, args=(sock,), daemon=True, name="hostile-conn").start()

    def _serve(self, sock):
        try:
            if self.context is not None:
                sock.settimeout(5)
                sock = self.context.wrap_socket(sock, server_side=True)
            conn = Connection(self, sock)
            for _ in range(1000):  # requests per connection
                request = conn.read_head()
                if request is None:
                    break
                method, target, headers = request
                parts = urllib.parse.urlsplit(target)
                with self.lock:
                    self.hits[parts.path] = self.hits.get(parts.path, 0) + 1
                if self.verbose:
                    sys.stderr.write(f"hostile: {method} {target}\n")
                segs = [s for s in parts.path.split("/") if s]
                route = getattr(self.routes, segs[0].replace("-", "_"), None) if segs else None
                conn.keep_alive = False
                if route is None or segs[0].startswith("_"):
                    conn.respond(404, "Not Found")
                else:
                    route(conn, segs[1:], urllib.parse.parse_qs(parts.query), headers)
                if not conn.keep_alive:
                    break
        except (Closed, OSError, ssl.SSLError):
            pass
        finally:
            try:
                sock.close()
            except OSError:
                pass

    def shutdown(self):
        self.stopping.set()
        for s in self.listeners:
            try:
                s.close()
            except OSError:
                pass
        for t in self.threads:
            t.join(1)


def start_server(port=0, tls=None, verbose=False):
    """Start a hostile server in background daemon threads; returns (server, port).
    `tls` is an optional (certfile, keyfile) pair: the server then speaks HTTPS."""
    server = HostileServer(port, tls, verbose)
    return server, server.port


def main(argv=None):
    p = argparse.ArgumentParser(description="httpcontent hostile test server")
    p.add_argument("--port", type=int, default=0)
    p.add_argument("--verbose", action="store_true")
    p.add_argument("--exit-on-stdin-eof", action="store_true")
    p.add_argument("--lifetime", type=float, default=0.0)
    p.add_argument("--tls-cert")
    p.add_argument("--tls-key")
    opts = p.parse_args(argv)

    tls = (opts.tls_cert, opts.tls_key) if opts.tls_cert else None
    server, port = start_server(opts.port, tls, opts.verbose)
    from serverloop import serve_until_done
    return serve_until_done(server, port, opts.exit_on_stdin_eof, opts.lifetime)


if __name__ == "__main__":
    sys.exit(main())
