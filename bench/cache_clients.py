"""Contestant programs of the HTTP cache benchmark (bench/suites/cache.py): each sends COUNT GETs
of URL and prints `MBPS <v> bytes=<n> seconds=<s> cpu=<c>` for the timed passes.

    python3 cache_clients.py hc-hit DB URL COUNT      hc.Client(cache=hc.Cache(DB)), hc.JSON(): hits from SQLite
    python3 cache_clients.py hc-origin - URL COUNT    hc.Client() (no cache), hc.JSON(): a round trip each
    python3 cache_clients.py hishel-hit DB URL COUNT  httpx + hishel 2 (SqliteStorage, RFC mode), r.json()
    python3 cache_clients.py loads-floor DB URL COUNT marshal.loads of the product a hit reads, no HTTP:
                                                      the Python objects alone, the floor of any hit
"""

import sys
import time


def hc_client(db):
    import httpcontent as hc
    client = hc.Client(cache=hc.Cache(db)) if db != "-" else hc.Client()
    want = "hit" if db != "-" else None

    def one(url, check=True):
        r = client.get(url, handler=hc.JSON())
        if check and (r.cache_status != want or not isinstance(r.content, dict)):
            raise SystemExit(f"unexpected: {r.cache_status} {type(r.content)} {dict(r.headers.items())}")
        return len(r.headers.get("content-length", "0")) and int(r.headers["content-length"])
    return one


def hishel_client(db):
    try:
        import hishel
        import httpx
        from hishel.httpx import CacheTransport
    except ImportError:
        sys.exit(3)  # not installed: skipped
    storage = hishel.SqliteStorage(database_path=db)
    options = hishel.CacheOptions(shared=False, supported_methods=["GET", "HEAD"], allow_stale=False)
    client = httpx.Client(transport=CacheTransport(next_transport=httpx.HTTPTransport(), storage=storage, rfc=options))

    def one(url, check=True):
        r = client.get(url)
        if check and (not isinstance(r.json(), dict) or not (r.extensions.get("caching") or {}).get("from_cache")):
            raise SystemExit("unexpected response")
        return len(r.content)
    return one


def loads_floor(db):
    """The product hc.JSON() keeps for URL (made by one request into a cache of its own), loaded
    as the binding loads it (marshal.loads with the collector paused): no HTTP, no store."""
    import gc
    import marshal
    import sqlite3
    fetch = hc_client(db)
    product, size = None, 0

    def one(url, check=True):
        nonlocal product, size
        if product is None:
            size = fetch(url, check=False)
            product = sqlite3.connect(db).execute("SELECT data FROM products").fetchone()[0]
        gc.disable()
        try:
            value = marshal.loads(product)
        finally:
            gc.enable()
        # As in any caller, the next container made after the collector resumes sets off the
        # young-generation collection that scans the new document (a hit pays it too).
        [value]
        if check and not isinstance(value, dict):
            raise SystemExit("unexpected product")
        return size
    return one


def main():
    mode, db, url, count = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4])
    makers = {"hishel-hit": hishel_client, "loads-floor": loads_floor, "hc-hit": hc_client}
    one = makers[mode](db) if mode in makers else hc_client("-")
    size = one(url, check=False)  # a miss that stores (or a first round trip), untimed
    one(url)
    total = 0
    cpu0, t0 = time.process_time(), time.perf_counter()
    for _ in range(count):
        total += one(url)
    seconds, cpu = time.perf_counter() - t0, time.process_time() - cpu0
    assert total == size * count
    print(f"MBPS {total / seconds / 1e6:.3f} bytes={total} seconds={seconds:.6f} cpu={cpu:.6f} "
          f"req_s={count / seconds:.1f}")


if __name__ == "__main__":
    main()
