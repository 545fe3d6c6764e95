"""`map` on the caller's thread (issue 31): its batch driven by _blocking.BlockingLoop, the
completions taken in arrays as `arequest` takes them. The loop's own promises, then map's."""

import asyncio
import os
import time

import pytest

import httpcontent as hc
from httpcontent._blocking import BlockingLoop


def test_calls_run_in_order_and_timers_when_due_not_before():
    loop = BlockingLoop()
    seen = []
    start = loop.time()
    loop.call_at(start + 0.05, seen.append, "late")
    loop.call_at(start + 0.02, seen.append, "early")
    dropped = loop.call_at(start + 0.01, seen.append, "cancelled")
    dropped.cancel()
    loop.call_soon(seen.append, "soon 1")
    loop.call_soon(seen.append, "soon 2")
    loop.run_until(lambda: "late" in seen)
    assert seen == ["soon 1", "soon 2", "early", "late"]
    assert loop.time() - start >= 0.05


def test_a_readable_descriptor_wakes_its_reader_and_a_removed_one_does_not():
    loop = BlockingLoop()
    r, w = os.pipe()
    try:
        seen = []
        loop.add_reader(r, lambda: seen.append(os.read(r, 10)))
        loop.call_at(loop.time() + 0.02, os.write, w, b"x")
        loop.run_until(lambda: bool(seen))
        assert seen == [b"x"]
        assert loop.remove_reader(r) and not loop.remove_reader(r)
        os.write(w, b"y")
        loop.call_at(loop.time() + 0.02, seen.append, "timer")
        loop.run_until(lambda: "timer" in seen)
        assert seen == [b"x", "timer"]   # the pipe's byte was not read: no reader
    finally:
        os.close(r)
        os.close(w)


def test_waiting_on_nothing_raises_instead_of_blocking_forever():
    with pytest.raises(RuntimeError, match="waiting on nothing"):
        BlockingLoop().run_until(lambda: False)


def test_an_exception_of_a_call_propagates_out_of_run_until():
    loop = BlockingLoop()
    loop.call_soon(lambda: 1 / 0)
    with pytest.raises(ZeroDivisionError):
        loop.run_until(lambda: False)


def test_close_stops_watching_every_descriptor():
    loop = BlockingLoop()
    r, w = os.pipe()
    try:
        loop.add_reader(r, lambda: None)
        loop.close()
        assert loop.is_closed() and not loop.remove_reader(r)
    finally:
        os.close(r)
        os.close(w)


def test_map_called_from_a_coroutine_runs_beside_the_running_loop(client, base_url):
    # A plain `map` inside async code blocks that loop's thread, as any blocking call does, but
    # runs: its batch is driven by a loop of its own, not by the running one.
    async def main():
        return client.map([hc.Request("GET", f"{base_url}/bytes/{n}") for n in (1, 200, 70000)])
    results = asyncio.run(main())
    assert [len(r.content) for r in results] == [1, 200, 70000]
    assert results[2].content == bytes(j % 251 for j in range(70000))


def test_map_keeps_its_batch_for_the_next_call_and_frees_it_with_the_client(base_url):
    with hc.Client() as c:
        assert [r.status for r in c.map([hc.Request("GET", f"{base_url}/bytes/5")] * 3)] == [200] * 3
        (driver,) = c._idle_drivers
        assert [r.status for r in c.map([hc.Request("GET", f"{base_url}/bytes/5")] * 3)] == [200] * 3
        assert c._idle_drivers == [driver]   # the same batch (and connections) again
    assert driver.closed


def test_map_timeouts_fire_from_the_loops_timer(client, base_url):
    # No byte comes: only the batch's timer (the loop's call_at) can end these.
    start = time.monotonic()
    results = client.map([hc.Request("GET", f"{base_url}/stall?bytes=5", timeout=0.3)] * 4
                         + [hc.Request("GET", f"{base_url}/bytes/3")])
    assert all(isinstance(r, hc.Timeout) for r in results[:4])
    assert results[4].content == bytes(range(3))
    assert time.monotonic() - start < 5


def test_a_large_body_is_the_bytes_the_library_wrote_into_on_the_loop_and_in_map(client, base_url):
    # A body of at least 64 KiB with a Content-Length is written by the library straight into a
    # bytes object the handler lent: the step hands that object over (no second copy).
    from httpcontent import handlers

    expected = bytes(j % 251 for j in range(200000))

    async def main():
        return await client.arequest("GET", f"{base_url}/bytes/200000")
    for r in (asyncio.run(main()), client.map([hc.Request("GET", f"{base_url}/bytes/200000")])[0]):
        assert r.content == expected
        assert handlers.lent(id(r.content) + handlers._DATA_OFFSET, len(expected)) is r.content


def test_a_token_set_from_another_thread_wakes_the_batchs_descriptor(base_url):
    # The batch polls its own sockets: a token set elsewhere must make that descriptor readable
    # (its eventfd), or the loop would sleep until libcurl's next timer (seconds away).
    import threading
    with hc.Client() as c:
        token = hc.CancelToken()

        async def main():
            threading.Timer(0.3, token.cancel).start()
            return await asyncio.wait_for(c.arequest("GET", f"{base_url}/stall?bytes=100", cancel=token), 10)
        start = time.monotonic()
        with pytest.raises(hc.Cancelled):
            asyncio.run(main())
        assert time.monotonic() - start < 0.9
