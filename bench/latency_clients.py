"""The contestants of the streaming latency benchmark (bench/latency.sh, suites/latency.py), one per process:

    python3 latency_clients.py NAME BASE_URL N

reads N records dripped by drip_server.py and prints, as JSON, each record's latency in
nanoseconds: the CLOCK_MONOTONIC time the caller holds the item minus the time the server wrote
the bytes that complete it (carried in the record). Every reader takes items as it would in an
application: the iterator or callback its library offers for that format."""

from __future__ import annotations

import asyncio
import json
import os
import sys
import time
from typing import Any, Callable, Iterable

now = time.monotonic_ns


def stamp_of_text(text: str) -> int:
    return int(text.rsplit(" ", 1)[1])


def collect(items: Iterable[Any], stamp: Callable[[Any], int], n: int) -> list[int]:
    out: list[int] = []
    for item in items:
        out.append(now() - stamp(item))
        if len(out) == n:
            break
    return out


async def acollect(items: Any, stamp: Callable[[Any], int], n: int) -> list[int]:
    out: list[int] = []
    async for item in items:
        out.append(now() - stamp(item))
        if len(out) == n:
            break
    return out


def chunk_lines(chunks: Iterable[bytes], n: int) -> list[int]:
    """Raw chunks as they arrive: a record counts when the chunk holding its newline arrives."""
    out: list[int] = []
    rest = b""
    for chunk in chunks:
        t = now()
        rest += chunk
        *lines, rest = rest.split(b"\n")
        for line in lines:
            out.append(t - int(line.rsplit(b" ", 1)[1]))
        if len(out) >= n:
            break
    return out[:n]


def hc_contestants(base: str, n: int) -> dict[str, Callable[[], list[int]]]:
    import httpcontent as hc
    c = hc.Client()
    q = f"?n={n}" + os.environ.get("BENCH_QUERY", "")
    xml_stamp: Callable[[Any], int] = lambda e: int(e.find("t").text)  # noqa: E731
    item_stamp: Callable[[Any], int] = lambda v: v["t"]  # noqa: E731

    def callback(handler_of: Callable[[Callable[[Any], None]], Any], url: str,
                 stamp: Callable[[Any], int]) -> list[int]:
        out: list[int] = []
        c.get(url, handler=handler_of(lambda v: out.append(now() - stamp(v))))
        return out

    def run_async(make: Callable[[], Any], stamp: Callable[[Any], int]) -> list[int]:
        return asyncio.run(acollect(make(), stamp, n))

    found: dict[str, Callable[[], list[int]]] = {
        "hc-iter_json": lambda: collect(c.iter_json(base + "/json" + q, "items.item"), item_stamp, n),
        "hc-iter_json_lines": lambda: collect(c.iter_json_lines(base + "/ndjson" + q), item_stamp, n),
        "hc-iter_lines": lambda: collect(c.iter_lines(base + "/lines" + q), stamp_of_text, n),
        "hc-iter_xml": lambda: collect(c.iter_xml(base + "/xml" + q, "feed/e"), xml_stamp, n),
        "hc-iter_events": lambda: collect(c.iter_events(base + "/sse" + q), lambda e: stamp_of_text(e.data), n),
        "hc-JSONItems": lambda: callback(lambda f: hc.JSONItems("items.item", f), base + "/json" + q, item_stamp),
        "hc-JSONLines": lambda: callback(lambda f: hc.JSONLines(f), base + "/ndjson" + q, item_stamp),
        "hc-XMLElements": lambda: callback(lambda f: hc.XMLElements("feed/e", f), base + "/xml" + q, xml_stamp),
        "hc-aiter_json": lambda: run_async(lambda: c.aiter_json(base + "/json" + q, "items.item"), item_stamp),
        "hc-aiter_events": lambda: run_async(lambda: c.aiter_events(base + "/sse" + q),
                                             lambda e: stamp_of_text(e.data)),
    }
    # The iterators added with the streaming promise, where this build has them.
    if hasattr(c, "iter_bytes"):
        found["hc-iter_bytes"] = lambda: chunk_lines(c.iter_bytes(base + "/bytes" + q), n)
    if hasattr(c, "aiter_json_lines"):
        found["hc-aiter_json_lines"] = lambda: run_async(lambda: c.aiter_json_lines(base + "/ndjson" + q), item_stamp)
    if hasattr(c, "aiter_lines"):
        found["hc-aiter_lines"] = lambda: run_async(lambda: c.aiter_lines(base + "/lines" + q), stamp_of_text)
    if hasattr(c, "aiter_xml"):
        found["hc-aiter_xml"] = lambda: run_async(lambda: c.aiter_xml(base + "/xml" + q, "feed/e"), xml_stamp)
    return found


def anchor_contestants(base: str, n: int) -> dict[str, Callable[[], list[int]]]:
    q = f"?n={n}" + os.environ.get("BENCH_QUERY", "")

    def requests_lines() -> list[int]:
        import requests
        with requests.get(base + "/ndjson" + q, stream=True) as r:
            # chunk_size=None: whatever arrives, as it arrives (the default 512 waits for 512 bytes).
            return collect((json.loads(line) for line in r.iter_lines(chunk_size=None) if line),
                           lambda v: v["t"], n)

    def requests_bytes() -> list[int]:
        import requests
        with requests.get(base + "/bytes" + q, stream=True) as r:
            return chunk_lines(r.iter_content(chunk_size=None), n)

    def requests_ijson() -> list[int]:
        import ijson
        import requests
        out: list[int] = []
        with requests.get(base + "/json" + q, stream=True) as r:
            items = ijson.sendable_list()
            coro = ijson.items_coro(items, "items.item", use_float=True)
            for chunk in r.iter_content(chunk_size=None):
                coro.send(chunk)
                for v in items:
                    out.append(now() - v["t"])
                del items[:]
        return out

    def httpx_lines() -> list[int]:
        import httpx
        with httpx.stream("GET", base + "/lines" + q) as r:
            return collect(r.iter_lines(), stamp_of_text, n)

    def httpx_sse() -> list[int]:
        import httpx
        from httpx_sse import connect_sse
        with httpx.Client() as client, connect_sse(client, "GET", base + "/sse" + q) as source:
            return collect(source.iter_sse(), lambda e: stamp_of_text(e.data), n)

    def aiohttp_lines() -> list[int]:
        async def main() -> list[int]:
            import aiohttp
            out: list[int] = []
            async with aiohttp.ClientSession() as s, s.get(base + "/ndjson" + q) as r:
                async for line in r.content:
                    out.append(now() - json.loads(line)["t"])
            return out
        return asyncio.run(main())

    def pycurl_lines() -> list[int]:
        import pycurl
        out: list[int] = []
        rest = [b""]

        def write(chunk: bytes) -> None:
            t = now()
            *lines, rest[0] = (rest[0] + chunk).split(b"\n")
            for line in lines:
                out.append(t - json.loads(line)["t"])
        curl = pycurl.Curl()
        curl.setopt(pycurl.URL, base + "/ndjson" + q)
        curl.setopt(pycurl.WRITEFUNCTION, write)
        curl.perform()
        curl.close()
        return out

    return {"requests-ndjson": requests_lines, "requests-bytes": requests_bytes,
            "requests-ijson": requests_ijson, "httpx-lines": httpx_lines, "httpx-sse": httpx_sse,
            "aiohttp-ndjson": aiohttp_lines, "pycurl-ndjson": pycurl_lines}


def main() -> int:
    name, base, n = sys.argv[1], sys.argv[2], int(sys.argv[3])
    table = anchor_contestants(base, n) if not name.startswith("hc-") else hc_contestants(base, n)
    if name == "list":
        # Anchors whose library is not installed are left out (pip install requests httpx
        # httpx-sse aiohttp pycurl ijson for all of them).
        needs = {"requests-ndjson": "requests", "requests-bytes": "requests", "requests-ijson": "ijson",
                 "httpx-lines": "httpx", "httpx-sse": "httpx_sse", "aiohttp-ndjson": "aiohttp",
                 "pycurl-ndjson": "pycurl"}
        import importlib.util
        anchors = [a for a in sorted(anchor_contestants(base, n)) if importlib.util.find_spec(needs[a])]
        print(json.dumps(sorted(hc_contestants(base, n)) + anchors))
        return 0
    latencies = table[name]()
    if len(latencies) != n:
        print(f"{name}: {len(latencies)} items, expected {n}", file=sys.stderr)
        return 1
    print(json.dumps(latencies))
    return 0


if __name__ == "__main__":
    sys.exit(main())
