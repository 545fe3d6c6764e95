"""Streaming latency (issue 27): how long after the bytes that complete an item are written does
the caller hold it? drip_server.py drips records (each in two writes, the second after a short
pause and carrying the time it was written); each contestant (latency_clients.py for Python,
latency.c for C) reads them with its library's streaming API and records now - stamp per item.
Rounds are interleaved; p50 and p99 per contestant are the figures, with the anchors (requests,
httpx, httpx-sse, aiohttp, pycurl, ijson; raw libcurl from C) measured in the same run. Writes
"## Streaming latency (issue 27)" into BENCHMARKS.md.

    python3 bench/latency.py [--records N] [--rounds R] [--gap-ms G] [--only a,b] [--output FILE] [--swift]

--swift builds the Swift contestants first (bench/swift, a package of its own: a release build of
the library, minutes); without it they run if already built.

Client and server are pinned to different cores when taskset exists (BENCH_CLIENT_CPU=1,
BENCH_SERVER_CPU=0)."""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
sys.path.insert(0, str(HERE))

from report_common import cpu_model, replace_section  # noqa: E402

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
SWIFT_BENCH = HERE / "swift" / ".build" / "release" / "LatencyBench"


def curl_version() -> str:
    try:
        return subprocess.run(["curl-config", "--version"], capture_output=True, text=True).stdout.strip()
    except OSError:
        return "libcurl ?"


def pinned(cpu: str) -> list[str]:
    return ["taskset", "-c", cpu] if shutil.which("taskset") and (os.cpu_count() or 1) > 1 else []


def build_c(tmp: Path) -> Path | None:
    lib = ROOT / "build"
    if not (lib / "libhttpcontent.so.0").exists() or not shutil.which("cc"):
        return None
    exe = tmp / "latency"
    subprocess.run(["cc", "-O2", "-o", str(exe), str(HERE / "latency.c"), f"-I{ROOT / 'include'}",
                    f"-L{lib}", f"-Wl,-rpath,{lib}", "-lhttpcontent", "-lcurl"], check=True)
    return exe


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--records", type=int, default=200)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--gap-ms", type=float, default=5.0)
    ap.add_argument("--only", default="")
    ap.add_argument("--output", default=str(ROOT / "BENCHMARKS.md"))
    ap.add_argument("--swift", action="store_true")
    args = ap.parse_args()
    env = dict(os.environ, PYTHONPATH=str(ROOT / "bindings" / "python"))
    server = subprocess.Popen(pinned(os.environ.get("BENCH_SERVER_CPU", "0")) + [sys.executable, str(HERE / "drip_server.py")],
                              stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    try:
        assert server.stdout is not None
        base = f"http://127.0.0.1:{server.stdout.readline().split()[1]}"
        client = pinned(os.environ.get("BENCH_CLIENT_CPU", "1"))
        names = json.loads(subprocess.run([sys.executable, str(HERE / "latency_clients.py"), "list", base, "1"],
                                          env=env, capture_output=True, text=True, check=True).stdout)
        with tempfile.TemporaryDirectory() as tmp:
            exe = build_c(Path(tmp))
            if exe is not None:
                names += ["c-hc-items", "c-raw-lines"]
            if args.swift:
                subprocess.run(["swift", "build", "-c", "release", "--package-path", str(HERE / "swift")], check=True)
            if SWIFT_BENCH.exists():
                names += [n for n in SETTINGS if n.startswith("swift-")]
            if args.only:
                names = [n for n in names if n in args.only.split(",")]
            query = f"&gap_ms={args.gap_ms}&split_ms=2"
            samples: dict[str, list[list[int]]] = {n: [] for n in names}
            for r in range(args.rounds):
                for name in names:   # interleaved: every contestant once per round
                    if name.startswith("c-"):
                        cmd = client + [str(exe), name[2:], base, str(args.records), query]
                    elif name.startswith("swift-"):
                        cmd = client + [str(SWIFT_BENCH), name, base, str(args.records), query]
                    else:
                        cmd = client + [sys.executable, str(HERE / "latency_clients.py"), name,
                                        base, str(args.records)]
                    done = subprocess.run(cmd, env=dict(env, BENCH_QUERY=query), capture_output=True,
                                          text=True, timeout=300)
                    if done.returncode != 0:
                        print(f"{name}: failed: {done.stderr.strip()[-300:]}", file=sys.stderr)
                        continue
                    samples[name].append(json.loads(done.stdout))
                    print(f"round {r + 1} {name}: p50 {statistics.median(samples[name][-1]) / 1e3:.0f} us",
                          file=sys.stderr)
    finally:
        if server.stdin:
            server.stdin.close()
        server.wait(10)
    rows = []
    for name, runs in samples.items():
        if not runs:
            continue
        every = sorted(x for run in runs for x in run)
        p50 = every[len(every) // 2] / 1e3
        p99 = every[min(len(every) - 1, int(len(every) * 0.99))] / 1e3
        rows.append((name, p50, p99, len(every)))
    text = report(rows, args)
    replace_section(args.output, "## Streaming latency (issue 27)", text)
    print(text)
    return 0


def report(rows: list[tuple[str, float, float, int]], args: argparse.Namespace) -> str:
    lines = [
        "## Streaming latency (issue 27)",
        "",
        "Time from the server's write of the bytes that complete an item to the caller holding the",
        f"item, per API: {args.records} records per run, each sent in two writes 2 ms apart (the",
        f"second carries CLOCK_MONOTONIC at its write), {args.gap_ms:g} ms between records, chunked",
        f"encoding, TCP_NODELAY, {args.rounds} interleaved rounds, client and server on different",
        "cores; every sample of every round pooled. Measured by `python3 bench/latency.py`",
        f"({cpu_model()}, {curl_version()}). A batch made for throughput must not hold an",
        "item back: a figure in milliseconds where others are in microseconds would be that.",
        "",
        "| contestant | p50 µs | p99 µs | items | settings |",
        "|---|---:|---:|---:|---|",
    ]
    for name, p50, p99, n in sorted(rows, key=lambda r: (not r[0].startswith(("hc-", "c-hc", "swift-")), r[0])):
        lines.append(f"| `{name}` | {p50:.0f} | {p99:.0f} | {n} | {SETTINGS.get(name, '')} |")
    return "\n".join(lines) + "\n"


if __name__ == "__main__":
    sys.exit(main())
