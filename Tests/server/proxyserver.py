"""Tiny proxies for the proxy tests of every front, started lazily inside the test server
process (GET /proxies gives their ports, /proxies/log what they saw). Standard library only;
loopback only: a target other than 127.0.0.1, ::1 or localhost is refused, so no test traffic
can leave the machine.

    http         an HTTP proxy: CONNECT host:port tunnels (https through an http proxy), and
                 absolute-form requests ("GET http://host:port/path") forwarded as they came
    http_auth    the same, requiring "Proxy-Authorization: Basic" for user "pu", password "pp"
                 (else 407 with Proxy-Authenticate)
    socks5       a SOCKS5 proxy (RFC 1928, CONNECT only, no authentication)
    socks5_auth  the same, requiring username/password authentication (RFC 1929) pu / pp

Each proxy logs one entry per request or tunnel: {"proxy": name, "kind": "connect" |
"forward" | "socks5", "target": "host:port" (for socks5, the address as the client sent it:
an IP when it resolved the name itself, the name with socks5h), "atyp": "ipv4" | "domain" |
"ipv6" (socks5), "auth": true when credentials were given and right}. Bounded: every socket
times out after 30 s of silence, and at most 64 connections are served at once per proxy.
"""

import base64
import ipaddress
import json
import select
import socket
import socketserver
import struct
import threading

USER, PASSWORD = "pu", "pp"
_LOOPBACK_NAMES = {"localhost", "127.0.0.1", "::1"}
_IDLE = 30.0

_lock = threading.Lock()
_log = []
_ports = {}


def _record(entry):
    with _lock:
        _log.append(entry)


def log_entries(since=0):
    with _lock:
        return list(_log[since:])


def _loopback(host):
    if host.lower() in _LOOPBACK_NAMES:
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def _relay(a, b):
    """Copies bytes both ways until either side closes or both are silent for _IDLE seconds."""
    socks = [a, b]
    while True:
        readable, _, _ = select.select(socks, [], [], _IDLE)
        if not readable:
            return
        for s in readable:
            try:
                data = s.recv(65536)
            except OSError:
                return
            if not data:
                return
            try:
                (b if s is a else a).sendall(data)
            except OSError:
                return


class _Server(socketserver.ThreadingTCPServer):
    daemon_threads = True
    allow_reuse_address = True
    max_connections = 64

    def __init__(self, name, handler, auth):
        self.name = name
        self.auth = auth
        self.slots = threading.BoundedSemaphore(self.max_connections)
        super().__init__(("127.0.0.1", 0), handler)

    def process_request(self, request, client_address):
        if not self.slots.acquire(blocking=False):  # bounded: refuse beyond the limit
            self.shutdown_request(request)
            return
        super().process_request(request, client_address)

    def process_request_thread(self, request, client_address):
        try:
            super().process_request_thread(request, client_address)
        finally:
            self.slots.release()


class _HTTPProxy(socketserver.BaseRequestHandler):
    def _head(self):
        data = b""
        while b"\r\n\r\n" not in data:
            chunk = self.request.recv(4096)
            if not chunk:
                return None, b""
            data += chunk
            if len(data) > 65536:
                return None, b""
        head, _, rest = data.partition(b"\r\n\r\n")
        return head.decode("latin-1").split("\r\n"), rest

    def _reply(self, status, reason, headers=()):
        lines = [f"HTTP/1.1 {status} {reason}"] + [f"{k}: {v}" for k, v in headers]
        self.request.sendall(("\r\n".join(lines) + "\r\n\r\n").encode("latin-1"))

    def handle(self):
        self.request.settimeout(_IDLE)
        try:
            lines, rest = self._head()
            if not lines:
                return
            method, target, _version = (lines[0].split(" ") + ["", ""])[:3]
            fields = [line.split(":", 1) for line in lines[1:] if ":" in line]
            given = next((v.strip() for k, v in fields if k.strip().lower() == "proxy-authorization"), None)
            right = "Basic " + base64.b64encode(f"{USER}:{PASSWORD}".encode()).decode()
            entry = {"proxy": self.server.name, "kind": "connect" if method == "CONNECT" else "forward",
                     "target": target, "auth": given == right}
            if self.server.auth and given != right:
                entry["refused"] = True
                _record(entry)
                return self._reply(407, "Proxy Authentication Required",
                                   [("Proxy-Authenticate", 'Basic realm="test proxy"'), ("Content-Length", "0"),
                                    ("Connection", "close")])
            if method == "CONNECT":
                host, _, port = target.rpartition(":")
                host = host.strip("[]")
            else:
                if not target.startswith("http://"):
                    return self._reply(400, "Bad Request", [("Content-Length", "0"), ("Connection", "close")])
                authority = target[len("http://"):].split("/", 1)[0]
                host, _, port = authority.rpartition(":") if ":" in authority else (authority, "", "80")
            if not _loopback(host) or not port.isdigit():
                entry["refused"] = True
                _record(entry)
                return self._reply(403, "Forbidden", [("Content-Length", "0"), ("Connection", "close")])
            _record(entry)
            upstream = socket.create_connection((host, int(port)), timeout=_IDLE)
            with upstream:
                if method == "CONNECT":
                    self._reply(200, "Connection established")
                else:
                    # Forwarded as it came (the test server takes absolute-form targets); the
                    # proxy's own headers stay here. One request per connection.
                    kept = [lines[0]] + [line for line in lines[1:]
                                         if not line.lower().startswith(("proxy-authorization:", "proxy-connection:",
                                                                         "connection:"))]
                    kept.append("Connection: close")
                    upstream.sendall(("\r\n".join(kept) + "\r\n\r\n").encode("latin-1") + rest)
                _relay(self.request, upstream)
        except OSError:
            return


class _SOCKS5Proxy(socketserver.BaseRequestHandler):
    def _read(self, n):
        data = b""
        while len(data) < n:
            chunk = self.request.recv(n - len(data))
            if not chunk:
                raise ConnectionError("client closed")
            data += chunk
        return data

    def handle(self):
        self.request.settimeout(_IDLE)
        try:
            version, count = self._read(2)
            methods = self._read(count)
            if version != 5:
                return
            entry = {"proxy": self.server.name, "kind": "socks5", "auth": False}
            if self.server.auth:
                if 2 not in methods:
                    entry["refused"] = True
                    _record(entry)
                    return self.request.sendall(b"\x05\xff")
                self.request.sendall(b"\x05\x02")
                _ver, ulen = self._read(2)
                user = self._read(ulen).decode("utf-8", "replace")
                (plen,) = self._read(1)
                password = self._read(plen).decode("utf-8", "replace")
                entry["auth"] = (user, password) == (USER, PASSWORD)
                if not entry["auth"]:
                    entry["refused"] = True
                    _record(entry)
                    return self.request.sendall(b"\x01\x01")
                self.request.sendall(b"\x01\x00")
            elif 0 in methods:
                self.request.sendall(b"\x05\x00")
            else:
                return self.request.sendall(b"\x05\xff")
            _ver, command, _rsv, atyp = self._read(4)
            if atyp == 1:
                host, entry["atyp"] = socket.inet_ntop(socket.AF_INET, self._read(4)), "ipv4"
            elif atyp == 3:
                (n,) = self._read(1)
                host, entry["atyp"] = self._read(n).decode("idna"), "domain"
            elif atyp == 4:
                host, entry["atyp"] = socket.inet_ntop(socket.AF_INET6, self._read(16)), "ipv6"
            else:
                return self.request.sendall(b"\x05\x08\x00\x01" + bytes(6))
            (port,) = struct.unpack("!H", self._read(2))
            entry["target"] = f"{host}:{port}"
            if command != 1 or not _loopback(host):
                entry["refused"] = True
                _record(entry)
                return self.request.sendall(b"\x05\x02\x00\x01" + bytes(6))  # not allowed
            _record(entry)
            try:
                upstream = socket.create_connection((host, port), timeout=_IDLE)
            except OSError:
                return self.request.sendall(b"\x05\x05\x00\x01" + bytes(6))  # refused
            with upstream:
                bound = upstream.getsockname()
                self.request.sendall(b"\x05\x00\x00\x01" + socket.inet_aton(bound[0]) + struct.pack("!H", bound[1]))
                _relay(self.request, upstream)
        except (OSError, ConnectionError, ValueError):
            return


def ports():
    """The proxies' ports by name, starting them on first use (daemon threads)."""
    with _lock:
        if _ports:
            return dict(_ports)
        for name, handler, auth in (("http", _HTTPProxy, False), ("http_auth", _HTTPProxy, True),
                                    ("socks5", _SOCKS5Proxy, False), ("socks5_auth", _SOCKS5Proxy, True)):
            server = _Server(name, handler, auth)
            threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.2},
                             name=f"proxy-{name}", daemon=True).start()
            _ports[name] = server.server_address[1]
        return dict(_ports)


class ProxyRoutes:
    """/proxies: {"http": port, "http_auth": port, "socks5": port, "socks5_auth": port,
    "user": "pu", "password": "pp", "logged": n}; /proxies/log?since=N: the entries from N on."""

    def h_proxies(self, args):
        if args == ["log"]:
            return self._json(200, log_entries(int(self._q("since", "0"))))
        found = ports()
        found.update(user=USER, password=PASSWORD, logged=len(log_entries()))
        self._json(200, found)


if __name__ == "__main__":
    print(json.dumps(ports()), flush=True)
    threading.Event().wait()
