#!/usr/bin/env python3
"""Runs the http-tests/cache-tests definitions (cache-tests.json, made by export_cache_tests.py)
against a client with a private HTTP cache: httpcontent (`hc.Client(cache=hc.Cache(...))`) and,
for comparison, hishel 2 (httpx with hishel's SQLite storage).

A port of the suite's test engine (test-engine/client/test.mjs and server/handle-test.mjs) to
Python: the origin is a local server on 127.0.0.1 and a free port that answers each test's
requests from its configuration, counts them (Server-Request-Count) and records what it saw;
the client side sends them through the library and checks the same things the engine checks
(cached or not, validated with If-None-Match / If-Modified-Since, status, header fields, body).
Requests marked `setup` that fail make the test "setup" (not a failure, as in the engine).
Browser-only and CDN-only tests, and tests of interim (1xx) responses, are not run: they do not
apply to a private client cache or need what the engine's Node.js server does.

    python3 Tests/cacheconf/run_cache_tests.py [--client httpcontent|hishel|both] [--json OUT]
                                                [--only SUITE[,SUITE]] [--workers N]
"""

from __future__ import annotations

import argparse
import collections
import email.utils
import http.server
import json
import os
import socketserver
import sys
import tempfile
import threading
import time
import uuid
from concurrent.futures import ThreadPoolExecutor

HERE = os.path.dirname(os.path.abspath(__file__))
DATE_HEADERS = {"date", "expires", "last-modified", "if-modified-since", "if-unmodified-since"}
LOCATION_HEADERS = {"location", "content-location"}
NO_BODY = {204, 304}
PAUSE = 3.0  # the engine's pause between requests marked pause_after


def http_date(now: float, delta: int, fmt: str | None = None) -> str:
    when = now + delta
    if fmt == "rfc850":
        return time.strftime("%A, %d-%b-%y %H:%M:%S GMT", time.gmtime(when))
    return email.utils.formatdate(when, usegmt=True)


def fixup(header: list, server_now: float, base_url: str, req: dict) -> list:
    name = header[0].lower()
    header = list(header)
    if name in DATE_HEADERS and isinstance(header[1], int) and not isinstance(header[1], bool):
        fmt = "rfc850" if name in req.get("rfc850date", []) else None
        header[1] = http_date(server_now, header[1], fmt)
    if name in LOCATION_HEADERS and req.get("magic_locations"):
        header[1] = f"{base_url}/{header[1]}" if header[1] else base_url
    return header


# MARK: - The origin (server/handle-test.mjs)

class Origin(socketserver.ThreadingMixIn, http.server.HTTPServer):
    daemon_threads = True
    allow_reuse_address = True

    def __init__(self):
        super().__init__(("127.0.0.1", 0), OriginHandler)
        self.configs: dict[str, list] = {}
        self.stash: dict[str, list] = collections.defaultdict(list)
        self.lock = threading.Lock()
        self.base = f"http://127.0.0.1:{self.server_address[1]}"


class OriginHandler(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, *args):
        pass

    def handle_any(self):
        length = int(self.headers.get("Content-Length") or 0)
        if length:
            self.rfile.read(length)
        segs = [s for s in self.path.split("?")[0].split("/") if s]
        uid = segs[1] if len(segs) > 1 and segs[0] == "test" else None
        server: Origin = self.server  # type: ignore[assignment]
        requests = server.configs.get(uid or "")
        if not requests:
            return self._plain(409, b"no config")
        with server.lock:
            state = server.stash[uid]
            srv_num = len(state) + 1
            cli_num = int(self.headers.get("Req-Num") or 0)
            num = cli_num or srv_num
            if num > len(requests):
                return self._plain(409, b"config not found")
            req, prev = requests[num - 1], requests[num - 2] if num > 1 else {}
            if req.get("response_pause"):
                time.sleep(req["response_pause"])
            status = req.get("response_status", [200, "OK"])
            if req.get("expected_type", "").endswith("validated"):
                # The previous request's fields as sent; as configured when the cache answered
                # it (the engine compares with the configuration's `response_headers`).
                prev_headers = {h[0].lower(): h[1] for h in prev.get("_sent_headers", prev.get("response_headers", []))}
                lm, etag = prev_headers.get("last-modified"), prev_headers.get("etag")
                status = None
                if lm and self.headers.get("If-Modified-Since") == lm:
                    status = [304, "Not Modified"]
                if etag and self.headers.get("If-None-Match") == etag:
                    status = [304, "Not Modified"]
                status = status or [999, "304 Not Generated"]
            now = time.time()
            base_url = server.base + self.path
            fields = [("Server-Base-Url", self.path), ("Server-Request-Count", str(srv_num)),
                      ("Client-Request-Count", str(cli_num)), ("Server-Now", str(int(now * 1000)))]
            sent = []
            for header in req.get("response_headers", []):
                header = fixup(header, now, server.base + "/test/" + uid, req)
                fields.append((header[0], str(header[1])))
                sent.append(header)
            req["_sent_headers"] = sent
            if not any(n.lower() == "content-type" for n, _ in fields):
                fields.append(("Content-Type", "text/plain"))
            state.append({"request_num": cli_num, "request_method": self.command,
                          "request_headers": {k.lower(): v for k, v in self.headers.items()}})
            fields.append(("Request-Numbers", " ".join(str(s["request_num"]) for s in state)))
        if req.get("disconnect"):
            self.close_connection = True
            self.connection.close()
            return
        body = b"" if status[0] in NO_BODY or self.command == "HEAD" else (req.get("response_body") or uid).encode()
        # Date from the test's own fields when it gives one (the engine's Node server sets one
        # Date, replacing its own): send_response would add a second, current one first, and a
        # cache reads the first line.
        self.log_request(status[0])
        self.send_response_only(status[0], status[1])
        if not any(n.lower() == "date" for n, _ in fields):
            self.send_header("Date", self.date_time_string())
        for n, v in fields:
            if n.lower() != "content-length":
                self.send_header(n, v)
        if status[0] not in NO_BODY:
            self.send_header("Content-Length", str(len((req.get("response_body") or uid).encode())))
        self.end_headers()
        self.wfile.write(body)

    def _plain(self, status, body):
        self.send_response(status)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def __getattr__(self, name):
        # Every method, the suite's M-SEARCH too: http.server looks for do_<METHOD>.
        if name.startswith("do_"):
            return self.handle_any
        raise AttributeError(name)


# MARK: - The clients

class HTTPContentClient:
    name = "httpcontent"

    def __init__(self):
        import httpcontent as hc
        self.hc = hc
        self.cache = hc.Cache()  # one private cache for the whole run, as a browser has
        self.follow = hc.Client(cache=self.cache, cookies=False, trust_env=False)
        self.manual = hc.Client(cache=self.cache, cookies=False, trust_env=False, follow_redirects=False)

    def fetch(self, url, method, headers, body, redirect):
        client = self.manual if redirect == "manual" else self.follow
        handler = self.hc.Bytes(accept_status=[(100, 999)])
        r = client.request(method, url, headers=headers, data=body.encode() if body else None, handler=handler)
        return r.status, r.headers, (r.content or b"").decode("utf-8", "replace")


class HishelClient:
    name = "hishel"

    def __init__(self):
        import hishel
        import httpx
        from hishel.httpx import CacheTransport
        self.dir = tempfile.mkdtemp()
        storage = hishel.SqliteStorage(database_path=os.path.join(self.dir, "hishel.db"))
        # The RFC 9111 mode of a private cache (hishel's default `rfc=False` is its own policy).
        options = hishel.CacheOptions(shared=False, supported_methods=["GET", "HEAD"], allow_stale=False)
        transport = CacheTransport(next_transport=httpx.HTTPTransport(), storage=storage, rfc=options)
        self.follow = httpx.Client(transport=transport, follow_redirects=True, trust_env=False)
        self.manual = httpx.Client(transport=transport, follow_redirects=False, trust_env=False)

    def fetch(self, url, method, headers, body, redirect):
        client = self.manual if redirect == "manual" else self.follow
        r = client.request(method, url, headers=headers, content=body.encode() if body else None)
        return r.status_code, r.headers, r.text


# MARK: - One test (client/test.mjs)

class Failed(Exception):
    pass


class SetupFailed(Exception):
    pass


def check(setup: bool, condition: bool, message: str):
    if not condition:
        raise (SetupFailed if setup else Failed)(message)


def setup_check(req, member):
    return req.get("setup") is True or member in req.get("setup_tests", [])


def run_test(test, origin: Origin, client) -> tuple[str, str]:
    uid = uuid.uuid4().hex
    requests = [dict(r) for r in test["requests"]]
    origin.configs[uid] = requests
    responses = []
    try:
        for idx, req in enumerate(requests):
            num = idx + 1
            url = f"{origin.base}/test/{uid}" + (f"?{req['query_arg']}" if "query_arg" in req else "")
            headers = []
            prev = responses[-1][1] if responses else None
            for h in req.get("request_headers", []):
                h = list(h)
                if req.get("magic_ims") and h[0].lower() == "if-modified-since" and prev is not None:
                    now = int(prev.get("server-now", "0")) / 1000
                    h = fixup(h, now, "", req)
                headers.append((h[0], str(h[1])))
            headers += [("Test-ID", test["id"]), ("Req-Num", str(num))]
            try:
                status, rh, text = client.fetch(url, req.get("request_method", "GET"), headers,
                                                req.get("request_body"), req.get("redirect"))
            except Exception as exc:  # noqa: BLE001 (a transport failure is the test's failure)
                check(req.get("setup") is True, False, f"request {num} failed: {type(exc).__name__}: {exc}")
            rh = {k.lower(): v for k, v in rh.items()}
            responses.append((status, rh))
            res_num = int(rh["server-request-count"]) if rh.get("server-request-count", "").isdigit() else None
            if "expected_type" in req:
                ts = setup_check(req, "expected_type")
                if req["expected_type"] == "cached":
                    if not (status == 304 and res_num is None):
                        check(ts, res_num is not None and res_num < num, f"Response {num} does not come from cache")
                if req["expected_type"] == "not_cached":
                    check(ts, res_num == num, f"Response {num} comes from cache")
            if "expected_status" in req:
                if req["expected_status"] is not None:
                    check(setup_check(req, "expected_status"), status == req["expected_status"],
                          f"Response {num} status is {status}, not {req['expected_status']}")
            elif "response_status" in req:
                check(True, status == req["response_status"][0], f"Response {num} status is {status}, not {req['response_status'][0]}")
            elif status == 999:
                check(setup_check(req, "expected_type"), False, f"Request {num} should have been conditional, but it was not.")
            else:
                check(True, status == 200, f"Response {num} status is {status}, not 200")
            for h in req.get("expected_response_headers", []):
                sp = setup_check(req, "expected_response_headers")
                if isinstance(h, str):
                    check(sp, h.lower() in rh, f"Response {num} {h} header not present.")
                elif len(h) > 2:
                    check(sp, h[0].lower() in rh, f"Response {num} {h[0]} header not present.")
                    value = rh.get(h[0].lower())
                    if h[1] == "=":
                        check(sp, value == rh.get(h[2].lower()), f"Response {num} header {h[0]} is {value}, should match {h[2]}")
                    elif h[1] == ">":
                        check(sp, value is not None and value.isdigit() and int(value) > h[2],
                              f"Response {num} header {h[0]} is {value}, should be bigger than {h[2]}")
                else:
                    now = int(rh.get("server-now", "0")) / 1000
                    expected = fixup(list(h), now, "", req)[1]
                    check(sp, rh.get(h[0].lower()) == str(expected), f"Response {num} header {h[0]} is {rh.get(h[0].lower())!r}, not {expected!r}")
            for h in req.get("expected_response_headers_missing", []):
                sp = setup_check(req, "expected_response_headers_missing")
                if isinstance(h, str):
                    check(sp, h.lower() not in rh, f"Response {num} includes unexpected header {h}")
                elif h[0].lower() in rh:
                    check(sp, h[1] not in rh[h[0].lower()], f"Response {num} header {h[0]} still has {h[1]!r}")
            if req.get("check_body") is not False:
                if "expected_response_text" in req:
                    if req["expected_response_text"] is not None:
                        check(setup_check(req, "expected_response_text"), text == req["expected_response_text"],
                              f"Response body is {text!r}, not {req['expected_response_text']!r}")
                elif req.get("response_body") is not None:
                    check(True, text == req["response_body"], f"Response body is {text!r}, not {req['response_body']!r}")
                elif status not in NO_BODY and req.get("request_method") != "HEAD":
                    check(True, text == uid, f"Response body is {text[:40]!r}, not the test's id")
            if req.get("pause_after"):
                time.sleep(PAUSE)
        # checkServerRequests: what the origin saw
        state = origin.stash.get(uid, [])
        seen = 0
        for idx, req in enumerate(requests):
            num = idx + 1
            ts = setup_check(req, "expected_type")
            kind = req.get("expected_type")
            if kind == "cached":
                continue
            server_req = state[seen] if seen < len(state) else None
            if kind == "not_cached":
                check(ts, server_req is not None and server_req["request_num"] == num,
                      f"Response {num} comes from cache")
            seen += 1
            want = {"etag_validated": "if-none-match", "lm_validated": "if-modified-since"}.get(kind or "")
            if want:
                check(ts, server_req is not None, f"request {num} wasn't sent to server")
                check(ts, want in server_req["request_headers"], f"request {num} doesn't have {want} header")
            if "expected_method" in req and server_req is not None:
                check(setup_check(req, "expected_method"), server_req["request_method"] == req["expected_method"],
                      f"Request {num} had method {server_req['request_method']}, not {req['expected_method']}")
            for h in req.get("expected_request_headers", []):
                if server_req is not None:
                    got = server_req["request_headers"].get(h[0].lower())
                    check(setup_check(req, "expected_request_headers"), got == h[1],
                          f"Request {num} header {h[0]} is {got!r}, not {h[1]!r}")
        return "pass", ""
    except SetupFailed as exc:
        return "setup", str(exc)
    except Failed as exc:
        return "fail", str(exc)
    finally:
        origin.configs.pop(uid, None)


def applies(test) -> bool:
    """Tests for a private client cache: not browser-only, not CDN-only, no interim responses."""
    if test.get("browser_only") or test.get("cdn_only"):
        return False
    return not any("interim_responses" in r or "expected_interim_responses" in r for r in test["requests"])


def run(client_name: str, suites, workers: int) -> dict:
    origin = Origin()
    threading.Thread(target=origin.serve_forever, daemon=True).start()
    client = HTTPContentClient() if client_name == "httpcontent" else HishelClient()
    jobs = [(s["id"], t) for s in suites for t in s["tests"] if applies(t)]
    results: dict = {}
    with ThreadPoolExecutor(workers) as pool:
        futures = {pool.submit(run_test, t, origin, client): (sid, t) for sid, t in jobs}
        for f, (sid, t) in futures.items():
            outcome, why = f.result(timeout=120)
            results.setdefault(sid, {})[t["id"]] = {"outcome": outcome, "why": why, "kind": t.get("kind", "required")}
    origin.shutdown()
    return results


def summary(results: dict) -> dict:
    out = {}
    for sid, tests in results.items():
        c = collections.Counter(v["outcome"] for v in tests.values())
        out[sid] = {"pass": c["pass"], "fail": c["fail"], "setup": c["setup"], "total": len(tests)}
    return out


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--client", default="httpcontent", choices=["httpcontent", "hishel", "both"])
    ap.add_argument("--json")
    ap.add_argument("--only")
    ap.add_argument("--workers", type=int, default=48)
    args = ap.parse_args()
    with open(os.path.join(HERE, "cache-tests.json")) as f:
        suites = json.load(f)["suites"]
    if args.only:
        suites = [s for s in suites if s["id"] in args.only.split(",")]
    names = ["httpcontent", "hishel"] if args.client == "both" else [args.client]
    report = {n: run(n, suites, args.workers) for n in names}
    sums = {n: summary(r) for n, r in report.items()}
    print(f"{'section':22}" + "".join(f"{n:>20}" for n in names))
    totals = {n: [0, 0] for n in names}
    for s in suites:
        sid = s["id"]
        if sid not in sums[names[0]]:
            continue
        row = f"{sid:22}"
        for n in names:
            x = sums[n][sid]
            totals[n][0] += x["pass"]
            totals[n][1] += x["total"]
            cell = f"{x['pass']}/{x['total']}" + (f" ({x['setup']} setup)" if x["setup"] else "")
            row += cell.rjust(20)
        print(row)
    print(f"{'total':22}" + "".join(f"{totals[n][0]}/{totals[n][1]}".rjust(20) for n in names))
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"summary": sums, "results": report}, f, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
