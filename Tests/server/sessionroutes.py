"""Endpoints of the session layer tests (cookies, auth, retries, validated downloads), mixed into
the test server's Handler. Standard library only.

    /flaky?key=K&fail=N[&status=503][&retry_after=S|&retry_date=S]
                        the first N requests of key K fail with `status` (+ Retry-After: S
                        seconds, or an HTTP-date S seconds ahead); then 200 JSON {"attempts": n}
    /flaky-reset?key=K&fail=N   the first N requests of key K are reset (no response); then 200
    /attempts?key=K     JSON {"attempts": n} seen so far for key K
    /digest-auth/<user>/<password>   RFC 7616 Digest (MD5, qop=auth): 401 + challenge, else 200
    /basic-auth/<user>/<password>    200 with the right Basic credentials, else 401
    /bearer/<token>     200 with "Authorization: Bearer <token>", else 401
    /versioned/<n>?key=K[&reset_after=B][&bump=1][&validator=etag|date|none][&digest=repr|content|legacy|wrong]
                        n bytes of version v of key K (byte i = (i + v) % 251), with ETag "vN" and
                        Last-Modified; Range honoured when If-Range (if any) matches the current
                        version; reset_after=B resets the connection after B bytes; bump=1 moves
                        K to the next version after each reset (the file changed on the server)
"""

import base64
import email.utils
import hashlib
import json
import os
import re
import socket
import struct
import threading
import time

_lock = threading.Lock()
_counts = {}
_versions = {}


def _bump_count(key):
    with _lock:
        _counts[key] = _counts.get(key, 0) + 1
        return _counts[key]


def versioned_bytes(n, version, start=0, length=None):
    length = n - start if length is None else length
    return bytes((i + version) % 251 for i in range(start, start + length))


class SessionRoutes:
    def _reset_connection(self):
        self.close_connection = True
        self.wfile.flush()
        time.sleep(0.05)
        self.connection.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
        self.rfile.close()
        self.connection.close()

    def h_flaky(self, args):
        key = self._q("key", "default")
        n = _bump_count("flaky:" + key)
        fail = int(self._q("fail", "1"))
        if n <= fail:
            extra = []
            if self._q("retry_after") is not None:
                extra.append(("Retry-After", self._q("retry_after")))
            if self._q("retry_date") is not None:
                when = time.time() + float(self._q("retry_date"))
                extra.append(("Retry-After", email.utils.formatdate(when, usegmt=True)))
            return self._json(int(self._q("status", "503")), {"attempt": n, "error": "try later"}, extra)
        self._json(200, {"attempts": n})

    def h_flaky_reset(self, args):
        key = self._q("key", "default")
        n = _bump_count("reset:" + key)
        if n <= int(self._q("fail", "1")):
            self._head(200, "application/octet-stream", 100)
            self.wfile.write(b"x" * 10)
            return self._reset_connection()
        self._json(200, {"attempts": n})

    def h_attempts(self, args):
        key = self._q("key", "default")
        with _lock:
            self._json(200, {"attempts": _counts.get("flaky:" + key, 0) + _counts.get("reset:" + key, 0)})

    def h_basic_auth(self, args):
        user, password = (args + ["", ""])[:2]
        expected = "Basic " + base64.b64encode(f"{user}:{password}".encode()).decode()
        if self.headers.get("Authorization") == expected:
            return self._json(200, {"authenticated": True, "user": user})
        self._json(401, {"authenticated": False}, [("WWW-Authenticate", 'Basic realm="test"')])

    def h_bearer(self, args):
        token = args[0] if args else ""
        if self.headers.get("Authorization") == f"Bearer {token}":
            return self._json(200, {"authenticated": True, "token": token})
        self._json(401, {"authenticated": False}, [("WWW-Authenticate", 'Bearer realm="test"')])

    def h_digest_auth(self, args):
        user, password = (args + ["", ""])[:2]
        realm, nonce = "test@httpcontent", "dcd98b7102dd2f0e8b11d0f600bfb0c093"
        auth = self.headers.get("Authorization", "")
        if auth.startswith("Digest "):
            fields = {k: a or b for k, a, b in re.findall(r'(\w+)=(?:"([^"]*)"|([^,\s]*))', auth[7:])}
            ha1 = hashlib.md5(f"{user}:{realm}:{password}".encode()).hexdigest()
            ha2 = hashlib.md5(f"{self.command}:{fields.get('uri', '')}".encode()).hexdigest()
            expected = hashlib.md5(
                f"{ha1}:{nonce}:{fields.get('nc', '')}:{fields.get('cnonce', '')}:auth:{ha2}".encode()).hexdigest()
            if fields.get("username") == user and fields.get("response") == expected:
                return self._json(200, {"authenticated": True, "user": user})
        challenge = f'Digest realm="{realm}", qop="auth", nonce="{nonce}", opaque="5ccc069c403ebaf9", algorithm=MD5'
        self._json(401, {"authenticated": False}, [("WWW-Authenticate", challenge)])

    def h_versioned(self, args):
        n = int(self._one_arg(args))
        key = self._q("key", "default")
        with _lock:
            version = _versions.setdefault(key, 1)
        etag = f'"v{version}"'
        modified = email.utils.formatdate(1_700_000_000 + version * 1000, usegmt=True)
        validator = self._q("validator", "etag")
        extra = [("Accept-Ranges", "bytes")]
        if validator == "etag":
            extra.append(("ETag", etag))
        if validator in ("etag", "date"):
            extra.append(("Last-Modified", modified))
        full = versioned_bytes(n, version)
        digest = self._q("digest")
        if digest:
            body_for_digest = full if digest != "wrong" else full + b"x"
            b64 = base64.b64encode(hashlib.sha256(body_for_digest).digest()).decode()
            if digest in ("repr", "wrong"):
                extra.append(("Repr-Digest", f"sha-256=:{b64}:"))
            elif digest == "content":
                extra.append(("Content-Digest", f"sha-256=:{b64}:"))
            elif digest == "legacy":
                extra.append(("Digest", f"SHA-256={b64}"))
        start, status = 0, 200
        m = re.fullmatch(r"bytes=(\d+)-", self.headers.get("Range", "").strip())
        if_range = self.headers.get("If-Range")
        still_valid = if_range is None or if_range in (etag, modified)
        if m and still_valid and int(m[1]) < n:
            start, status = int(m[1]), 206
            extra.append(("Content-Range", f"bytes {start}-{n - 1}/{n}"))
        body = full[start:]
        self._head(status, "application/octet-stream", len(body), extra)
        if self.command == "HEAD":
            return
        cut = self._q("reset_after")
        if cut is not None and int(cut) < len(body):
            self.wfile.write(body[:int(cut)])
            if self._q("bump") == "1":
                with _lock:
                    _versions[key] = version + 1
            return self._reset_connection()
        self.wfile.write(body)
