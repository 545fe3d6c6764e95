"""adapters.py — issue 30: requests and httpx with httpcontent underneath, against themselves.

    python3 bench/adapters.py [--rounds 7] [--big 100] [--small 2000] [--count 2000] [--output BENCHMARKS.md]

A local nginx (async_bench.py's: one worker, sendfile, keep-alive, on CPU 0; this process on CPU 1) serves a 1 MiB
and a 1 KiB file. Contestants, interleaved round by round in one process:
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
Writes the section "## Adapters (issue 30)" of BENCHMARKS.md with --output.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import statistics
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
sys.path.insert(0, os.path.join(ROOT, "bindings", "python"))
sys.path.insert(0, HERE)

import httpx  # noqa: E402
import requests  # noqa: E402

import async_bench  # noqa: E402
from async_bench import pin_self  # noqa: E402
from httpcontent.adapters import AsyncHTTPXTransport, RequestsAdapter  # noqa: E402
from report_common import replace_section  # noqa: E402

SECTION = "## Adapters (issue 30)"
MIB = 1 << 20


def start_nginx(root: str) -> tuple[object, str]:
    """async_bench's nginx (1 KiB small.bin), plus a 1 MiB big.bin in the folder it serves."""
    with open(os.path.join(root, "big.bin"), "wb") as f:
        f.write(os.urandom(MIB))
    proc, small = async_bench.start_nginx(root)
    return proc, small.rsplit("/", 1)[0]


def hc_session() -> requests.Session:
    s = requests.Session()
    adapter = RequestsAdapter()
    s.mount("http://", adapter)
    s.mount("https://", adapter)
    return s


def sequential(session: requests.Session, url: str, count: int, size: int) -> None:
    for _ in range(count):
        r = session.get(url)
        assert r.status_code == 200 and len(r.content) == size


def sends(adapter: object, prepared: requests.PreparedRequest, count: int) -> None:
    """The transport alone: `adapter.send(prepared)` as Session.send calls it, without the
    Session's own per-request work (environment proxies, merging settings, preparing, hooks)."""
    for _ in range(count):
        r = adapter.send(prepared)   # type: ignore[attr-defined]
        assert r.status_code == 200 and len(r.content) == 1024


async def in_flight(client: httpx.AsyncClient, url: str, count: int, n: int) -> None:
    gate = asyncio.Semaphore(n)

    async def one() -> None:
        async with gate:
            r = await client.get(url)
            assert r.status_code == 200 and len(r.content) == 1024

    await asyncio.gather(*(one() for _ in range(count)))


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--rounds", type=int, default=7)
    ap.add_argument("--big", type=int, default=100, help="1 MiB GETs per round and contestant")
    ap.add_argument("--small", type=int, default=2000, help="1 KiB sequential GETs per round and contestant")
    ap.add_argument("--count", type=int, default=2000, help="1 KiB GETs per round at 64 in flight")
    ap.add_argument("--output")
    args = ap.parse_args()

    root = tempfile.mkdtemp(prefix="hc-adapters-")
    nginx, base = start_nginx(root)
    pinning = pin_self()
    big, small = base + "/big.bin", base + "/small.bin"
    plain, ours = requests.Session(), hc_session()
    prepared = plain.prepare_request(requests.Request("GET", small))
    loop = asyncio.new_event_loop()
    limits = httpx.Limits(max_connections=64, max_keepalive_connections=64)
    hx_own = httpx.AsyncClient(limits=limits)
    hx_ours = httpx.AsyncClient(transport=AsyncHTTPXTransport())
    # (group, contestant, unit count per run, run)
    contestants = [
        ("1 MiB", "requests", args.big, lambda: sequential(plain, big, args.big, MIB)),
        ("1 MiB", "requests + RequestsAdapter", args.big, lambda: sequential(ours, big, args.big, MIB)),
        ("1 KiB sequential", "requests", args.small, lambda: sequential(plain, small, args.small, 1024)),
        ("1 KiB sequential", "requests + RequestsAdapter", args.small,
         lambda: sequential(ours, small, args.small, 1024)),
        ("1 KiB sequential, adapter.send", "HTTPAdapter.send", args.small,
         lambda: sends(plain.get_adapter(small), prepared, args.small)),
        ("1 KiB sequential, adapter.send", "RequestsAdapter.send", args.small,
         lambda: sends(ours.get_adapter(small), prepared, args.small)),
        ("httpx, 64 in flight", "httpx.AsyncClient", args.count,
         lambda: loop.run_until_complete(in_flight(hx_own, small, args.count, 64))),
        ("httpx, 64 in flight", "httpx.AsyncClient + AsyncHTTPXTransport", args.count,
         lambda: loop.run_until_complete(in_flight(hx_ours, small, args.count, 64))),
    ]
    rates: dict[tuple[str, str], list[float]] = {}
    try:
        for _, _, _, run in contestants:   # warm-up: connections, imports
            run()
        for r in range(args.rounds):
            for group, name, units, run in contestants:
                t = time.perf_counter()
                run()
                rates.setdefault((group, name), []).append(units / (time.perf_counter() - t))
            print(f"round {r + 1}: " + ", ".join(f"{g}/{n} {v[-1]:,.0f}/s" for (g, n), v in rates.items()),
                  file=sys.stderr)
    finally:
        loop.run_until_complete(hx_own.aclose())
        loop.run_until_complete(hx_ours.aclose())
        loop.close()
        nginx.terminate()   # type: ignore[attr-defined]
        nginx.wait()   # type: ignore[attr-defined]
        import shutil
        shutil.rmtree(root, ignore_errors=True)

    load = " ".join(f"{x:.2f}" for x in os.getloadavg())
    lines = [SECTION, "",
             f"Measured by `python3 bench/adapters.py --rounds {args.rounds} --big {args.big} --small {args.small} "
             f"--count {args.count}` on {time.strftime('%Y-%m-%d')}, {os.cpu_count()} cores, load average "
             f"(1/5/15 min) at the end {load}; {pinning}. Server: a local nginx (one worker, sendfile, "
             "keep-alive) serving a 1 MiB and a 1 KiB file of random bytes. Contestants interleaved round by "
             "round in one process; the per-round ratios are the figure, absolute rates are noise.", "",
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
    targets = {"1 MiB": 2.0, "1 KiB sequential": 1.3, "1 KiB sequential, adapter.send": None,
               "httpx, 64 in flight": 1.5}
    groups: dict[str, list[str]] = {}
    for group, name, _, _ in contestants:
        groups.setdefault(group, []).append(name)
    for group, (own, theirs) in groups.items():
        base_rates, our_rates = rates[(group, own)], rates[(group, theirs)]
        ratios = [o / b for o, b in zip(our_rates, base_rates)]
        unit = "MiB/s" if group == "1 MiB" else "req/s"
        med = statistics.median(ratios)
        target = targets[group]
        verdict = "(no target: the transport alone)" if target is None else (
            f"{target}x: met" if med >= target else f"{target}x: **not met**")
        lines.append(f"| {group} | `{own}` | {statistics.median(base_rates):,.0f} {unit} | 1.00 | |")
        lines.append(f"| {group} | `{theirs}` | {statistics.median(our_rates):,.0f} {unit} | **{med:.2f}x** "
                     f"({min(ratios):.2f}-{max(ratios):.2f}) | {verdict} |")
    text = "\n".join(lines) + "\n"
    print(text)
    if args.output:
        replace_section(args.output, SECTION, text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
