"""One native-asyncio contestant of the asyncio benchmark (suites/async.py), alone in its process, for profiling
(`requests_profile.py ... aio:MODE@N`: callgrind instructions per request):

    python3 async_modes.py MODE URL COUNT CONCURRENCY [EXPECTED_BYTES]

MODE: hc-arequest (COUNT `arequest`s under an asyncio.Semaphore(N)), hc-amap (one `amap` of
COUNT at concurrency N), aiohttp (one ClientSession, TCPConnector(limit=N), a semaphore of N) or
floor (hc-arequest's harness with futures settled a turn later and no transfer: what the
benchmark costs by itself, to subtract).
One warm-up request first, so connections and imports are made before the counted ones.
Prints "<mode> <count> <seconds> <req/s>"."""

from __future__ import annotations

import asyncio
import os
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(os.path.dirname(HERE), "bindings", "python"))
sys.path.append(os.environ.get("BENCH_PYDEPS", os.path.expanduser("~/.cache/httpcontent-bench/pydeps")))


async def hc_arequest(url: str, count: int, n: int, expected: int) -> float:
    import httpcontent as hc
    with hc.Client(timeout=30) as client:
        await client.arequest("GET", url)
        gate = asyncio.Semaphore(n)

        async def one() -> None:
            async with gate:
                r = await client.arequest("GET", url)
                assert r.status == 200 and len(r.content) == expected

        start = time.perf_counter()
        await asyncio.gather(*(one() for _ in range(count)))
        return time.perf_counter() - start


async def floor(url: str, count: int, n: int, expected: int) -> float:
    """hc-arequest's harness with no transfer: each "request" is a future settled, with those of
    the same loop turn, by one callback at the next turn (what the benchmark itself costs)."""
    loop = asyncio.get_running_loop()
    pending: list[asyncio.Future[bytes]] = []
    body = b"x" * expected

    def settle() -> None:
        done, pending[:] = pending[:], []
        for f in done:
            f.set_result(body)

    async def request() -> bytes:
        f = loop.create_future()
        if not pending:
            loop.call_soon(settle)
        pending.append(f)
        return await f

    gate = asyncio.Semaphore(n)

    async def one() -> None:
        async with gate:
            r = await request()
            assert len(r) == expected

    await one()
    start = time.perf_counter()
    await asyncio.gather(*(one() for _ in range(count)))
    return time.perf_counter() - start


async def hc_amap(url: str, count: int, n: int, expected: int) -> float:
    import httpcontent as hc
    with hc.Client(timeout=30) as client:
        await client.amap([hc.Request("GET", url)], concurrency=n)
        start = time.perf_counter()
        rs = await client.amap([hc.Request("GET", url)] * count, concurrency=n)
        elapsed = time.perf_counter() - start
        assert all(r.status == 200 and len(r.content) == expected for r in rs)
        return elapsed


async def aiohttp_gather(url: str, count: int, n: int, expected: int) -> float:
    import aiohttp
    connector = aiohttp.TCPConnector(limit=n, limit_per_host=n, keepalive_timeout=60)
    async with aiohttp.ClientSession(connector=connector) as session:
        gate = asyncio.Semaphore(n)

        async def one() -> None:
            async with gate:
                async with session.get(url) as resp:
                    body = await resp.read()
                    assert resp.status == 200 and len(body) == expected

        await one()
        start = time.perf_counter()
        await asyncio.gather(*(one() for _ in range(count)))
        return time.perf_counter() - start


MODES = {"hc-arequest": hc_arequest, "hc-amap": hc_amap, "aiohttp": aiohttp_gather, "floor": floor}


def main(argv: list[str]) -> int:
    mode, url, count, conc = argv[1], argv[2], int(argv[3]), int(argv[4])
    expected = int(argv[5]) if len(argv) > 5 else 1024
    seconds = asyncio.run(MODES[mode](url, count, conc, expected))
    print(f"{mode} {count} {seconds:.3f} {count / seconds:.0f}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
