"""request_rates.py — the request-rate workloads of bench/requests.c, from Python (issue 6): the
httpcontent binding, and for context the Python HTTP clients that are installed, plus the curl
command-line tool in parallel mode.

    python3 request_rates.py MODE URL COUNT [CONCURRENCY [EXPECTED_BYTES]]

Concurrent modes (CONCURRENCY transfers in flight):
  hc-map            client.map([hc.Request("GET", url, handler=hc.Bytes()), ...], concurrency=N)
  httpx-async       httpx.AsyncClient (pool of N connections), asyncio.gather over COUNT tasks,
                    each holding an asyncio.Semaphore(N) while it sends
  requests-threads  requests.Session (HTTPAdapter pool of N) shared by a ThreadPoolExecutor(N)
  curl-parallel     the curl tool: `curl -Z --parallel-max N -K CONFIG` with COUNT
                    `url = ...` / `output = /dev/null` pairs in CONFIG (time and CPU of the child)

Sequential modes (one reused connection):
  hc-seq            client.get(url, handler=handler) with one hc.Bytes() handler, COUNT times
  hc-get            client.get(url): no handler named (the client's own Bytes)
  hc-floor          not an API: hc_client_fetch called through ctypes with its arguments
                    ready, the body sliced out and the response freed, and nothing else. What
                    any ctypes front of this library pays per request, whatever its own code
  pycurl            one pycurl.Curl handle reused, body written into a BytesIO, sending
                    hc's User-Agent
  urllib3           urllib3.PoolManager().request("GET", url).data
  httpx             httpx.Client().get(url).content
  requests          requests.Session().get(url).content

Paired mode:
  pair-seq          pycurl and hc-seq alternating in one process, arguments as requests.c's
                    pair modes: URL BLOCK ROUNDS [1 [EXPECTED_BYTES]] (see run_pair_seq)
  pair-floor        the same with hc-floor instead of hc-seq

Prints one line: "<mode> <count> <seconds> <req/s> cpu=<user+sys seconds>". Exits 1 if a
request fails, is not 200 or (EXPECTED_BYTES > 0) has a body of another size; exits 3 if the
mode's module (or the curl tool) is not installed.

(Not named requests.py: the script's folder comes first on sys.path, and `import requests` would
import the script itself.)
"""

from __future__ import annotations

import os
import resource
import shutil
import subprocess
import statistics
import sys
import tempfile
import time


class NotInstalled(Exception):
    pass


def need(module: str):
    try:
        return __import__(module)
    except ImportError as exc:
        raise NotInstalled(module) from exc


def check(status: int, body_len: int, expected: int) -> None:
    if status != 200:
        raise RuntimeError(f"status {status}")
    if expected > 0 and body_len != expected:
        raise RuntimeError(f"body of {body_len} bytes, expected {expected}")


# --- Concurrent ------------------------------------------------------------------------------

def run_hc_map(url: str, count: int, conc: int, expected: int) -> None:
    hc = need("httpcontent")
    client = hc.Client()
    handler = hc.Bytes()
    results = client.map([hc.Request("GET", url, handler=handler) for _ in range(count)],
                         concurrency=conc)
    for r in results:
        if isinstance(r, BaseException):
            raise r
        check(r.status, len(r.content), expected)
    client.close()


def run_httpx_async(url: str, count: int, conc: int, expected: int) -> None:
    httpx = need("httpx")
    import asyncio

    async def main() -> None:
        limits = httpx.Limits(max_connections=conc, max_keepalive_connections=conc)
        async with httpx.AsyncClient(limits=limits, timeout=60) as client:
            sem = asyncio.Semaphore(conc)

            async def one() -> None:
                async with sem:
                    r = await client.get(url)
                check(r.status_code, len(r.content), expected)

            await asyncio.gather(*(one() for _ in range(count)))

    asyncio.run(main())


def run_requests_threads(url: str, count: int, conc: int, expected: int) -> None:
    requests = need("requests")
    from concurrent.futures import ThreadPoolExecutor

    session = requests.Session()
    # The default pool keeps 10 connections per host: with more threads, connections would be
    # thrown away and reopened. A pool of N keeps one per thread.
    adapter = requests.adapters.HTTPAdapter(pool_connections=1, pool_maxsize=conc)
    session.mount("http://", adapter)

    def one(_: int) -> None:
        r = session.get(url)
        check(r.status_code, len(r.content), expected)

    with ThreadPoolExecutor(conc) as pool:
        for _ in pool.map(one, range(count)):
            pass
    session.close()


def run_curl_parallel(url: str, count: int, conc: int, expected: int) -> tuple[float, float]:
    """Returns (seconds, cpu seconds) of the curl child only."""
    curl = shutil.which("curl")
    if not curl:
        raise NotInstalled("curl")
    with tempfile.NamedTemporaryFile("w", suffix=".curlrc", delete=False) as f:
        config = f.name
        f.write(f'url = "{url}"\noutput = "/dev/null"\n' * count)
    try:
        fmt = "%{http_code} %{size_download}\\n"
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        t0 = time.perf_counter()
        proc = subprocess.run([curl, "-q", "-s", "-S", "-Z", "--parallel-max", str(conc),
                               "-w", fmt, "-K", config], capture_output=True, text=True)
        secs = time.perf_counter() - t0
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
    finally:
        os.unlink(config)
    if proc.returncode != 0:
        raise RuntimeError(f"curl exited {proc.returncode}: {proc.stderr.strip()[:300]}")
    lines = proc.stdout.split()
    if len(lines) != 2 * count:
        raise RuntimeError(f"curl reported {len(lines) // 2} transfers, expected {count}")
    for code, size in zip(lines[::2], lines[1::2]):
        check(int(code), int(size), expected)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return secs, cpu


# --- Sequential ------------------------------------------------------------------------------

def make_hc_seq(url: str, expected: int, named_handler: bool = True):
    """hc-seq; hc-get with `named_handler` false (the client's own Bytes)."""
    hc = need("httpcontent")
    client = hc.Client()
    handler = hc.Bytes() if named_handler else None

    def fetch() -> None:
        r = client.get(url, handler=handler)
        check(r.status, len(r.content), expected)
    return fetch


def make_hc_floor(url: str, expected: int):
    hc = need("httpcontent")
    import ctypes
    from httpcontent import _ffi, _lib
    client, handler = hc.Client(), hc.Bytes()
    _lib.lib()  # client_fetch and response_free are set when the library loads
    call, free = _lib.client_fetch, _lib.response_free
    args = (client._arg, b"GET", url.encode(), handler._handle().arg,
            _ffi.as_arg(ctypes.c_long, 0), -1)
    result, result_ptr = _ffi.fetch_slot()

    def fetch() -> None:
        if call(*args, result_ptr) != 0:
            raise RuntimeError("hc_client_fetch failed")
        body = result.bytes[:result.bytes_len]
        free(result.response)
        check(result.status, len(body), expected)
    fetch.keep = (client, handler)  # type: ignore[attr-defined]  # args hold their pointers only
    return fetch


def make_pycurl(url: str, expected: int):
    pycurl = need("pycurl")
    import io

    c = pycurl.Curl()
    c.setopt(pycurl.URL, url)
    c.setopt(pycurl.NOSIGNAL, 1)
    c.setopt(pycurl.ENCODING, "")
    # The User-Agent hc sends: the same request on the wire (as in requests.c's raw modes).
    c.setopt(pycurl.USERAGENT, "httpcontent/" + need("httpcontent").__version__)

    def fetch() -> None:
        buf = io.BytesIO()
        c.setopt(pycurl.WRITEDATA, buf)
        c.perform()
        check(c.getinfo(pycurl.RESPONSE_CODE), len(buf.getvalue()), expected)
    return fetch


def make_urllib3(url: str, expected: int):
    urllib3 = need("urllib3")
    pool = urllib3.PoolManager()

    def fetch() -> None:
        r = pool.request("GET", url)
        check(r.status, len(r.data), expected)
    return fetch


def make_httpx(url: str, expected: int):
    httpx = need("httpx")
    client = httpx.Client()

    def fetch() -> None:
        r = client.get(url)
        check(r.status_code, len(r.content), expected)
    return fetch


def make_requests(url: str, expected: int):
    requests = need("requests")
    session = requests.Session()

    def fetch() -> None:
        r = session.get(url)
        check(r.status_code, len(r.content), expected)
    return fetch


CONCURRENT = {"hc-map": run_hc_map, "httpx-async": run_httpx_async,
              "requests-threads": run_requests_threads}
SEQUENTIAL = {"hc-seq": make_hc_seq,
              "hc-get": lambda url, expected: make_hc_seq(url, expected, named_handler=False),
              "hc-floor": make_hc_floor, "pycurl": make_pycurl, "urllib3": make_urllib3,
              "httpx": make_httpx, "requests": make_requests}


# Paired modes: the hc mode each runs against pycurl.
PAIRS = {"pair-seq": "hc-seq", "pair-floor": "hc-floor"}


def cpu_now() -> float:
    return time.process_time()  # user + system, all threads, ns resolution (os.times: 10 ms)


def run_pair_seq(url: str, block: int, rounds: int, expected: int, hc_mode: str = "hc-seq") -> str:
    """pycurl and `hc_mode` (hc-seq) in one process, ROUNDS rounds of one block of BLOCK requests each (the
    first one alternating), as requests.c's pair-seq does for C: machine-wide swings cancel in
    each round's ratio. Prints a line per round; returns the summary line."""
    fetchers = {"raw": make_pycurl(url, expected), "hc": SEQUENTIAL[hc_mode](url, expected)}
    for fetch in fetchers.values():
        for _ in range(10):
            fetch()  # connection open, code warm
    rate: dict[str, list[float]] = {"raw": [], "hc": []}
    ratio, cpu_ratio = [], []
    for r in range(rounds):
        secs, cpu = {}, {}
        for name in (("raw", "hc") if r % 2 == 0 else ("hc", "raw")):
            fetch = fetchers[name]
            c0, t0 = cpu_now(), time.perf_counter()
            for _ in range(block):
                fetch()
            secs[name], cpu[name] = time.perf_counter() - t0, cpu_now() - c0
            rate[name].append(block / secs[name])
        ratio.append(secs["raw"] / secs["hc"])
        cpu_ratio.append(cpu["raw"] / cpu["hc"])
        print(f"round {r + 1} raw={rate['raw'][-1]:.1f} hc={rate['hc'][-1]:.1f} "
              f"ratio={ratio[-1]:.3f} cpu_ratio={cpu_ratio[-1]:.3f}")
    med = statistics.median
    return (f"pair-py-{hc_mode.removeprefix('hc-')} rounds={rounds} block={block} raw={med(rate['raw']):.1f} "
            f"hc={med(rate['hc']):.1f} ratio={med(ratio):.3f} [{min(ratio):.3f}-{max(ratio):.3f}] "
            f"cpu_ratio={med(cpu_ratio):.3f} [{min(cpu_ratio):.3f}-{max(cpu_ratio):.3f}]")


def main(argv: list[str]) -> int:
    if len(argv) < 4:
        print(__doc__, file=sys.stderr)
        return 2
    mode, url, count = argv[1], argv[2], int(argv[3])
    conc = int(argv[4]) if len(argv) > 4 else 1
    expected = int(argv[5]) if len(argv) > 5 else 0
    try:
        if mode in PAIRS:  # as requests.c: URL BLOCK ROUNDS [1 [EXPECTED_BYTES]]
            print(run_pair_seq(url, count, conc, int(argv[6]) if len(argv) > 6 else 0, PAIRS[mode]))
            return 0
        if mode == "curl-parallel":
            secs, cpu = run_curl_parallel(url, count, conc, expected)
        elif mode in CONCURRENT:
            need({"hc-map": "httpcontent", "httpx-async": "httpx",
                  "requests-threads": "requests"}[mode])  # import outside the timing
            c0, t0 = cpu_now(), time.perf_counter()
            CONCURRENT[mode](url, count, conc, expected)
            secs, cpu = time.perf_counter() - t0, cpu_now() - c0
        elif mode in SEQUENTIAL:
            fetch = SEQUENTIAL[mode](url, expected)
            fetch()  # opens the connection, outside the timing
            c0, t0 = cpu_now(), time.perf_counter()
            for _ in range(count):
                fetch()
            secs, cpu = time.perf_counter() - t0, cpu_now() - c0
        else:
            print(f"unknown mode {mode}", file=sys.stderr)
            return 2
    except NotInstalled as exc:
        print(f"{mode}: {exc} is not installed", file=sys.stderr)
        return 3
    except Exception as exc:  # noqa: BLE001 - a failed measurement
        print(f"{mode}: {type(exc).__name__}: {exc}", file=sys.stderr)
        return 1
    print(f"{mode} {count} {secs:.4f} {count / secs:.1f} cpu={cpu:.4f}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
