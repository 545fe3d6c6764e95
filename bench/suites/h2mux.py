"""HTTP/2 multiplexing (issue 31): 64 requests in flight over HTTPS to one nginx with h2.

    python3 bench/bench.py h2mux [--rounds 5] [--small 30] [--medium 10] [--scenarios 1k,64k] [--no-write]

A local nginx with TLS (one worker on the server CPU; a CA made for the run and a certificate it
signs for 127.0.0.1, RSA 2048, TLS 1.3, ALPN h2 and http/1.1; `http2_max_concurrent_streams`
128, nginx's default); every client in this process on the client CPU, one event loop for the
asyncio ones. A pass is 64 GETs of one file started at once and all awaited; a measurement is
`--small` (1 KiB) or `--medium` (64 KiB) passes. Scenarios `1k` and `64k`.

Contestants (each trusts CA = the system's bundle with the run's CA appended; one client each,
kept for the run, so connections are made in the warm-up):
  hc-asyncio   `hc.Client(ca_file=CA)`, `asyncio.gather(*(client.arequest("GET", url) x 64))`: the
               native asyncio path (libcurl multi driven by the loop, no thread)
  hc-map       the same client, `client.map([hc.Request("GET", url)] * 64, concurrency=64)`
  pyreqwest    `ClientBuilder().add_root_certificate_pem(CA).http2(True).build()` (reqwest +
               rustls, hyper's h2; h2 is opt-in there), 64 tasks `await (await
               client.get(url).build().send()).bytes()`
  httpx        `AsyncClient(http2=True, verify=ssl context of CA, limits=Limits(64, 64))`,
               64 tasks of `(await client.get(url)).content` (h2 from the `h2` package)
  aiohttp      `ClientSession(TCPConnector(limit=64, ssl=ssl context of CA))`, 64 tasks of
               `await resp.read()`: HTTP/1.1 only, 64 connections
h2 and the clients are bench-only dependencies: a missing one is installed into the bench's
cache folder (h2) or left out, with the reason.

Each request carries `?who=NAME`: nginx's access log gives each contestant's protocol and the
connections its requests came on. The figure per scenario is, for each hc contestant, the
per-round ratio of its rate to the best of pyreqwest, httpx and aiohttp in that round (target
>= 1.3), median and min-max. Writes the section "## HTTP/2 multiplexing (issue 31)".
"""

from __future__ import annotations

import asyncio
import importlib.metadata
import os
import ssl
import sys
from pathlib import Path
from typing import Any, Awaitable, Callable

from harness import Contestant, Session, library, log, parse, stats

from . import https

SECTION = "## HTTP/2 multiplexing (issue 31)"
IN_FLIGHT = 64
TARGET = 1.3
SCENARIOS = {"1k": ("1k.bin", 1024), "64k": ("64k.bin", 64 * 1024)}
ANCHORS = ("pyreqwest", "httpx", "aiohttp")

# name -> (make(ca, loop) -> (one pass: urls -> list of bodies, settings text))
Pass = Callable[[list[str]], list[bytes]]


def version(module: str) -> str:
    try:
        return importlib.metadata.version(module)
    except importlib.metadata.PackageNotFoundError:
        return "?"


# MARK: - Contestants

def hc_asyncio(ca: str, loop: asyncio.AbstractEventLoop, state: dict[str, Any]) -> tuple[Pass, str]:
    import httpcontent as hc
    client = state.setdefault("hc", hc.Client(ca_file=ca))

    async def run(urls: list[str]) -> list[bytes]:
        return [r.content for r in await asyncio.gather(*(client.arequest("GET", u) for u in urls))]
    return (lambda urls: loop.run_until_complete(run(urls))), \
        f"`hc.Client(ca_file=CA)`; `asyncio.gather(*(client.arequest(\"GET\", url) for 64))`, `.content`"


def hc_map(ca: str, loop: asyncio.AbstractEventLoop, state: dict[str, Any]) -> tuple[Pass, str]:
    import httpcontent as hc
    client = state.setdefault("hc", hc.Client(ca_file=ca))
    return (lambda urls: [r.content for r in client.map([hc.Request("GET", u) for u in urls], concurrency=IN_FLIGHT)]), \
        "the same client; `client.map([hc.Request(\"GET\", url)] * 64, concurrency=64)`, `.content`"


def pyreqwest_async(ca: str, loop: asyncio.AbstractEventLoop, state: dict[str, Any]) -> tuple[Pass, str]:
    from pyreqwest.client import ClientBuilder

    async def make() -> Any:
        return ClientBuilder().add_root_certificate_pem(Path(ca).read_bytes()).http2(True).build()
    client = loop.run_until_complete(make())

    async def one(u: str) -> bytes:
        resp = await client.get(u).build().send()
        return bytes(await resp.bytes())

    async def run(urls: list[str]) -> list[bytes]:
        return list(await asyncio.gather(*(one(u) for u in urls)))
    state.setdefault("close", []).append(lambda: loop.run_until_complete(client.close()))
    return (lambda urls: loop.run_until_complete(run(urls))), \
        (f"pyreqwest {version('pyreqwest')}: `ClientBuilder().add_root_certificate_pem(CA).http2(True).build()` "
         "(single-threaded runtime, its default), 64 tasks of `await (await client.get(url).build().send()).bytes()`")


def httpx_h2(ca: str, loop: asyncio.AbstractEventLoop, state: dict[str, Any]) -> tuple[Pass, str]:
    import h2  # noqa: F401  (httpx's http2=True needs it: ImportError leaves httpx out)
    import httpx

    async def make() -> Any:
        return httpx.AsyncClient(http2=True, verify=ssl.create_default_context(cafile=ca),
                                 limits=httpx.Limits(max_connections=IN_FLIGHT, max_keepalive_connections=IN_FLIGHT))
    client = loop.run_until_complete(make())

    async def run(urls: list[str]) -> list[bytes]:
        return [r.content for r in await asyncio.gather(*(client.get(u) for u in urls))]
    state.setdefault("close", []).append(lambda: loop.run_until_complete(client.aclose()))
    return (lambda urls: loop.run_until_complete(run(urls))), \
        (f"httpx {version('httpx')} + h2 {version('h2')}: `AsyncClient(http2=True, verify=SSLContext(CA), "
         "limits=Limits(64, 64))`, 64 tasks of `(await client.get(url)).content`")


def aiohttp_h1(ca: str, loop: asyncio.AbstractEventLoop, state: dict[str, Any]) -> tuple[Pass, str]:
    import aiohttp

    async def make() -> Any:
        return aiohttp.ClientSession(connector=aiohttp.TCPConnector(
            limit=IN_FLIGHT, limit_per_host=IN_FLIGHT, keepalive_timeout=60, ssl=ssl.create_default_context(cafile=ca)))
    session = loop.run_until_complete(make())

    async def one(u: str) -> bytes:
        async with session.get(u) as resp:
            return await resp.read()

    async def run(urls: list[str]) -> list[bytes]:
        return list(await asyncio.gather(*(one(u) for u in urls)))
    state.setdefault("close", []).append(lambda: loop.run_until_complete(session.close()))
    return (lambda urls: loop.run_until_complete(run(urls))), \
        (f"aiohttp {version('aiohttp')}: `ClientSession(TCPConnector(limit=64, limit_per_host=64, ssl=SSLContext(CA)))`, "
         "64 tasks of `await resp.read()` (HTTP/1.1 only: one connection per request in flight)")


MAKERS: dict[str, Callable[..., tuple[Pass, str]]] = {
    "hc-asyncio": hc_asyncio, "hc-map": hc_map, "pyreqwest": pyreqwest_async, "httpx": httpx_h2, "aiohttp": aiohttp_h1}


FINDINGS = [
    "", "What was found and changed (issue 31), libcurl 7.88.1, nghttp2 1.52, OpenSSL 3.0:", "",
    "- **A new TLS connection per `map` call.** Each `map` made a batch, i.e. a libcurl multi handle, "
    "and connections live in the multi handle's cache: every call paid a TLS handshake and h2 setup "
    "(nginx saw 4 connections for 4 passes of `hc-map`). The Python client now keeps its finished batch "
    "for the next `map` (at most one idle; a map on another thread meanwhile makes its own): one "
    "connection for the whole run, as `hc-asyncio` (whose loop already kept its batch).",
    "- **libcurl 7.88 stalls a multiplexed connection whenever one stream's buffer is full** (this "
    "round, the asyncio path). Reading the shared socket for one transfer, its h2 code copies other "
    "streams' DATA into those streams' receive buffers and pauses the connection once one is full; in "
    "socket-action mode every readiness of that socket then runs every transfer on it (lib/multi.c "
    "`multi_socket` expires them all), each one that did not get the event bits calling poll(2). With "
    "the 16 KiB buffer batches had, 64 x 64 KiB cost 2,215 poll calls, 116 `curl_multi_socket_action` "
    "and 59 `hc_batch_step` per pass (uprobes, `hc-asyncio`); with 256 KiB 193, 5 and 3. CPU per pass "
    "by buffer (5 interleaved rounds, one process, medians): 16 KiB 24.2 ms, 96 KiB 16.8, 128 KiB "
    "15.3, 256 KiB 15.0, 1 MiB 16.0; pyreqwest 18.0 in the same rounds. Batch and async transfers whose "
    "handler keeps the whole body now get 128 KiB (`ClientConfiguration.receiveBufferSize`, "
    "`buffer_size=`; a request sent alone keeps 256 KiB, a streaming handler libcurl's 16 KiB, its "
    "memory being counted in buffers); libcurl allocates it per handle and only the pages a body reaches are touched. "
    "The earlier finding that buffer sizes did not matter was measured on `map`, whose "
    "`curl_multi_perform` rounds run every transfer anyway (the same 18.5 ms with 16 or 256 KiB).",
    "- **`map` takes completions as `arequest` does.** It ran `hc_batch_run` with a prepared native "
    "request and a ctypes callback per request (about 40 µs of Python per request at 1 KiB, "
    "cProfile) and `curl_multi_perform` rounds. It now drives the batch's own epoll set from a "
    "small loop on the caller's thread (`_blocking.BlockingLoop`: poll(2) on one descriptor, the "
    "batch's timer), the same `LoopDriver` as the asyncio path: plain requests queued in one call "
    "per turn, completions read in arrays, small bodies copied in one slice. CPU per pass, before "
    "→ after, same rounds: 1 KiB 7.4 → 5.3 ms (asyncio 6.9 → 6.3, pyreqwest 7.2–10.0), 64 KiB "
    "17.1 → 14.6 ms (asyncio 24.9 → 16.4, pyreqwest 16.6–19.2), load average about 2.",
    "- **Before and after in the same conditions** (this harness, 5 rounds, load average 2.4 from "
    "another session's builds, nginx's CPU shared with them: at 64 KiB every client waited on nginx, "
    "so rates were equal and the client CPU per pass is the better figure): the tree before these "
    "changes (main at b692144) gave per-round rate ratios 1 KiB `hc-asyncio` 1.01, `hc-map` 1.23; "
    "64 KiB 0.76 and 1.02, with client CPU per pass 1 KiB 7.3 / 7.4 ms (pyreqwest 9.8), 64 KiB "
    "33.5 / 15.8 ms (pyreqwest 25.2); right after, 1.09, 1.18, 1.10, 0.98, CPU 1 KiB 8.0 / 6.0 ms "
    "(pyreqwest 8.7), 64 KiB 18.4 / 15.1 ms (pyreqwest 18.2). Callgrind (user-space instructions per "
    "pass, which hides the wake-ups: under it the client is slow enough to find every byte already "
    "there): 64 KiB `hc-asyncio` 38.1 → 35.7 M, `hc-map` 36.3 → 35.2 M (pyreqwest 34.3 M); 1 KiB "
    "13.1 → 12.8 M and 13.7 → 10.2 M (pyreqwest 11.8 M). The ratios need the quiet re-run.",
    "- **A lent body is handed over as it is.** A body of 64 KiB or more with a length is written "
    "by the library into a bytes object the `Bytes` handler lends; the loop's step now hands that "
    "object to the Response directly (no `Response.__init__`, no ctypes casts), and the lending "
    "callback finds the object's data address from its id.",
    "- **Where the CPU goes now at 64 KiB** (perf, `hc-asyncio`): the kernel a third (a third of "
    "that page faults: glibc gives back the heap as a pass's 4 MiB of bodies go, and the next pass "
    "faults it in again, as for every client here that makes Python bytes of its bodies; the rest "
    "socket copies), Python 15 %, libc 14 % (memcpy 6 %, malloc), OpenSSL 12 %, libcurl 11 %, "
    "httpcontent 5 %, nghttp2 4 %. OpenSSL reads each TLS record in two recv calls (header, "
    "then body: 770 per pass); its read-ahead would halve them, but libcurl 7.88 asks `SSL_pending`, "
    "which does not see read-ahead bytes, and would wait on a socket already drained.",
    "- **Per-host limits** are now a client setting on all three fronts (`hc_client_set_host_limit`, "
    "`host_limit=`, `maxConnectionsPerHost`), counted in nginx's log by the tests (C `test_batch`, "
    "Python `test_host_limit`). Offering h2 to an http/1.1-only server over TLS, a batch's 1 KiB "
    "transfers often all come on one connection (they wait for it to say whether it multiplexes); "
    "`http_version=\"1.1\"` opens one per transfer in flight (up to the limit).",
    "- **ALPN for sequential small requests** (`bash bench/https.sh --scenarios kept,kept-h1 --rounds 5 "
    "--kept 1500`, 2026-11-29, load average 8–9): on one kept TLS 1.3 connection, `hc-h1` (http/1.1) "
    "against `hc` (h2), per round: rate 1.30× (0.72–3.02), CPU per request h2 / http/1.1 1.23× "
    "(1.03–1.79); the same pair when nginx offers http/1.1 only (both http/1.1, the noise floor): rate "
    "1.09× (0.31–3.26), CPU 0.90× (0.64–1.43). So http/1.1 costs less for one request after another; "
    "h2 stays the default (one connection for everything in flight, as above) until a quiet run says "
    "by how much; `http_version=\"1.1\"` is the setting for a strictly sequential client.",
]


# MARK: - Run

def need_h2(pydeps: str) -> None:
    """h2 (httpx's HTTP/2) from the bench's cache folder, installed there on first use."""
    sys.path.append(pydeps)
    try:
        import h2  # noqa: F401
    except ImportError:
        log(f"h2 missing: pip install --target {pydeps} h2")
        library.pip_into_cache(pydeps, "h2")
        importlib.invalidate_caches()


def scenario(s: Session, name: str, certs: str, count: int, loop: asyncio.AbstractEventLoop,
             settings: dict[str, str], missing: dict[str, str], state: dict[str, Any]) -> dict[str, Any]:
    file, size = SCENARIOS[name]
    base, access = https.tls_nginx(s, name, certs, "TLSv1.3", files=((file, size),))
    ca = os.path.join(certs, "bundle.pem")
    cs = []
    for who, make in MAKERS.items():
        try:
            run, settings[who] = make(ca, loop, state)
        except ImportError as exc:
            missing[who] = f"not installed (`pip install {exc.name}`)"
            continue
        urls = [f"{base}{file}?who={who}"] * IN_FLIGHT
        cs.append(Contestant(who, settings[who], count=count, call=lambda run=run, urls=urls: run(urls)))

    def check(c: Contestant, bodies: list[bytes]) -> None:
        if len(bodies) != IN_FLIGHT or any(len(b) != size for b in bodies):
            raise SystemExit(f"{name}: {c.name} received {[len(b) for b in bodies][:4]}..., not {IN_FLIGHT} x {size}")
    res = s.run(cs, runner=s.runner(check=check))
    return {"name": name, "res": res, "access": access, "count": count, "size": size}


def nginx_saw(access: str, who: str) -> str:
    """Protocol(s) and connections of `who`'s requests in the access log (warm-up included)."""
    with open(access) as f:
        lines = [line.split() for line in f.read().splitlines()]
    mine = [line for line in lines if len(line) > 3 and line[3] == who]
    protocols = "/".join(sorted({line[1] for line in mine})) or "?"
    return f"{protocols}, {len({line[0] for line in mine})} conn. ({len(mine):,} requests)"


def rows(result: dict[str, Any]) -> list[str]:
    secs = result["res"].of("seconds")
    anchors = [w for w in secs if w in ANCHORS]
    out = []
    for i, (who, per) in enumerate(secs.items()):
        ratio = https.vs_best(secs, per, anchors, TARGET) if who.startswith("hc") else ""
        rate = IN_FLIGHT / stats.median(per.values())
        mbs = rate * result["size"] / 1e6
        out.append(f"| {result['name'] if i == 0 else ''} | {result['count'] if i == 0 else ''} | `{who}` | "
                   f"{rate:,.0f} req/s ({mbs:,.0f} MB/s) | {nginx_saw(result['access'], who)} | {ratio} |")
    return out


def main(argv: list[str]) -> int:
    settings = parse(argv, rounds=5, options=[
        (("--small",), {"type": int, "default": 30, "help": "passes of 64 x 1 KiB per measurement"}),
        (("--medium",), {"type": int, "default": 10, "help": "passes of 64 x 64 KiB per measurement"}),
        (("--scenarios",), {"default": ",".join(SCENARIOS), "help": "comma-separated: " + ", ".join(SCENARIOS)})])
    x = settings.extra
    counts = {"1k": x.small, "64k": x.medium}
    with Session("h2mux", "bash bench/h2mux.sh", settings, "nginx", "clients") as s:
        certs = https.make_certs(s)
        s.snapshot()
        sys.path.insert(0, s.snap["py"])
        need_h2(settings.pydeps)
        s.pinning.pin_self()
        loop = asyncio.new_event_loop()
        s.callback(loop.close)
        state: dict[str, Any] = {}
        s.callback(lambda: [close() for close in state.get("close", [])] and None)
        contestant_settings: dict[str, str] = {}
        missing: dict[str, str] = {}
        results = [scenario(s, name, certs, counts[name], loop, contestant_settings, missing, state)
                   for name in x.scenarios.split(",")]
        if "hc" in state:
            state["hc"].close()
        lines = [SECTION, "",
                 f"{s.measured_by()}; {s.pinning.sentence}; {s.rounds_note(results[0]['res'])} (per scenario). "
                 "One nginx with TLS 1.3 and h2 per scenario (one worker, RSA 2048 certificate signed by a CA made "
                 "for the run, `http2_max_concurrent_streams` 128); every client trusts CA = the system's bundle "
                 "with that CA appended. A pass is 64 GETs started at once and all awaited; every client in one "
                 "process, one event loop for the asyncio ones, interleaved round by round: the per-round ratios "
                 "are the figure, absolute rates are noise on this shared machine.", "",
                 "| contestant | settings |", "|---|---|"]
        lines += [f"| `{who}` | {text} |" for who, text in contestant_settings.items()]
        lines += [f"| `{who}` | left out: {why} |" for who, why in missing.items()]
        lines += ["", "| body | passes per measurement | contestant | median rate | nginx saw (protocol, connections) | "
                  f"hc / best of pyreqwest, httpx, aiohttp, per round: median (min–max), target ≥ {TARGET} |",
                  "|---|---|---|---|---|---|"]
        for r in results:
            lines += rows(r)
        lines += FINDINGS
    return s.publish(lines)
