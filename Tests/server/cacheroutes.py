"""Endpoints of the HTTP cache tests: an origin that counts requests, mixed into the test
server's Handler. Standard library only.

    /cached/<key>?h=Name:Value&h=...[&status=N][&body=TEXT|&n=BYTES][&etag=E][&lm=DATE]
                  [&fail_after=K&fail_status=S]
                        counts the request under <key> (any method); answers `status` (200) with the
                        given header fields, `X-Count: <count>` and the body (TEXT, or n
                        deterministic bytes, or "body of <key>"); a request whose If-None-Match
                        holds E, or whose If-Modified-Since is DATE, gets a 304 with the fields;
                        after K requests every answer is `fail_status` (503)
    /cache-count/<key>  JSON {"count": n, "headers": {...}}: requests seen for <key>, and the
                        last one's header fields (lowercased names)
"""

import json
import threading

_lock = threading.Lock()
_counts = {}
_last = {}


class CacheRoutes:
    def h_cached(self, args):
        key = self._one_arg(args, "key")
        with _lock:
            _counts[key] = count = _counts.get(key, 0) + 1
            _last[key] = {k.lower(): v for k, v in self.headers.items()}
        fields = []
        for item in self.query.get("h", []):
            name, _, value = item.partition(":")
            fields.append((name.strip(), value.strip()))
        fields.append(("X-Count", str(count)))
        fail_after = self._q("fail_after")
        if fail_after is not None and count > int(fail_after):
            return self._send(int(self._q("fail_status", "503")), b"origin down", headers=fields)
        etag, lm = self._q("etag"), self._q("lm")
        if etag:
            fields.append(("ETag", etag))
        if lm:
            fields.append(("Last-Modified", lm))
        inm = self.headers.get("If-None-Match")
        ims = self.headers.get("If-Modified-Since")
        if (etag and inm and etag in [t.strip() for t in inm.split(",")]) or (lm and ims == lm):
            self.send_response(304)
            for name, value in fields:
                self.send_header(name, value)
            self.end_headers()
            return
        n = self._q("n")
        if n is not None:
            body = bytes(i % 251 for i in range(int(n)))
        else:
            body = self._q("body", "body of " + key).encode()
        self._send(int(self._q("status", "200")), body, ctype=self._q("type", "text/plain; charset=utf-8"),
                   headers=fields)

    def h_cache_count(self, args):
        key = self._one_arg(args, "key")
        with _lock:
            self._json(200, {"count": _counts.get(key, 0), "headers": _last.get(key, {})})
