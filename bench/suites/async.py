"""Native asyncio (issue 15): httpcontent's `arequest`/`amap` on the event loop
against aiohttp, and many slow requests held at once on one thread.

    bash bench/async.sh [--rounds 5] [--count 2000] [--levels 16 64] [--hold 10000] [--no-write]

Part 1, request rates: COUNT GETs of a 1 KiB file from a local nginx (sendfile, keep-alive), at
16 and 64 in flight, contestants (one per level, `NAME@N`) interleaved round by round in one
process pinned to the client CPU:
  hc-arequest   one hc.Client; COUNT tasks of `await client.arequest("GET", url)`, each holding
                an asyncio.Semaphore(N) while it runs (N transfers in flight)
  hc-amap       `await client.amap([hc.Request("GET", url)] * COUNT, concurrency=N)`
  aiohttp       the anchor, as its users tune it: one ClientSession with
                TCPConnector(limit=N, keepalive), COUNT tasks under an asyncio.Semaphore(N),
                `await resp.read()`
Each round gives req/s per contestant; the report gives medians and the per-round ratios
(median and min-max) against aiohttp. Target: >= 2x aiohttp at 16 and 64.

Part 2, holding: HOLD requests at once to a local asyncio server (another process) that answers
each after 2 s; the client's peak RSS growth, its thread count while they wait, and the time they
take together. Target: one thread, memory flat (per request, not growing with time).

Writes the section "## Native asyncio (issue 15)" of BENCHMARKS.md.
"""

from __future__ import annotations

import asyncio
import os
import resource
import signal
import subprocess
import sys
import threading
import time
from typing import Any

from harness import Contestant, Results, Session, library, log, parse, stats

SECTION = "## Native asyncio (issue 15)"


async def hc_arequest(client: Any, url: str, count: int, n: int) -> None:
    gate = asyncio.Semaphore(n)

    async def one() -> None:
        async with gate:
            r = await client.arequest("GET", url)
            assert r.status == 200 and len(r.content) == 1024

    await asyncio.gather(*(one() for _ in range(count)))


async def hc_amap(client: Any, requests: list, n: int) -> None:
    rs = await client.amap(requests, concurrency=n)
    assert all(len(r.content) == 1024 for r in rs)


async def aiohttp_gather(session, url: str, count: int, n: int) -> None:
    gate = asyncio.Semaphore(n)

    async def one() -> None:
        async with gate:
            async with session.get(url) as resp:
                body = await resp.read()
                assert resp.status == 200 and len(body) == 1024

    await asyncio.gather(*(one() for _ in range(count)))


SLOW_SERVER = r"""
import asyncio, sys
DELAY = float(sys.argv[1])
async def serve(reader, writer):
    try:
        while True:
            head = await reader.readuntil(b"\r\n\r\n")
            await asyncio.sleep(DELAY)
            writer.write(b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\nContent-Type: text/plain\r\n\r\nok")
            await writer.drain()
    except (asyncio.IncompleteReadError, ConnectionError):
        pass
    finally:
        writer.close()
async def main():
    import resource
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))
    server = await asyncio.start_server(serve, "127.0.0.1", 0, backlog=65535)
    print(server.sockets[0].getsockname()[1], flush=True)
    async with server:
        await asyncio.sleep(600)
asyncio.run(main())
"""


def rss_kib() -> int:
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    return 0


async def hold(hc: Any, count: int, delay: float, pin: tuple[str, ...]) -> dict:
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))
    server = subprocess.Popen([*pin, sys.executable, "-c", SLOW_SERVER, str(delay)],
                              stdout=subprocess.PIPE, text=True)
    try:
        port = int(server.stdout.readline())
        url = f"http://127.0.0.1:{port}/slow"
        peak = [0]
        threads = [0]
        with hc.Client(timeout=120, connect_timeout=60) as client:
            await client.arequest("GET", url)               # warm: library loaded, driver made
            base = rss_kib()

            async def sample() -> None:
                while True:
                    peak[0] = max(peak[0], rss_kib())
                    threads[0] = max(threads[0], threading.active_count())
                    await asyncio.sleep(0.05)

            sampler = asyncio.ensure_future(sample())
            start = time.perf_counter()
            rs = await asyncio.gather(*(client.arequest("GET", url) for _ in range(count)),
                                      return_exceptions=True)
            elapsed = time.perf_counter() - start
            sampler.cancel()
            ok = sum(1 for r in rs if not isinstance(r, BaseException) and r.content == b"ok")
            errors = sorted({type(r).__name__ + ": " + str(r)[:80] for r in rs if isinstance(r, BaseException)})[:3]
            # A second wave: memory after it shows whether anything grows with use.
            await asyncio.gather(*(client.arequest("GET", url) for _ in range(count)), return_exceptions=True)
            after = rss_kib()
        return {"count": count, "ok": ok, "errors": errors, "seconds": elapsed, "delay": delay,
                "base_kib": base, "peak_kib": peak[0], "after_second_wave_kib": after,
                "threads": threads[0]}
    finally:
        server.send_signal(signal.SIGTERM)
        server.wait()


def report(s: Session, res: Results, held: dict | None, count: int, levels: list[int]) -> list[str]:
    lines = [SECTION, "",
             f"{s.measured_by()}; {s.pinning.sentence}; {s.rounds_note(res)}: ratios from the same "
             "run, interleaved round by round, are the figure; absolute req/s are noise.", "",
             "Contestants (1 KiB file from a local nginx, keep-alive; N in flight):", "",
             "| contestant | settings |", "|---|---|",
             "| `hc-arequest` | one `hc.Client`; COUNT tasks of `await client.arequest(\"GET\", url)` under an `asyncio.Semaphore(N)`; no thread (the loop watches libcurl's sockets) |",
             "| `hc-amap` | `await client.amap([hc.Request(\"GET\", url)] * COUNT, concurrency=N)` |",
             "| `aiohttp` (anchor) | one `ClientSession(connector=TCPConnector(limit=N, limit_per_host=N, keepalive_timeout=60))`; COUNT tasks under `asyncio.Semaphore(N)`, `await resp.read()` |",
             "", "| N | contestant | median req/s | ratio to aiohttp, median (min-max of rounds) |",
             "|---|---|---|---|"]
    secs = res.of("seconds")
    for n in levels:
        anchor = secs[f"aiohttp@{n}"]
        for name in ("hc-arequest", "hc-amap", "aiohttp"):
            vals = secs[f"{name}@{n}"]
            ratios = stats.same_round(anchor, vals)
            cell = "1.00" if name == "aiohttp" else f"**{stats.median(ratios):.2f}x** ({stats.spread(ratios).replace('–', '-')})"
            lines.append(f"| {n} | `{name}` | {count / stats.median(vals.values()):,.0f} | {cell} |")
    if held:
        per = (held["peak_kib"] - held["base_kib"]) / max(1, held["count"])
        lines += ["", f"Holding: {held['count']:,} `arequest`s at once to a local asyncio server that answers "
                  f"each after {held['delay']:.0f} s: {held['ok']:,} answered in {held['seconds']:.1f} s, on "
                  f"{held['threads']} Python thread(s) (the loop's; no executor); RSS {held['base_kib']/1024:.0f} MiB "
                  f"before, peak {held['peak_kib']/1024:.0f} MiB (~{per:.0f} KiB per request in flight: libcurl's "
                  f"easy handle and 16 KiB buffer, the future and prepared request), "
                  f"{held['after_second_wave_kib']/1024:.0f} MiB after a second wave of as many "
                  f"({(held['after_second_wave_kib'] - held['peak_kib']) / 1024:+.0f} MiB against the first wave's "
                  "peak: what the allocator kept, not growth per request, when it stays well under one wave's "
                  f"{(held['peak_kib'] - held['base_kib']) / 1024:.0f} MiB)."]
        if held["errors"]:
            lines.append(f"Errors seen: {'; '.join(held['errors'])}.")
    return lines


def need_aiohttp(pydeps: str) -> None:
    """aiohttp from the bench's cache folder, installed there on first use."""
    sys.path.append(pydeps)
    try:
        import aiohttp  # noqa: F401
    except ImportError:
        log(f"aiohttp missing: pip install --target {pydeps} aiohttp")
        library.pip_into_cache(pydeps, "aiohttp")
        import importlib
        importlib.invalidate_caches()


def contestants(hc: Any, client: Any, loop: asyncio.AbstractEventLoop, url: str, count: int,
                levels: list[int]) -> list[Contestant]:
    """hc-arequest, hc-amap and aiohttp at each level; aiohttp's sessions live on `loop`."""
    import aiohttp

    async def session(n: int) -> Any:
        return aiohttp.ClientSession(connector=aiohttp.TCPConnector(limit=n, limit_per_host=n, keepalive_timeout=60))
    out = []
    for n in levels:
        sess = loop.run_until_complete(session(n))
        runs = {"hc-arequest": lambda n=n: hc_arequest(client, url, count, n),
                "hc-amap": lambda n=n: hc_amap(client, [hc.Request("GET", url)] * count, n),
                "aiohttp": lambda n=n, sess=sess: aiohttp_gather(sess, url, count, n)}
        for name, run in runs.items():
            out.append(Contestant(f"{name}@{n}", name, tags={"level": n, "session": sess},
                                  call=lambda run=run: loop.run_until_complete(run())))
    return out


def main(argv: list[str]) -> int:
    settings = parse(argv, rounds=5, options=[
        (("--requests",), {"dest": "requests", "type": int, "default": 2000, "help": "GETs per measurement"}),
        (("--levels",), {"type": int, "nargs": "+", "default": [16, 64]}),
        (("--hold",), {"type": int, "default": 10000}),
        (("--hold-delay",), {"type": float, "default": 2.0})])
    x = settings.extra
    with Session("async", "bash bench/async.sh", settings) as s:
        www = s.path("www")
        os.makedirs(www)
        with open(os.path.join(www, "small.bin"), "wb") as f:
            f.write(os.urandom(1024))
        os.chmod(os.path.join(www, "small.bin"), 0o644)
        ngx = s.nginx(connections=4096, keepalive_timeout="60")
        s.snapshot()
        sys.path.insert(0, s.snap["py"])
        import httpcontent as hc
        need_aiohttp(settings.pydeps)
        s.pinning.pin_self()
        loop = asyncio.new_event_loop()
        s.callback(loop.close)
        client = s.enter_context(hc.Client(timeout=30))
        cs = contestants(hc, client, loop, f"http://127.0.0.1:{ngx['port']}/small.bin", x.requests, x.levels)
        for c in cs:
            if c.name.startswith("aiohttp"):
                s.callback(lambda c=c: loop.run_until_complete(c.tags["session"].close()))
        res = s.run(cs)
        held = asyncio.run(hold(hc, x.hold, x.hold_delay, s.pinning.server)) if x.hold else None
        return s.publish(report(s, res, held, x.requests, x.levels))
