"""The Python contestants of bench/json.sh (issue 4): a JSON array from a URL turned into Python
objects, whole or element by element.

    PYTHONPATH=bindings/python python3 bench/json_bench.py MODE URL COUNT EXPECTED_BYTES EXPECTED_ITEMS

Modes (COUNT downloads of URL, each one checked to give EXPECTED_ITEMS top-level elements):
    hc-json        client.get(url, handler=hc.JSON()).content (a list)
    requests       json.loads(requests.Session().get(url).content)
    urllib3        json.loads(urllib3.PoolManager().request("GET", url).data)
    hc-items       client.get(url, handler=hc.JSONItems("item", on_item)): one call per element
    hc-iter        for v in client.iter_json(url, "item")
    ijson          for v in ijson.items(requests response.raw (streamed), "item", use_float=True):
                   the anchor as its users tune it (yajl2_c backend; floats, not Decimals)
    ijson-decimal  the same with ijson's default use_float=False (Decimals), for context
    requests-orjson   orjson.loads(requests.Session().get(url).content): the whole-document anchor
    requests-msgspec  msgspec.json.decode(requests.Session().get(url).content), likewise
The element-by-element modes count dicts and drop them.

Prints one line: "MBPS <value> bytes=<total> seconds=<elapsed> cpu=<user+sys seconds of every
thread> rss=<peak RSS growth in bytes>"; the RSS growth is VmHWM (reset through
/proc/self/clear_refs once everything is imported and set up) minus VmRSS at that moment.
Exit 3: the mode's library is not installed (ijson: or its yajl2_c backend is not available).
"""

from __future__ import annotations

import json
import sys
import time


def status_bytes(field: str) -> int:
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith(field):
                return int(line.split()[1]) * 1024
    return -1


def rss_baseline() -> int:
    try:
        with open("/proc/self/clear_refs", "w") as f:
            f.write("5")
    except OSError:
        pass
    return status_bytes("VmRSS:")


def make(mode: str, url: str):
    if mode.startswith("hc-"):
        import httpcontent as hc
        client = hc.Client()
        if mode == "hc-json":
            handler = hc.JSON()

            def fetch() -> int:
                r = client.get(url, handler=handler)
                assert r.status == 200, r.status
                return len(r.content)
        elif mode == "hc-items":
            seen = [0]

            def on_item(value) -> None:
                if value.__class__ is dict:
                    seen[0] += 1
            handler = hc.JSONItems("item", on_item)

            def fetch() -> int:
                seen[0] = 0
                r = client.get(url, handler=handler)
                assert r.status == 200, r.status
                assert r.content == seen[0], (r.content, seen[0])
                return seen[0]
        elif mode == "hc-iter":
            def fetch() -> int:
                n = 0
                for value in client.iter_json(url, "item"):
                    if value.__class__ is dict:
                        n += 1
                return n
        else:
            return None
        return fetch
    if mode == "requests":
        import requests
        session = requests.Session()

        def fetch() -> int:
            r = session.get(url)
            assert r.status_code == 200, r.status_code
            return len(json.loads(r.content))
        return fetch
    if mode == "urllib3":
        import urllib3
        pool = urllib3.PoolManager()

        def fetch() -> int:
            r = pool.request("GET", url)
            assert r.status == 200, r.status
            return len(json.loads(r.data))
        return fetch
    if mode in ("ijson", "ijson-decimal"):
        import ijson
        import requests
        if ijson.backend != "yajl2_c":
            raise ImportError(f"ijson's backend is {ijson.backend}, not yajl2_c")
        session = requests.Session()
        use_float = mode == "ijson"

        def fetch() -> int:
            with session.get(url, stream=True) as r:
                assert r.status_code == 200, r.status_code
                n = 0
                for value in ijson.items(r.raw, "item", use_float=use_float):
                    if value.__class__ is dict:
                        n += 1
            return n
        return fetch
    if mode in ("requests-orjson", "requests-msgspec"):
        import requests
        if mode == "requests-orjson":
            import orjson
            loads = orjson.loads
        else:
            import msgspec
            loads = msgspec.json.decode
        session = requests.Session()

        def fetch() -> int:
            r = session.get(url)
            assert r.status_code == 200, r.status_code
            return len(loads(r.content))
        return fetch
    return None


def main() -> int:
    return run(make, __doc__)


def run(make, doc: str) -> int:
    """The measurement every Python contestant script shares: `make(mode, url)` gives the
    fetch (a callable returning the number of items it got, None for an unknown mode); COUNT
    passes timed, each checked, and the "MBPS ..." line printed. `doc` is the usage."""
    if len(sys.argv) != 6:
        print(doc, file=sys.stderr)
        return 2
    mode, url = sys.argv[1], sys.argv[2]
    count, expected, items = int(sys.argv[3]), int(sys.argv[4]), int(sys.argv[5])
    try:
        fetch = make(mode, url)
    except ImportError as exc:
        print(f"{mode}: not installed ({exc})", file=sys.stderr)
        return 3
    if fetch is None:
        print(f"unknown mode {mode}", file=sys.stderr)
        return 2

    base = rss_baseline()
    cpu_start = time.process_time()
    start = time.perf_counter()
    for i in range(count):
        got = fetch()
        if got != items:
            print(f"pass {i}: {got} items, expected {items}", file=sys.stderr)
            return 1
    elapsed = time.perf_counter() - start
    cpu = time.process_time() - cpu_start
    peak = status_bytes("VmHWM:")
    total = count * expected
    print(f"MBPS {total / elapsed / 1e6:.1f} bytes={total} seconds={elapsed:.3f} cpu={cpu:.3f} "
          f"rss={peak - base if peak >= 0 and base >= 0 else -1}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
