"""Streaming latency (issue 27): how long after the bytes that complete an item are written does
the caller hold it? bench/drip_server.py drips records (each in two writes, the second after a
short pause and carrying the time it was written); each contestant (latency_clients.py for
Python, latency.c for C, bench/swift's LatencyBench for Swift) reads them with its library's
streaming API and prints now - stamp per item. Rounds are interleaved; p50 and p99 over every
sample of every round are the figures, with the anchors (requests, httpx, httpx-sse, aiohttp,
pycurl, ijson; raw libcurl from C) measured in the same run.

    bash bench/latency.sh [--records N] [--rounds R] [--gap-ms G] [--only a,b] [--swift] [--no-write]

--swift builds the Swift contestants first (bench/swift, a package of its own: a release build of
the library, minutes); without it they run if already built.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys

from harness import Contestant, Session, log, parse, servers, writer

SECTION = "## Streaming latency (issue 27)"
SETTINGS = {
    "hc-iter_json": "client.iter_json(url, 'items.item') (stepped on the caller's thread)",
    "hc-iter_json_lines": "client.iter_json_lines(url) (worker thread, bounded queue)",
    "hc-iter_lines": "client.iter_lines(url)",
    "hc-iter_xml": "client.iter_xml(url, 'feed/e') (stepped)",
    "hc-iter_events": "client.iter_events(url)",
    "hc-iter_bytes": "client.iter_bytes(url) (chunks as they arrive), lines split in Python",
    "hc-JSONItems": "client.get(url, handler=hc.JSONItems('items.item', on_item))",
    "hc-JSONLines": "client.get(url, handler=hc.JSONLines(on_record))",
    "hc-XMLElements": "client.get(url, handler=hc.XMLElements('feed/e', on_element))",
    "hc-aiter_json": "async for in client.aiter_json(url, 'items.item') (asyncio, no thread)",
    "hc-aiter_events": "async for in client.aiter_events(url)",
    "hc-aiter_json_lines": "async for in client.aiter_json_lines(url)",
    "hc-aiter_lines": "async for in client.aiter_lines(url)",
    "hc-aiter_xml": "async for in client.aiter_xml(url, 'feed/e')",
    "requests-ndjson": "requests stream=True, iter_lines(chunk_size=None) + json.loads (chunk_size=None: what arrives, as it arrives)",
    "requests-bytes": "requests stream=True, iter_content(chunk_size=None), lines split in Python",
    "requests-ijson": "requests iter_content(chunk_size=None) pushed into ijson.items_coro('items.item', use_float=True)",
    "httpx-lines": "httpx.stream(), iter_lines()",
    "httpx-sse": "httpx-sse connect_sse(...).iter_sse()",
    "aiohttp-ndjson": "aiohttp ClientSession, async for line in response.content + json.loads",
    "pycurl-ndjson": "pycurl WRITEFUNCTION splitting lines + json.loads",
    "c-hc-items": "C: hc_handler_json_items_new(['items.item']), stamp read with hc_json_get + hc_json_int64",
    "c-raw-lines": "C: libcurl easy, write callback splitting NDJSON lines, stamp parsed with strtoll (the floor)",
    "swift-items": "Swift: client.get(url, handler: JSONItems(prefixes: [\"items.item\"]) { ... })",
    "swift-lines-async": "Swift: for try await line in client.lines(.get(url))",
    "swift-json-lines-async": "Swift: for try await record in client.jsonLines(.get(url))",
    "swift-json-items-async": "Swift: for try await item in client.jsonItems(for: .get(url), prefix: \"items.item\")",
}


def samples(line: str) -> dict:
    """A contestant's output: the JSON array of its latencies in ns."""
    return {"samples": json.loads(line)}


def contestants(s: Session, base: str, records: int, query: str, swift: bool) -> list[Contestant]:
    here, py = s.settings.here, s.settings.python
    clients = os.path.join(here, "latency_clients.py")
    names = json.loads(subprocess.run([py, clients, "list", base, "1"], capture_output=True, text=True, check=True,
                                      env={**os.environ, "PYTHONPATH": s.pythonpath}).stdout)
    out = [Contestant(n, SETTINGS.get(n, ""), command=[py, clients, n, base, str(records)]) for n in names]
    exe = s.compile("latency.c", "-lcurl")
    out += [Contestant(n, SETTINGS[n], command=[exe, n[2:], base, str(records), query]) for n in ("c-hc-items", "c-raw-lines")]
    swift_bench = os.path.join(here, "swift", ".build", "release", "LatencyBench")
    if swift:
        subprocess.run(["swift", "build", "-c", "release", "--package-path", os.path.join(here, "swift")], check=True)
    if os.path.exists(swift_bench):
        out += [Contestant(n, SETTINGS[n], command=[swift_bench, n, base, str(records), query])
                for n in SETTINGS if n.startswith("swift-")]
    return out


def main(argv: list[str]) -> int:
    settings = parse(argv, rounds=3, options=[
        (("--records",), {"type": int, "default": 200}), (("--gap-ms",), {"type": float, "default": 5.0}),
        (("--swift",), {"action": "store_true"})])
    x = settings.extra
    with Session("latency", "bash bench/latency.sh", settings) as s:
        s.snapshot()
        server = subprocess.Popen([*s.pinning.server, sys.executable, os.path.join(settings.here, "drip_server.py")],
                                  stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
        s.callback(servers.stop, server)
        s.callback(server.stdin.close)
        base = f"http://127.0.0.1:{server.stdout.readline().split()[1]}"
        query = f"&gap_ms={x.gap_ms}&split_ms=2"
        cs = contestants(s, base, x.records, query, x.swift)
        runner = s.runner(parse=samples, keep_going=True)
        runner.env["BENCH_QUERY"] = query
        res = s.run(cs, runner, warm_up=False)
    rows = []
    for name, per_round in res.of("samples").items():
        every = sorted(v for run in per_round.values() for v in run)
        if every:
            rows.append((name, every[len(every) // 2] / 1e3, every[min(len(every) - 1, int(len(every) * 0.99))] / 1e3, len(every)))
    rows.sort(key=lambda r: (not r[0].startswith(("hc-", "c-hc", "swift-")), r[0]))
    lines = [SECTION, "",
             "Time from the server's write of the bytes that complete an item to the caller holding the",
             f"item, per API: {x.records} records per run, each sent in two writes 2 ms apart (the",
             f"second carries CLOCK_MONOTONIC at its write), {x.gap_ms:g} ms between records, chunked",
             f"encoding, TCP_NODELAY, {s.rounds_note(res)}; {s.pinning.sentence}; every sample of every",
             f"round pooled. {s.measured_by()}. A batch made for throughput must not hold an",
             "item back: a figure in milliseconds where others are in microseconds would be that.", ""]
    lines += writer.table(["contestant", "p50 µs", "p99 µs", "items", "settings"],
                          [(f"`{n}`", f"{p50:.0f}", f"{p99:.0f}", k, SETTINGS.get(n, "")) for n, p50, p99, k in rows], "lrrrl")
    log(f"latency: {len(rows)} contestants")
    return s.publish(lines)
