"""hc_bench.py — the same download as raw_curl.c, from Python: through the httpcontent binding, and
for context through the Python HTTP clients that are installed.

    python3 hc_bench.py MODE URL COUNT EXPECTED_BYTES

MODE:
  hc-discard      httpcontent, hc.Discard()   (one Client, one handler, reused)
  hc-bytes        httpcontent, hc.Bytes()     (response.content is a Python bytes object)
  hc-file         httpcontent, hc.File(BENCH_FILE)              (atomic, fsync'd: the default)
  hc-file-nofsync httpcontent, hc.File(BENCH_FILE, fsync=False) (atomic, left to writeback)
  requests-file   requests, iter_content(1 MiB) + f.write into BENCH_FILE, then f.flush() and
                  os.fsync (as durable as hc-file)
  requests-file-nofsync  the same without the fsync
  urllib3         urllib3.PoolManager().request(...).data    (whole body as bytes)
  requests        requests.Session().get(...).content        (whole body as bytes)
  pycurl-discard  pycurl, a Python WRITEFUNCTION that keeps nothing
  pycurl-bytes    pycurl, WRITEDATA into io.BytesIO, then getvalue()

COUNT downloads are timed as one measurement. Prints one line:
"MBPS <value> bytes=<total> seconds=<elapsed> cpu=<user+sys seconds>" (MB = 10^6 bytes).
Exits 1 if a download fails or does not deliver EXPECTED_BYTES; exits 3 if the mode's module is
not installed.
"""

from __future__ import annotations

import io
import sys
import time


def make_hc(mode: str, url: str):
    import httpcontent as hc

    import os
    client = hc.Client()
    if mode.startswith("hc-file"):
        handler = hc.File(os.environ["BENCH_FILE"], fsync=mode == "hc-file")

        def fetch() -> int:
            r = client.get(url, handler=handler)
            assert r.status == 200, r.status
            return r.content.bytes_written
        return fetch
    handler = hc.Discard() if mode == "hc-discard" else hc.Bytes()

    if mode == "hc-discard":
        def fetch() -> int:
            r = client.get(url, handler=handler)
            assert r.status == 200, r.status
            return r.metrics["decoded_bytes"]
    else:
        def fetch() -> int:
            r = client.get(url, handler=handler)
            assert r.status == 200, r.status
            return len(r.content)
    return fetch


def make_urllib3(url: str):
    import urllib3

    pool = urllib3.PoolManager()

    def fetch() -> int:
        r = pool.request("GET", url, preload_content=True)
        assert r.status == 200, r.status
        return len(r.data)
    return fetch


def make_requests(url: str):
    import requests

    session = requests.Session()

    def fetch() -> int:
        r = session.get(url)
        assert r.status_code == 200, r.status_code
        return len(r.content)
    return fetch


def make_requests_file(mode: str, url: str):
    import os

    import requests

    session = requests.Session()
    path = os.environ["BENCH_FILE"]

    def fetch() -> int:
        n = 0
        with session.get(url, stream=True) as r, open(path, "wb") as f:
            assert r.status_code == 200, r.status_code
            for chunk in r.iter_content(1 << 20):
                f.write(chunk)
                n += len(chunk)
            if mode == "requests-file":
                f.flush()
                os.fsync(f.fileno())
        return n
    return fetch


def make_pycurl(mode: str, url: str):
    import pycurl

    c = pycurl.Curl()
    c.setopt(pycurl.URL, url)
    c.setopt(pycurl.NOSIGNAL, 1)
    c.setopt(pycurl.ENCODING, "")

    if mode == "pycurl-discard":
        seen = [0]

        def sink(chunk: bytes) -> None:
            seen[0] += len(chunk)

        c.setopt(pycurl.WRITEFUNCTION, sink)

        def fetch() -> int:
            seen[0] = 0
            c.perform()
            assert c.getinfo(pycurl.RESPONSE_CODE) == 200
            return seen[0]
    else:
        def fetch() -> int:
            buf = io.BytesIO()
            c.setopt(pycurl.WRITEDATA, buf)
            c.perform()
            assert c.getinfo(pycurl.RESPONSE_CODE) == 200
            return len(buf.getvalue())
    return fetch


def main() -> int:
    if len(sys.argv) != 5:
        print(__doc__, file=sys.stderr)
        return 2
    mode, url, count, expected = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4])
    try:
        if mode in ("hc-discard", "hc-bytes", "hc-file", "hc-file-nofsync"):
            fetch = make_hc(mode, url)
        elif mode == "urllib3":
            fetch = make_urllib3(url)
        elif mode == "requests":
            fetch = make_requests(url)
        elif mode in ("requests-file", "requests-file-nofsync"):
            fetch = make_requests_file(mode, url)
        elif mode in ("pycurl-discard", "pycurl-bytes"):
            fetch = make_pycurl(mode, url)
        else:
            print(f"unknown mode {mode}", file=sys.stderr)
            return 2
    except ImportError as exc:
        print(f"{mode}: not installed ({exc})", file=sys.stderr)
        return 3

    total = 0
    cpu_start = time.process_time()
    start = time.perf_counter()
    for i in range(count):
        got = fetch()
        if got != expected:
            print(f"download {i}: got {got} bytes, expected {expected}", file=sys.stderr)
            return 1
        total += got
    elapsed = time.perf_counter() - start
    cpu = time.process_time() - cpu_start
    print(f"MBPS {total / elapsed / 1e6:.1f} bytes={total} seconds={elapsed:.3f} cpu={cpu:.3f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
