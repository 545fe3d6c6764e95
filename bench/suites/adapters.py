"""Adapters (issue 30): requests and httpx with httpcontent underneath, against themselves.

    bash bench/adapters.sh [--rounds 7] [--big 100] [--small 2000] [--requests 2000] [--no-write]

A local nginx (one worker, sendfile, keep-alive, on the server CPU; this process on the client CPU) serves a 1 MiB
and a 1 KiB file. Contestants, interleaved round by round in one process (the order rotating):
  1 MiB bodies      BIG sequential GETs of the 1 MiB file, `r.content`: requests.Session() as it
                    comes (urllib3) against a Session mounting RequestsAdapter on http:// and https://
  1 KiB sequential  SMALL sequential GETs of the 1 KiB file, the same two Sessions; and the
                    same through each Session's adapter alone (`adapter.send(prepared)`), to
                    show the transport's share apart from requests' own per-request work
  httpx, 64 in flight  COUNT GETs of the 1 KiB file as asyncio tasks under a Semaphore(64),
                    `await client.get(url)`: httpx.AsyncClient with its own transport
                    (limits=Limits(max_connections=64, max_keepalive_connections=64)) against
                    AsyncClient(transport=AsyncHTTPXTransport())
The figure is the per-round ratio (httpcontent's rate over the peer's own), median and min-max.
Targets: >= 2x on 1 MiB, >= 1.3x on 1 KiB sequential, >= 1.5x at 64 in flight.
Writes the section "## Adapters (issue 30)" of BENCHMARKS.md.
"""

from __future__ import annotations

import asyncio
import os
import sys
from typing import Any

from harness import Contestant, Session, parse, stats

SECTION = "## Adapters (issue 30)"
MIB = 1 << 20
# workload → target (the ratio httpcontent's rate / the peer's own), None: no target.
TARGETS = {"1 MiB": 2.0, "1 KiB sequential": 1.3, "1 KiB sequential, adapter.send": None, "httpx, 64 in flight": 1.5}


def hc_session(requests: Any, RequestsAdapter: Any) -> Any:
    s = requests.Session()
    adapter = RequestsAdapter()
    s.mount("http://", adapter)
    s.mount("https://", adapter)
    return s


def sequential(session: Any, url: str, count: int, size: int) -> None:
    for _ in range(count):
        r = session.get(url)
        assert r.status_code == 200 and len(r.content) == size


def sends(adapter: object, prepared: Any, count: int) -> None:
    """The transport alone: `adapter.send(prepared)` as Session.send calls it, without the
    Session's own per-request work (environment proxies, merging settings, preparing, hooks)."""
    for _ in range(count):
        r = adapter.send(prepared)   # type: ignore[attr-defined]
        assert r.status_code == 200 and len(r.content) == 1024


async def in_flight(client: Any, url: str, count: int, n: int) -> None:
    gate = asyncio.Semaphore(n)

    async def one() -> None:
        async with gate:
            r = await client.get(url)
            assert r.status_code == 200 and len(r.content) == 1024

    await asyncio.gather(*(one() for _ in range(count)))


def contestants(x: Any, base: str, loop: asyncio.AbstractEventLoop, s: Session) -> list[Contestant]:
    """Per workload, the peer as it comes, then with httpcontent underneath (tags: group, units)."""
    import httpx
    import requests
    from httpcontent.adapters import AsyncHTTPXTransport, RequestsAdapter
    big, small = base + "/big.bin", base + "/small.bin"
    plain, ours = requests.Session(), hc_session(requests, RequestsAdapter)
    prepared = plain.prepare_request(requests.Request("GET", small))
    hx_own = httpx.AsyncClient(limits=httpx.Limits(max_connections=64, max_keepalive_connections=64))
    hx_ours = httpx.AsyncClient(transport=AsyncHTTPXTransport())
    for client in (hx_own, hx_ours):
        s.callback(lambda client=client: loop.run_until_complete(client.aclose()))
    runs = [
        ("1 MiB", "requests", x.big, lambda: sequential(plain, big, x.big, MIB)),
        ("1 MiB", "requests + RequestsAdapter", x.big, lambda: sequential(ours, big, x.big, MIB)),
        ("1 KiB sequential", "requests", x.small, lambda: sequential(plain, small, x.small, 1024)),
        ("1 KiB sequential", "requests + RequestsAdapter", x.small, lambda: sequential(ours, small, x.small, 1024)),
        ("1 KiB sequential, adapter.send", "HTTPAdapter.send", x.small,
         lambda: sends(plain.get_adapter(small), prepared, x.small)),
        ("1 KiB sequential, adapter.send", "RequestsAdapter.send", x.small,
         lambda: sends(ours.get_adapter(small), prepared, x.small)),
        ("httpx, 64 in flight", "httpx.AsyncClient", x.requests,
         lambda: loop.run_until_complete(in_flight(hx_own, small, x.requests, 64))),
        ("httpx, 64 in flight", "httpx.AsyncClient + AsyncHTTPXTransport", x.requests,
         lambda: loop.run_until_complete(in_flight(hx_ours, small, x.requests, 64))),
    ]
    return [Contestant(f"{group}/{name}", name, call=run, tags={"group": group, "units": units})
            for group, name, units, run in runs]


def main(argv: list[str]) -> int:
    settings = parse(argv, rounds=7, options=[
        (("--big",), {"type": int, "default": 100, "help": "1 MiB GETs per round and contestant"}),
        (("--small",), {"type": int, "default": 2000, "help": "1 KiB sequential GETs per round and contestant"}),
        (("--requests",), {"type": int, "default": 2000, "help": "1 KiB GETs per round at 64 in flight"})])
    x = settings.extra
    with Session("adapters", "bash bench/adapters.sh", settings) as s:
        www = s.path("www")
        os.makedirs(www)
        for name, size in (("big.bin", MIB), ("small.bin", 1024)):
            with open(os.path.join(www, name), "wb") as f:
                f.write(os.urandom(size))
            os.chmod(os.path.join(www, name), 0o644)
        ngx = s.nginx(connections=4096, keepalive_timeout="60")
        s.snapshot()
        sys.path.insert(0, s.snap["py"])
        s.pinning.pin_self()
        loop = asyncio.new_event_loop()
        s.callback(loop.close)
        cs = contestants(x, f"http://127.0.0.1:{ngx['port']}", loop, s)
        res = s.run(cs)
    lines = [SECTION, "",
             f"{s.measured_by()}; {s.pinning.sentence}; {s.rounds_note(res)}. Server: a local nginx (one worker, "
             "sendfile, keep-alive) serving a 1 MiB and a 1 KiB file of random bytes. Contestants interleaved "
             "round by round in one process; the per-round ratios are the figure, absolute rates are noise.", "",
             "| contestant | settings |", "|---|---|",
             "| `requests` | `requests.Session()` as it comes (HTTPAdapter over urllib3), `session.get(url)`, "
             "`r.content`, sequential on one keep-alive connection |",
             "| `requests + RequestsAdapter` | the same Session with `RequestsAdapter()` (a default `hc.Client`) "
             "mounted on `http://` and `https://` |",
             "| `HTTPAdapter.send` / `RequestsAdapter.send` | the two Sessions' adapters called as "
             "`Session.send` calls them, `adapter.send(prepared)` with one prepared GET: the transport "
             "without the Session's own per-request work (environment proxies, settings, hooks) |",
             "| `httpx.AsyncClient` | httpx's own transport (httpcore), "
             "`limits=httpx.Limits(max_connections=64, max_keepalive_connections=64)`, HTTP/1.1; COUNT tasks of "
             "`await client.get(url)` under `asyncio.Semaphore(64)`, `r.content` |",
             "| `httpx.AsyncClient + AsyncHTTPXTransport` | `transport=AsyncHTTPXTransport()` (a default "
             "`hc.Client`, transfers on the event loop, no thread); the same tasks |", "",
             "| workload | contestant | median rate | ratio to the peer's own, median (min-max of rounds) | target |",
             "|---|---|---|---|---|"]
    secs = res.of("seconds")
    for group, target in TARGETS.items():
        own, theirs = [c for c in cs if c.tags["group"] == group]
        units = own.tags["units"]
        ratios = stats.same_round(secs[own.name], secs[theirs.name])
        unit = "MiB/s" if group == "1 MiB" else "req/s"
        med = stats.median(ratios)
        verdict = "(no target: the transport alone)" if target is None else (
            f"{target}x: met" if med >= target else f"{target}x: **not met**")
        lines.append(f"| {group} | `{own.settings}` | {units / stats.median(secs[own.name].values()):,.0f} {unit} | 1.00 | |")
        lines.append(f"| {group} | `{theirs.settings}` | {units / stats.median(secs[theirs.name].values()):,.0f} {unit} | "
                     f"**{med:.2f}x** ({stats.spread(ratios).replace('–', '-')}) | {verdict} |")
    return s.publish(lines)
