"""HTTPS at the limit (issue 31): httpcontent against the fastest Python clients over TLS.

    python3 bench/bench.py https [--rounds 5] [--kept 2000] [--fresh 300] [--big 3] [--scenarios a,b] [--no-write]

A local nginx with TLS on the server CPU (one worker; a CA made for the run and a certificate it
signs for 127.0.0.1, RSA 2048, by Tests/server/h2server.py's `make_certificates`; ALPN h2 and
http/1.1); every client in this process, on the client CPU. One nginx per scenario:

  kept         1 KiB GETs on one kept TLS connection; TLS 1.2 and 1.3 offered (nginx >= 1.23.4's
               default): TLS 1.3 is used
  kept-h1      the same, nginx offering http/1.1 only in ALPN: beside `kept`, the ALPN choice
               (h2 against http/1.1) for small sequential requests
  fresh-tls13  a new TLS connection per request (nginx keepalive_timeout 0 closes each after its
               response), one client kept: a client may resume its TLS session
  fresh-tls12  the same, TLS 1.2 only (nginx < 1.23.4's default): resumption by session ticket
               only, as nginx keeps no session-ID cache by default
  64mib        64 MiB bodies into memory on a kept TLS connection

Contestants (each verifies the server against CA = the system's bundle, /etc/ssl/certs/
ca-certificates.crt, with the run's CA appended: a trust store of real size), one client each,
kept for the run:
  hc          `hc.Client(ca_file=CA)`, `client.get(url).content`
  hc-h1       the same with `http_version="1.1"` (ALPN http/1.1 only)
  pycurl      tuned: one `Curl` reused (its connection cache), a `CurlShare` of SSL sessions and
              DNS, `CAINFO`, the body into `io.BytesIO` by `WRITEDATA` (its wheel's own libcurl
              and OpenSSL)
  pyreqwest   `SyncClientBuilder().add_root_certificate_pem(CA).build()`,
              `client.get(url).build().send().bytes()` (reqwest + rustls; ALPN http/1.1 by default)
  httpr       `httpr.Client(ca_cert_file=CA)`, `client.get(url).content` (reqwest + rustls)
pyreqwest and httpr are bench-only dependencies: `pip install pyreqwest httpr` (a missing one is
left out, with the reason).

The figure per scenario is, for each hc setting, the per-round ratio of its rate to the best
non-hc contestant's rate in that round (target >= 1.0), median and min-max; nginx's access log gives each contestant's
protocol, connections and the share of its requests on a resumed TLS session.
Writes the section "## HTTPS (issue 31)" of BENCHMARKS.md.
"""

from __future__ import annotations

import io
import os
import sys
from pathlib import Path
from typing import Any, Callable

from harness import Contestant, Session, parse, servers, stats
from harness.rounds import log

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "Tests" / "server"))
import h2server  # noqa: E402  (make_certificates)

SECTION = "## HTTPS (issue 31)"
SMALL, BIG = "1k.bin", "64m.bin"
SYSTEM_BUNDLE = "/etc/ssl/certs/ca-certificates.crt"
TARGET = 1.0
# name -> (nginx options, file, bytes per request)
SCENARIOS: dict[str, tuple[dict[str, Any], str, int]] = {
    "kept": (dict(protocols="TLSv1.2 TLSv1.3"), SMALL, 1024),
    "kept-h1": (dict(protocols="TLSv1.2 TLSv1.3", http2=False), SMALL, 1024),
    "fresh-tls13": (dict(protocols="TLSv1.2 TLSv1.3", keepalive="0"), SMALL, 1024),
    "fresh-tls12": (dict(protocols="TLSv1.2", keepalive="0"), SMALL, 1024),
    "64mib": (dict(protocols="TLSv1.2 TLSv1.3"), BIG, 64 << 20),
}


# MARK: - Contestants: (get(url) -> bytes, settings text)

def hc_client(ca: str) -> tuple[Callable[[str], bytes], str]:
    import httpcontent as hc
    client = hc.Client(ca_file=ca)
    return (lambda url: client.get(url).content), "`hc.Client(ca_file=CA)`, `client.get(url).content` (system libcurl, OpenSSL 3)"


def hc_h1_client(ca: str) -> tuple[Callable[[str], bytes], str]:
    import httpcontent as hc
    client = hc.Client(ca_file=ca, http_version="1.1")
    return (lambda url: client.get(url).content), "`hc.Client(ca_file=CA, http_version=\"1.1\")`: ALPN http/1.1 only"


def pycurl_client(ca: str) -> tuple[Callable[[str], bytes], str]:
    import pycurl
    share = pycurl.CurlShare()
    share.setopt(pycurl.SH_SHARE, pycurl.LOCK_DATA_SSL_SESSION)
    share.setopt(pycurl.SH_SHARE, pycurl.LOCK_DATA_DNS)
    c = pycurl.Curl()
    c.setopt(pycurl.SHARE, share)
    c.setopt(pycurl.CAINFO, ca)

    def get(url: str, keep: tuple = (share, c)) -> bytes:
        buf = io.BytesIO()
        c.setopt(pycurl.URL, url)
        c.setopt(pycurl.WRITEDATA, buf)
        c.perform()
        return buf.getvalue()
    return get, (f"{pycurl.version.split()[0]} ({' '.join(pycurl.version.split()[1:3])}): one `Curl` reused, "
                 "`CurlShare` of SSL sessions and DNS, `CAINFO`, `WRITEDATA` `io.BytesIO`")


def pyreqwest_client(ca: str) -> tuple[Callable[[str], bytes], str]:
    import pyreqwest
    from pyreqwest.client import SyncClientBuilder
    client = SyncClientBuilder().add_root_certificate_pem(Path(ca).read_bytes()).build()
    return (lambda url: client.get(url).build().send().bytes()), \
        f"pyreqwest {pyreqwest.__version__}: `SyncClientBuilder().add_root_certificate_pem(CA).build()`, `.bytes()`"


def httpr_client(ca: str) -> tuple[Callable[[str], bytes], str]:
    import importlib.metadata
    import httpr
    client = httpr.Client(ca_cert_file=ca)
    return (lambda url: client.get(url).content), \
        f"httpr {importlib.metadata.version('httpr')}: `httpr.Client(ca_cert_file=CA)`, `.content`"


def libcurl_client(ca: str) -> tuple[Callable[[str], bytes], str]:
    """The system's libcurl (the one httpcontent runs on) driven through ctypes with httpcontent's
    TLS settings: context, not an anchor. hc / this is what httpcontent adds to the TLS stack."""
    import ctypes
    curl = ctypes.CDLL("libcurl.so.4")
    ssl = ctypes.CDLL("libssl.so.3")
    curl.curl_easy_init.restype = ctypes.c_void_p
    curl.curl_share_init.restype = ctypes.c_void_p
    curl.curl_version.restype = ctypes.c_char_p
    ssl.SSL_CTX_clear_options.argtypes = [ctypes.c_void_p, ctypes.c_uint64]
    ssl.SSL_CTX_clear_options.restype = ctypes.c_uint64
    write_cb = ctypes.CFUNCTYPE(ctypes.c_size_t, ctypes.c_void_p, ctypes.c_size_t, ctypes.c_size_t, ctypes.c_void_p)
    ctx_cb = ctypes.CFUNCTYPE(ctypes.c_int, ctypes.c_void_p, ctypes.c_void_p, ctypes.c_void_p)
    chunks: list[bytes] = []

    @write_cb
    def on_write(ptr: int, size: int, n: int, _: int) -> int:
        chunks.append(ctypes.string_at(ptr, size * n))
        return size * n

    @ctx_cb
    def on_ctx(_h: int, ctx: int, _u: int) -> int:
        ssl.SSL_CTX_clear_options(ctx, 0x4000)  # SSL_OP_NO_TICKET, as httpcontent's callback
        return 0

    share = ctypes.c_void_p(curl.curl_share_init())
    curl.curl_share_setopt(share, 1, 4)   # CURLSHOPT_SHARE, CURL_LOCK_DATA_SSL_SESSION
    curl.curl_share_setopt(share, 1, 3)   # CURL_LOCK_DATA_DNS
    h = ctypes.c_void_p(curl.curl_easy_init())
    curl.curl_easy_setopt(h, 10100, share)                      # CURLOPT_SHARE
    curl.curl_easy_setopt(h, 10065, ca.encode())                # CURLOPT_CAINFO
    curl.curl_easy_setopt(h, 10097, ctypes.c_void_p(None))      # CURLOPT_CAPATH unset: CA cache
    curl.curl_easy_setopt(h, 20011, on_write)                   # CURLOPT_WRITEFUNCTION
    curl.curl_easy_setopt(h, 20108, on_ctx)                     # CURLOPT_SSL_CTX_FUNCTION
    curl.curl_easy_setopt(h, 98, ctypes.c_long(256 << 10))      # CURLOPT_BUFFERSIZE

    def get(url: str, keep: tuple = (on_write, on_ctx, share)) -> bytes:
        chunks.clear()
        curl.curl_easy_setopt(h, 10002, url.encode())           # CURLOPT_URL
        rc = curl.curl_easy_perform(h)
        if rc:
            raise RuntimeError(f"curl_easy_perform: {rc}")
        return b"".join(chunks)
    return get, (f"{curl.curl_version().decode().split()[0]} (the system's, as hc's) through ctypes: one easy "
                 "handle reused, a share of SSL sessions and DNS, CAINFO with CAPATH unset, SSL_OP_NO_TICKET "
                 "cleared, 256 KiB buffer; context, not an anchor: hc / libcurl is what httpcontent adds")


CONTEXT = {"libcurl"}   # measured beside the others, left out of "best other"

MAKERS = {"hc": hc_client, "hc-h1": hc_h1_client, "pycurl": pycurl_client, "pyreqwest": pyreqwest_client, "httpr": httpr_client,
          "libcurl": libcurl_client}


# MARK: - Servers

def make_certs(s: Session) -> str:
    """The run's CA, a certificate it signs for 127.0.0.1 and bundle.pem, the trust store every
    contestant loads: the system's bundle and the run's CA, the size of a real one (what a
    client pays per new connection if it parses it again). Returns their folder."""
    certs = s.path("certs")
    os.makedirs(certs)
    h2server.make_certificates("openssl", Path(certs))
    with open(os.path.join(certs, "bundle.pem"), "wb") as out:
        for part in (SYSTEM_BUNDLE, os.path.join(certs, "ca.pem")):
            with open(part, "rb") as f:
                out.write(f.read())
    for f in os.listdir(certs):
        os.chmod(os.path.join(certs, f), 0o644)  # nginx's worker reads them unprivileged
    return certs


def tls_nginx(s: Session, name: str, certs: str, protocols: str, http2: bool = True,
              keepalive: str = "120s", files: tuple[tuple[str, int], ...] = ((SMALL, 1024), (BIG, 64 << 20)),
              ) -> tuple[str, str]:
    """nginx for one scenario in its own folder (its own www, conf and access log) serving
    `files` (name, size): returns its base URL and access log ("<connection> <protocol>
    <resumed r/.> <the query's who=>" per request)."""
    folder = s.path(name)
    www = os.path.join(folder, "www")
    os.makedirs(www)
    for file, size in files:
        with open(os.path.join(www, file), "wb") as f:
            f.truncate(size)
        os.chmod(os.path.join(www, file), 0o644)
    access = os.path.join(folder, "access.log")
    ngx = s.enter_context(servers.nginx(
        folder, s.pinning.server, keepalive_timeout=keepalive, connections=1024,
        http="log_format tls '$connection $server_protocol $ssl_session_reused $arg_who';",
        listen="ssl http2" if http2 else "ssl",
        server=(f"ssl_certificate {certs}/cert.pem; ssl_certificate_key {certs}/key.pem; "
                f"ssl_protocols {protocols}; access_log {access} tls;")))
    log(f"{name}: nginx {ngx['version']} on port {ngx['port']} ({protocols}, "
        f"{'h2' if http2 else 'http/1.1'}, keepalive_timeout {keepalive})")
    return f"https://127.0.0.1:{ngx['port']}/", access


def log_summary(lines: list[list[str]]) -> str:
    protocols = sorted({line[1] for line in lines if len(line) > 1})
    resumed = sum(1 for line in lines if len(line) > 2 and line[2] == "r")
    return (f"{'/'.join(protocols) or '?'}, {len({line[0] for line in lines})} conn., "
            f"{100 * resumed / max(len(lines), 1):.0f} % resumed")


# MARK: - Run

def scenario(s: Session, name: str, certs: str, count: int, settings: dict[str, str],
             missing: dict[str, str]) -> dict[str, Any]:
    options, file, size = SCENARIOS[name]
    base, access = tls_nginx(s, name, certs, **options)
    url = base + file
    cs = []
    for who, make in MAKERS.items():
        try:
            get, settings[who] = make(os.path.join(certs, "bundle.pem"))
        except ImportError as exc:
            missing[who] = f"not installed (`pip install {exc.name}`)"
            continue
        cs.append(Contestant(who, settings[who], count=count, call=lambda get=get: get(url)))
    seen = [0]
    logged: dict[str, list[list[str]]] = {}

    def check(c: Contestant, body: bytes) -> None:
        if len(body) != size:
            raise SystemExit(f"{name}: {c.name} received {len(body)} bytes, not {size}")
        with open(access) as f:
            lines = f.read().splitlines()
        logged.setdefault(c.name, []).extend(line.split() for line in lines[seen[0]:])
        seen[0] = len(lines)
    runner = s.runner(check=check)
    res = runner.rounds(runner.warm_up(cs, s.settings.only), s.settings.rounds, count)
    return {"name": name, "res": res, "logged": logged, "count": count, "size": size}


def vs_best(secs: dict[str, dict[int, float]], per: dict[int, float], others: list[str], target: float) -> str:
    """The cell "**median (min–max)** (verdict)" of the per-round ratios of `per` (seconds per
    round) to the fastest of `others` in each round; "" without others."""
    if not others:
        return ""
    best = {r: min(secs[w][r] for w in others if r in secs[w]) for r in per}
    ratios = stats.same_round(best, per)
    return f"**{stats.summary(ratios)}** ({stats.verdict(f'≥ {target}', ratios)})"


def rows(result: dict[str, Any]) -> list[str]:
    secs = result["res"].of("seconds")
    big = result["size"] > 1 << 20
    scale, unit = (result["size"] / 1e6, "MB/s") if big else (1.0, "req/s")
    others = [w for w in secs if not w.startswith("hc") and w not in CONTEXT]
    out = []
    for i, (who, per) in enumerate(secs.items()):
        ratio = vs_best(secs, per, others, TARGET) if who.startswith("hc") else ""
        if who in CONTEXT and "hc" in secs:
            ratio = f"context: hc / {who} {stats.summary(stats.same_round(per, secs['hc']))}"
        rate = scale / stats.median(per.values())
        out.append(f"| {result['name'] if i == 0 else ''} | {result['count'] if i == 0 else ''} | `{who}` | "
                   f"{rate:,.0f} {unit} | {log_summary(result['logged'].get(who, []))} | {ratio} |")
    return out


def main(argv: list[str]) -> int:
    settings = parse(argv, rounds=5, options=[
        (("--kept",), {"type": int, "default": 2000, "help": "1 KiB GETs per measurement on a kept connection"}),
        (("--fresh",), {"type": int, "default": 300, "help": "GETs per measurement, a new connection each"}),
        (("--big",), {"type": int, "default": 3, "help": "64 MiB GETs per measurement"}),
        (("--scenarios",), {"default": ",".join(SCENARIOS), "help": "comma-separated: " + ", ".join(SCENARIOS)})])
    x = settings.extra
    counts = {"kept": x.kept, "kept-h1": x.kept, "fresh-tls13": x.fresh, "fresh-tls12": x.fresh, "64mib": x.big}
    with Session("https", "python3 bench/bench.py https", settings, "nginx", "clients") as s:
        certs = make_certs(s)
        s.snapshot()
        sys.path.insert(0, s.snap["py"])
        s.pinning.pin_self()
        contestant_settings: dict[str, str] = {}
        missing: dict[str, str] = {}
        results = [scenario(s, name, certs, counts[name], contestant_settings, missing)
                   for name in x.scenarios.split(",")]
    lines = [SECTION, "",
             f"{s.measured_by()}; {s.pinning.sentence}; {s.rounds_note(results[0]['res'])} (per scenario). "
             "One nginx with TLS per scenario (one worker, RSA 2048 certificate signed by a CA made for the "
             "run; every client trusts CA = the system's bundle with that CA appended, a store of real size); every client in one process, interleaved round by round; the per-round ratios are the "
             "figure, absolute rates are noise on this shared machine.", "",
             "Scenarios: `kept` 1 KiB GETs on one kept connection, TLS 1.3, ALPN h2 where the client offers it; "
             "`kept-h1` the same with nginx offering http/1.1 only (the ALPN choice); `fresh-tls13` and "
             "`fresh-tls12` a new TLS connection per request (nginx `keepalive_timeout 0`), one client kept, "
             "TLS 1.3 or TLS 1.2 only (nginx keeps no session-ID cache: TLS 1.2 resumes by ticket only); "
             "`64mib` 64 MiB bodies into memory on a kept connection.", "",
             "| contestant | settings |", "|---|---|"]
    lines += [f"| `{who}` | {text} |" for who, text in contestant_settings.items()]
    lines += [f"| `{who}` | left out: {why} |" for who, why in missing.items()]
    lines += ["", "| scenario | requests per measurement | contestant | median rate | nginx saw | "
              f"hc (each setting) / best other, per round: median (min–max), target ≥ {TARGET} |", "|---|---|---|---|---|---|"]
    for r in results:
        lines += rows(r)
    lines += ["", "What was found and changed (issue 31), measured on this machine with libcurl 7.88.1 and "
              "OpenSSL 3.0 before the runs above:", "",
              "- **CA store parsed per connection.** Debian's libcurl has a default CA file and a CA directory; "
              "with both, libcurl 7.88 does not cache the parsed store (CURLOPT_CA_CACHE_TIMEOUT applies to a "
              "file alone) and parses the whole bundle again for every new connection: 2–3 new connections a "
              "second against 24–25 with the directory unset, a minimal libcurl program with the system's 140 "
              "certificates on a loaded machine. httpcontent now unsets the directory when a CA file is given "
              "or libcurl's default bundle exists: the store is parsed once per multi handle.",
              "- **TLS 1.2 never resumed.** libcurl 7.88 sets SSL_OP_NO_TICKET; nginx keeps no session-ID cache "
              "by default, so a TLS 1.2 client of libcurl makes a full handshake on every connection (pycurl's "
              "libcurl 8.23 too: `fresh-tls12`, 0 % resumed). httpcontent clears the option in its SSL_CTX "
              "callback (`tlsSessionTickets`, on by default): 1.6–2.4× the new connections a second in the minimal "
              "program, and 0 → 100 % resumed over http/1.1 (`hc-h1`).",
              "- **Sessions per handle.** Each easy handle kept its own session cache; a client's handles now "
              "share one (`ConnectionShare`, a libcurl share handle with SSL sessions and DNS; the cookie jar's "
              "when cookies are on), so a batch's or another thread's new handle resumes too (tested: 6 new "
              "handles of a batch all resumed, TLS 1.2).",
              "- **h2 does not resume with this libcurl.** With ALPN h2, libcurl 7.88 offers the stored session "
              "(its log says it re-uses the session ID) and the server still makes a full handshake; with "
              "http/1.1 the same client resumes every time. It is not nginx's abrupt end of an h2 connection "
              "under `keepalive_timeout 0`: a minimal libcurl program that closes each connection itself "
              "(CURLOPT_FORBID_REUSE, nginx keeping alive) resumes none of 20 over h2, and setting "
              "SSL_OP_IGNORE_UNEXPECTED_EOF changes nothing. pycurl's libcurl 8.23 (OpenSSL 3.6) resumes over "
              "h2. Offer http/1.1 (`http_version=\"1.1\"`) where connections are not kept.",
              "- **What httpcontent adds to the TLS stack: nothing measurable.** The `libcurl` row is the "
              "system's libcurl driven through ctypes with httpcontent's TLS settings; hc / libcurl is the "
              "context column. The gap to the Rust clients is libcurl 7.88 with OpenSSL 3.0 against reqwest "
              "with rustls: libcurl makes an SSL_CTX per connection (costly in OpenSSL 3.0) and rustls does "
              "far less work per handshake. On this shared machine kept-connection rates are also dominated by "
              "scheduling: every client waits for the server's wake-up, and reqwest's runtime threads wake "
              "sooner."]
    return s.publish(lines)
