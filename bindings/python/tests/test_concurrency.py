"""Many requests at once from Python: client.map over libcurl multi, asyncio, cancellation."""

import asyncio
import gc
import os
import threading
import time

import pytest

import httpcontent as hc


def live_handles():
    gc.collect()
    return hc.live_handles()


def test_500_mixed_requests_return_in_order(client, base_url, tmp_path):
    before = live_handles()
    requests, expected = [], []
    text, data = hc.Text(), hc.Bytes()
    for i in range(500):
        kind = i % 5
        if kind == 0:
            requests.append(hc.Request("GET", f"{base_url}/bytes/{100 + i}", handler=data))
        elif kind == 1:
            requests.append(hc.Request("GET", f"{base_url}/text?text=job{i}", handler=text))
        elif kind == 2:
            requests.append(hc.Request("GET", f"{base_url}/status/418"))
        elif kind == 3:
            requests.append(hc.Request("GET", f"{base_url}/stall?bytes=5", timeout=0.3))
        else:
            requests.append(hc.Request("GET", f"{base_url}/bytes/{1000 + i}",
                                       handler=hc.File(tmp_path / f"f{i}.bin")))
        expected.append(kind)
    results = client.map(requests, concurrency=32)
    assert len(results) == 500
    for i, (kind, r) in enumerate(zip(expected, results)):
        if kind == 0:
            assert r.content == bytes(j % 251 for j in range(100 + i))
        elif kind == 1:
            assert r.content == f"job{i}"
        elif kind == 2:
            assert isinstance(r, hc.UnacceptableStatus) and r.status == 418
        elif kind == 3:
            assert isinstance(r, hc.Timeout)
        else:
            assert r.content.size == 1000 + i
    assert len(os.listdir(tmp_path)) == 100  # complete downloads only, no partial files
    del results, requests, r
    # Just the two shared handlers' natives, the client's own Bytes (made by its first
    # request without a handler, for all of them) and the batch map keeps for the next map.
    assert live_handles() == before + 4
    text.close()
    data.close()


def test_a_request_that_cannot_start_is_its_own_result(client, base_url):
    results = client.map([hc.Request("GET", f"{base_url}/bytes/3"),
                          hc.Request("GET", "http://x/bad url"),
                          hc.Request("GET", f"{base_url}/bytes/4", headers={"X": "a\nb"})])
    assert results[0].content == b"\x00\x01\x02"
    assert isinstance(results[1], hc.InvalidArgument) and isinstance(results[2], hc.InvalidArgument)


def test_map_releases_the_gil(client, base_url):
    ticks = []
    stop = threading.Event()

    def tick():
        while not stop.is_set() and len(ticks) < 1000:
            ticks.append(1)
            time.sleep(0.01)

    t = threading.Thread(target=tick)
    t.start()
    client.map([hc.Request("GET", f"{base_url}/slow?bytes=5&delay=0.1") for _ in range(4)])
    stop.set()
    t.join()
    assert len(ticks) >= 10


def test_cancel_tokens_inside_a_batch(client, base_url):
    tokens = [hc.CancelToken() for _ in range(20)]
    requests = [hc.Request("GET", f"{base_url}/slow?bytes=2000&delay=0.05&chunk=10", cancel=t)
                for t in tokens]
    requests.append(hc.Request("GET", f"{base_url}/bytes/10"))
    threading.Timer(0.2, lambda: [t.cancel() for t in tokens]).start()
    start = time.monotonic()
    results = client.map(requests, concurrency=32)
    assert time.monotonic() - start < 8  # uncancelled: 10 s
    assert all(isinstance(r, hc.Cancelled) for r in results[:-1])
    assert results[-1].content == bytes(range(10))


def test_custom_handler_exception_is_that_requests_result(client, base_url):
    class Boom(hc.Handler):
        def consume(self, chunk):
            raise RuntimeError("boom")

    results = client.map([hc.Request("GET", f"{base_url}/bytes/10", handler=Boom()),
                          hc.Request("GET", f"{base_url}/bytes/2")])
    assert isinstance(results[0], RuntimeError) and results[1].content == b"\x00\x01"


def test_asyncio_forms(client, base_url):
    async def main():
        one = await client.arequest("GET", f"{base_url}/bytes/5")
        many = await client.amap([hc.Request("GET", f"{base_url}/bytes/{n}") for n in (1, 2, 3)])
        return one, many

    one, many = asyncio.run(main())
    assert len(one.content) == 5 and [len(r.content) for r in many] == [1, 2, 3]


@pytest.mark.parametrize("rounds", [5])
def test_repeated_cancel_while_running_does_not_leak(client, base_url, rounds):
    # The client's own Bytes (shared by these requests) and the batch map keeps: in `before`.
    client.map([hc.Request("GET", f"{base_url}/bytes/1")])
    before = live_handles()
    for _ in range(rounds):
        token = hc.CancelToken()
        threading.Timer(0.05, token.cancel).start()
        results = client.map([hc.Request("GET", f"{base_url}/slow?bytes=500&delay=0.02&chunk=5",
                                         cancel=token) for _ in range(10)])
        assert all(isinstance(r, hc.Cancelled) for r in results)
        token.close()
    del results
    assert live_handles() == before


_FIRST_USE_RACE = r"""
import sys, threading, time
import httpcontent as hc

base_url = sys.argv[1]
delays = iter([0.05, 0.3])  # the first thread to make the native handler finishes first


class Paced(hc.Stream):
    # Widens the window between making the native handler and recording it, which the GIL
    # may open anywhere: the second thread's callback replaces the first's meanwhile.
    def _new_native(self, sink=None):
        native = super()._new_native(sink)
        time.sleep(next(delays))
        return native


got = []
shared = Paced(got.append)
with hc.Client(timeout=10) as client:
    def use():
        client.get(f"{base_url}/bytes/300", handler=shared)
    threads = [threading.Thread(target=use) for _ in range(2)]
    for t in threads:
        t.start()
        time.sleep(0.01)
    for t in threads:
        t.join()
assert sum(map(len, got)) == 600, got
"""


def test_threads_first_using_a_shared_stream_keep_its_callback_alive(base_url):
    # Two threads using a new Stream at once each made a native handler and a callback; the
    # second callback replaced the first in the handler while the first native, still in use
    # by its request, called it: a call into freed memory (segfault).
    import subprocess
    import sys
    env = dict(os.environ, PYTHONPATH=os.path.dirname(os.path.dirname(hc.__file__)))  # the package under test
    run = subprocess.run([sys.executable, "-c", _FIRST_USE_RACE, base_url], env=env,
                         capture_output=True, text=True, timeout=60)
    assert run.returncode == 0, run.stderr[-2000:]


_CLOSED_WHILE_SENDING = r"""
import gc, sys, threading, time
import httpcontent as hc

base_url = sys.argv[1]
got, other = [], []
shared = hc.Stream(got.append)
with hc.Client(timeout=10) as client:
    def slow():
        client.get(f"{base_url}/slow?bytes=2000&delay=0.02&chunk=100", handler=shared,
                   headers={"X-Any": "1"})
    sender = threading.Thread(target=slow)
    sender.start()
    time.sleep(0.1)
    shared.close()
    client.get(f"{base_url}/bytes/10", handler=shared)  # a new native handler and callback
    gc.collect()
    others = [hc.Stream(other.append)._handle() for _ in range(20)]
    sender.join()
assert (len(b"".join(got)), len(b"".join(other))) == (2010, 0), (len(got), len(other))
"""


def test_a_handler_closed_and_remade_during_a_request_keeps_that_requests_callback(base_url):
    # The request in flight still drives the native handler it started with; its Python
    # callback was freed when the handler, closed, made a new one (the rest of the body went
    # to another handler's target, or a segfault).
    import subprocess
    import sys
    env = dict(os.environ, PYTHONPATH=os.path.dirname(os.path.dirname(hc.__file__)))  # the package under test
    run = subprocess.run([sys.executable, "-c", _CLOSED_WHILE_SENDING, base_url], env=env,
                         capture_output=True, text=True, timeout=60)
    assert run.returncode == 0, run.stderr[-2000:]


def test_a_shared_streams_exception_is_the_result_of_the_request_that_raised_it(client, base_url):
    # Built-in handlers may be shared in a batch. The exception a shared Stream's target raised
    # for one request was taken by whichever request completed next: a successful request
    # became that exception (its response lost) and the failed one a bare CallbackError.
    def target(chunk):
        if len(chunk) == 7:
            raise KeyError("seven")

    shared = hc.Stream(target)
    for _ in range(20):
        results = client.map([hc.Request("GET", f"{base_url}/bytes/5", handler=shared),
                              hc.Request("GET", f"{base_url}/bytes/7", handler=shared)] * 3)
        assert [type(r).__name__ for r in results] == ["Response", "KeyError"] * 3
        assert [r.content for r in results[::2]] == [5, 5, 5]


def test_requests_sharing_a_stream_each_get_their_own_exception(client, base_url):
    # Several requests of one batch fail in the same callback with the same code: each still
    # gets the exception raised for its own body (each has a native Stream of its own).
    def target(chunk):
        raise ValueError(len(chunk))

    shared = hc.Stream(target)
    sizes = [3, 4, 5, 6, 7, 8] * 3
    for _ in range(5):
        results = client.map([hc.Request("GET", f"{base_url}/bytes/{n}", handler=shared) for n in sizes])
        assert [r.args[0] if isinstance(r, ValueError) else r for r in results] == sizes
    # And so do threads sharing it through client.get.
    from concurrent.futures import ThreadPoolExecutor

    def fetch(n):
        try:
            client.get(f"{base_url}/slow?bytes={n}&chunk={n}&delay=0.002", handler=shared)
        except ValueError as exc:
            return exc.args[0]
    with ThreadPoolExecutor(6) as pool:
        assert list(pool.map(fetch, sizes)) == sizes
