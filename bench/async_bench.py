"""async_bench.py — native asyncio (issue 15): httpcontent's `arequest`/`amap` on the event loop
against aiohttp, and many slow requests held at once on one thread.

    python3 bench/async_bench.py [--rounds 5] [--count 2000] [--hold 10000] [--output BENCHMARKS.md]

Part 1, request rates: COUNT GETs of a 1 KiB file from a local nginx (sendfile, keep-alive), at
16 and 64 in flight, contestants interleaved round by round in one process:
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

import argparse
import asyncio
import os
import resource
import shutil
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
sys.path.insert(0, os.path.join(ROOT, "bindings", "python"))
sys.path.insert(0, HERE)
# The peers live in the bench's cache folder (as the other benchmarks' do), installed on first use.
PYDEPS = os.environ.get("BENCH_PYDEPS", os.path.expanduser("~/.cache/httpcontent-bench/pydeps"))
sys.path.append(PYDEPS)

import httpcontent as hc  # noqa: E402
from report_common import replace_section  # noqa: E402

SECTION = "## Native asyncio (issue 15)"


# As the other benchmarks: the server on one CPU, the client (this process) on another.
SERVER_CPU = os.environ.get("BENCH_SERVER_CPU", "0")
CLIENT_CPU = os.environ.get("BENCH_CLIENT_CPU", "1")


def pinned(cpu: str) -> list[str]:
    """A taskset prefix for a server process, when taskset and more than one CPU exist."""
    if (os.cpu_count() or 1) < 2 or not shutil.which("taskset"):
        return []
    return ["taskset", "-c", cpu]


def pin_self() -> str:
    if (os.cpu_count() or 1) < 2:
        return "not pinned (one CPU)"
    os.sched_setaffinity(0, {int(CLIENT_CPU)})
    return f"server on CPU {SERVER_CPU}, client on CPU {CLIENT_CPU}"


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def start_nginx(root: str) -> tuple[subprocess.Popen, str]:
    port = free_port()
    with open(os.path.join(root, "small.bin"), "wb") as f:
        f.write(os.urandom(1024))
    conf = os.path.join(root, "nginx.conf")
    with open(conf, "w") as f:
        f.write(f"""worker_processes 1; daemon off; pid {root}/nginx.pid; error_log {root}/error.log;
events {{ worker_connections 4096; }}
http {{ access_log off; sendfile on; keepalive_requests 1000000; keepalive_timeout 60;
  client_body_temp_path {root}; proxy_temp_path {root}; fastcgi_temp_path {root};
  uwsgi_temp_path {root}; scgi_temp_path {root};
  server {{ listen 127.0.0.1:{port}; root {root}; }} }}
""")
    nginx = shutil.which("nginx") or "/usr/sbin/nginx"
    proc = subprocess.Popen(pinned(SERVER_CPU) + [nginx, "-c", conf], stdout=subprocess.DEVNULL,
                            stderr=subprocess.DEVNULL)
    for _ in range(100):
        try:
            socket.create_connection(("127.0.0.1", port), timeout=0.1).close()
            break
        except OSError:
            time.sleep(0.05)
    return proc, f"http://127.0.0.1:{port}/small.bin"


# -- contestants ---------------------------------------------------------------------------

async def hc_arequest(client: hc.Client, url: str, count: int, n: int) -> None:
    gate = asyncio.Semaphore(n)

    async def one() -> None:
        async with gate:
            r = await client.arequest("GET", url)
            assert r.status == 200 and len(r.content) == 1024

    await asyncio.gather(*(one() for _ in range(count)))


async def hc_amap(client: hc.Client, url: str, count: int, n: int) -> None:
    rs = await client.amap([hc.Request("GET", url)] * count, concurrency=n)
    assert all(len(r.content) == 1024 for r in rs)


async def aiohttp_gather(session, url: str, count: int, n: int) -> None:
    gate = asyncio.Semaphore(n)

    async def one() -> None:
        async with gate:
            async with session.get(url) as resp:
                body = await resp.read()
                assert resp.status == 200 and len(body) == 1024

    await asyncio.gather(*(one() for _ in range(count)))


def need_aiohttp() -> None:
    try:
        import aiohttp  # noqa: F401
    except ImportError:
        print(f"aiohttp missing: pip install --target {PYDEPS} aiohttp", file=sys.stderr, flush=True)
        subprocess.run([sys.executable, "-m", "pip", "install", "-q", "--target", PYDEPS, "aiohttp"], check=True)
        import importlib
        importlib.invalidate_caches()


async def rates(url: str, rounds: int, count: int, levels: list[int]) -> dict:
    import aiohttp
    results: dict[tuple[str, int], list[float]] = {}
    with hc.Client(timeout=30) as client:
        for n in levels:
            connector = aiohttp.TCPConnector(limit=n, limit_per_host=n, keepalive_timeout=60)
            async with aiohttp.ClientSession(connector=connector) as session:
                contestants = [("hc-arequest", lambda: hc_arequest(client, url, count, n)),
                               ("hc-amap", lambda: hc_amap(client, url, count, n)),
                               ("aiohttp", lambda: aiohttp_gather(session, url, count, n))]
                for name, run in contestants:          # warm-up: connections made
                    await run()
                for _ in range(rounds):
                    for name, run in contestants:
                        start = time.perf_counter()
                        await run()
                        results.setdefault((name, n), []).append(count / (time.perf_counter() - start))
    return results


# -- holding many slow requests ------------------------------------------------------------

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


async def hold(count: int, delay: float) -> dict:
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))
    server = subprocess.Popen(pinned(SERVER_CPU) + [sys.executable, "-c", SLOW_SERVER, str(delay)],
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


# -- report --------------------------------------------------------------------------------

def report(res: dict, held: dict | None, args) -> str:
    lines = [SECTION, "",
             f"Measured by `python3 bench/async_bench.py --rounds {args.rounds} --count {args.count} "
             f"--hold {args.hold}` on {time.strftime('%Y-%m-%d')}, {os.cpu_count()} cores, load "
             "average (1/5/15 min) at the end %.2f %.2f %.2f: ratios from the same " % os.getloadavg() +
             "run, interleaved round by round, are the figure; absolute req/s are noise. "
             f"Pinning: {getattr(args, 'pinning', 'none')}.", "",
             "Contestants (1 KiB file from a local nginx, keep-alive; N in flight):", "",
             "| contestant | settings |", "|---|---|",
             "| `hc-arequest` | one `hc.Client`; COUNT tasks of `await client.arequest(\"GET\", url)` under an `asyncio.Semaphore(N)`; no thread (the loop watches libcurl's sockets) |",
             "| `hc-amap` | `await client.amap([hc.Request(\"GET\", url)] * COUNT, concurrency=N)` |",
             "| `aiohttp` (anchor) | one `ClientSession(connector=TCPConnector(limit=N, limit_per_host=N, keepalive_timeout=60))`; COUNT tasks under `asyncio.Semaphore(N)`, `await resp.read()` |",
             "", "| N | contestant | median req/s | ratio to aiohttp, median (min-max of rounds) |",
             "|---|---|---|---|"]
    for n in args.levels:
        anchor = res[("aiohttp", n)]
        for name in ("hc-arequest", "hc-amap", "aiohttp"):
            vals = res[(name, n)]
            ratios = [a / b for a, b in zip(vals, anchor)]
            cell = "1.00" if name == "aiohttp" else f"**{statistics.median(ratios):.2f}x** ({min(ratios):.2f}-{max(ratios):.2f})"
            lines.append(f"| {n} | `{name}` | {statistics.median(vals):,.0f} | {cell} |")
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
    return "\n".join(lines) + "\n"


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--count", type=int, default=2000)
    ap.add_argument("--levels", type=int, nargs="+", default=[16, 64])
    ap.add_argument("--hold", type=int, default=10000)
    ap.add_argument("--hold-delay", type=float, default=2.0)
    ap.add_argument("--output", default=os.path.join(ROOT, "BENCHMARKS.md"))
    args = ap.parse_args()
    root = tempfile.mkdtemp(prefix="hc-async-bench-")
    need_aiohttp()
    nginx, url = start_nginx(root)
    args.pinning = pin_self()
    try:
        res = asyncio.run(rates(url, args.rounds, args.count, args.levels))
    finally:
        nginx.terminate()
        nginx.wait()
        shutil.rmtree(root, ignore_errors=True)
    held = asyncio.run(hold(args.hold, args.hold_delay)) if args.hold else None
    text = report(res, held, args)
    replace_section(args.output, SECTION, text)
    print(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
