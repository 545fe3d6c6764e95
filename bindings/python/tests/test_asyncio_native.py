"""Client.arequest and Client.amap on the event loop itself (issue 15): no worker thread, the
loop watches the sockets, cancelling a task cancels its transfer, and many slow requests wait at
once on one thread."""

import asyncio
import gc
import threading
import time

import pytest

import httpcontent as hc


def run(coro):
    return asyncio.run(coro)


def test_arequest_runs_on_the_loop_thread_with_no_worker(base_url):
    seen = []

    class Where(hc.Handler):
        def accept(self, head):
            seen.append(threading.get_ident())
            return True

        def consume(self, chunk):
            pass

        def finish(self):
            return threading.get_ident()

    async def main():
        with hc.Client(timeout=20) as c:
            r = await c.arequest("GET", f"{base_url}/bytes/300000")
            assert r.status == 200 and r.content == bytes(i % 251 for i in range(300000))
            where = await c.arequest("GET", f"{base_url}/bytes/10", handler=Where())
            # asyncio.to_thread would have made the loop's default executor.
            return where.content, asyncio.get_running_loop()._default_executor

    ident, executor = run(main())
    assert ident == threading.get_ident() and seen == [ident]   # the loop's thread: this one
    assert executor is None


def test_amap_keeps_order_and_gives_each_request_its_outcome(base_url):
    async def main():
        with hc.Client(timeout=20) as c:
            return await c.amap([hc.Request("GET", f"{base_url}/bytes/{n}") for n in (5, 7, 9)]
                                + [hc.Request("GET", f"{base_url}/status/404")], concurrency=2)

    results = run(main())
    assert [len(r.content) for r in results[:3]] == [5, 7, 9]
    assert isinstance(results[3], hc.UnacceptableStatus) and results[3].status == 404


def test_many_requests_wait_at_once_on_one_thread(base_url):
    # 200 requests that each take 0.5 s: at once they end in about 0.5 s, not 100 s (and not
    # in 0.5 s x 200 / workers, as with threads).
    async def main():
        with hc.Client(timeout=30) as c:
            start = time.monotonic()
            rs = await asyncio.gather(*(c.arequest("GET", f"{base_url}/slow?bytes=10&delay=0.5&chunk=10")
                                        for _ in range(200)))
            return time.monotonic() - start, rs

    elapsed, rs = run(main())
    assert all(r.content == bytes(range(10)) for r in rs)
    assert elapsed < 15


def test_cancelling_the_task_cancels_the_transfer(base_url):
    async def main():
        with hc.Client(timeout=30) as c:
            task = asyncio.ensure_future(c.arequest("GET", f"{base_url}/stall?bytes=10"))
            await asyncio.sleep(0.3)
            start = time.monotonic()
            task.cancel()
            with pytest.raises(asyncio.CancelledError):
                await task
            cancelled_in = time.monotonic() - start
            await asyncio.sleep(0.2)
            driver = next(iter(c._drivers.values()))
            left = hc._lib.lib().hc_batch_pending(driver._batch), len(driver._waiting)
            # The client goes on serving: the cancelled transfer left nothing behind.
            r = await c.arequest("GET", f"{base_url}/bytes/3")
            return cancelled_in, left, r.content, c._drivers

    cancelled_in, left, content, drivers = run(main())
    assert cancelled_in < 1 and content == bytes(range(3))
    assert left == (0, 0)   # the transfer itself ended, not only the task
    assert all(d.closed for d in drivers.values()) or not drivers


def test_an_error_and_a_handler_exception_come_back_as_exceptions(base_url):
    class Boom(hc.Handler):
        def accept(self, head):
            return True

        def consume(self, chunk):
            raise KeyError("mine")

        def finish(self):
            return None

    async def main():
        with hc.Client(timeout=20) as c:
            with pytest.raises(hc.UnacceptableStatus):
                await c.arequest("GET", f"{base_url}/status/500")
            with pytest.raises(KeyError, match="mine"):
                await c.arequest("GET", f"{base_url}/bytes/100", handler=Boom())
            with pytest.raises(hc.InvalidArgument):
                await c.arequest("GET", "ftp://127.0.0.1/x")

    run(main())


def test_aiter_json_yields_items_as_they_come_and_stops_when_left(base_url):
    async def main():
        with hc.Client(timeout=30) as c:
            items = [v async for v in c.aiter_json(f"{base_url}/big-json-array?n=5000")]
            first = []
            async for v in c.aiter_json(f"{base_url}/big-json-array?n=200000", buffer=1):
                first.append(v)
                if len(first) == 3:
                    break
            # A slow consumer: the loop stops reading while batches wait, yet all arrive.
            slow = []
            async for v in c.aiter_json(f"{base_url}/big-json-array?n=20000", buffer=1):
                slow.append(v)
                if len(slow) % 5000 == 0:
                    await asyncio.sleep(0.05)
            with pytest.raises(hc.UnacceptableStatus):
                async for _ in c.aiter_json(f"{base_url}/status/404"):
                    pass
            return items, first, slow

    items, first, slow = run(main())
    assert items == [{"id": j, "name": f"item {j}", "tags": ["a", "b"], "value": j * 1.5} for j in range(5000)]
    assert [v["id"] for v in first] == [0, 1, 2]
    assert [v["id"] for v in slow] == list(range(20000))


def test_amap_keeps_at_most_concurrency_in_flight_and_cancelling_it_cancels_every_transfer(base_url):
    from httpcontent import _lib

    async def main():
        with hc.Client(timeout=30) as c:
            await c.arequest("GET", f"{base_url}/bytes/1")   # the loop's batch, made
            driver = next(iter(c._drivers.values()))
            task = asyncio.ensure_future(
                c.amap([hc.Request("GET", f"{base_url}/stall?bytes=10")] * 6, concurrency=2))
            await asyncio.sleep(0.3)
            in_flight = _lib.lib().hc_batch_pending(driver._batch)
            task.cancel()
            with pytest.raises(asyncio.CancelledError):
                await task
            await asyncio.sleep(0.2)   # the next steps complete them as cancelled
            left = _lib.lib().hc_batch_pending(driver._batch), len(driver._waiting)
            # Plain requests and one with options of its own, in order, on the same batch.
            rs = await c.amap([hc.Request("GET", f"{base_url}/headers", headers={"X-Mine": "1"}),
                               hc.Request("GET", f"{base_url}/bytes/4")])
            return in_flight, left, rs

    in_flight, left, rs = run(main())
    assert in_flight == 2          # the other 4 were never handed to libcurl
    assert left == (0, 0)          # no transfer outlives the cancelled task
    assert b"X-Mine" in rs[0].content and rs[1].content == bytes(range(4))


def test_a_finalized_batch_leaves_its_descriptor_number_to_the_next_owner(base_url):
    # The batch handle's finalizer runs `close` when a driver is collected unclosed: it must
    # have the loop stop watching the descriptor before freeing it (the library closes it).
    # Otherwise the loop still maps that number to the batch's callback, and a new descriptor
    # given the same number is never watched for its own reader.
    import os

    from httpcontent._aio import LoopDriver

    async def main():
        loop = asyncio.get_running_loop()
        with hc.Client(timeout=20) as c:
            driver = LoopDriver(c, loop)
            fd = driver._fd
            assert fd in loop._selector.get_map()
            driver._batch.close()   # what Handle.__del__ does
            assert fd not in loop._selector.get_map()
            with pytest.raises(OSError):   # the library closed it
                os.fstat(fd)
            r0, w = os.pipe()
            r = os.dup2(r0, fd)   # a new descriptor with the batch's old number
            opened = [r0, w, r]
            try:
                ready = loop.create_future()
                loop.add_reader(r, lambda: ready.done() or ready.set_result(os.read(r, 1)))
                os.write(w, b"x")
                assert await asyncio.wait_for(ready, 5) == b"x"
                loop.remove_reader(r)
            finally:
                for end in opened:
                    os.close(end)
            driver.close()   # idempotent after the batch went
            assert not driver.open
            # A paused driver (not watched) closes without touching the loop's readers.
            paused = LoopDriver(c, loop)
            paused.pause()
            assert paused._fd not in loop._selector.get_map()
            paused.close()

    run(main())


async def _keep_alive_server(idle_close: float | None, close_each: bool):
    """A raw HTTP/1.1 server on loopback answering every request with b"ok": it closes a
    connection after each response (`close_each`) or once it has been idle `idle_close` s."""
    async def serve(reader, writer):
        try:
            while True:
                try:
                    head = await asyncio.wait_for(reader.readuntil(b"\r\n\r\n"), idle_close)
                except (asyncio.TimeoutError, asyncio.IncompleteReadError):
                    return
                del head
                extra = b"Connection: close\r\n" if close_each else b""
                writer.write(b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\n" + extra + b"\r\nok")
                await writer.drain()
                if close_each:
                    return
        finally:
            writer.close()

    server = await asyncio.start_server(serve, "127.0.0.1", 0)
    return server, server.sockets[0].getsockname()[1]


def test_a_kept_alive_socket_the_server_closes_while_idle_leaves_the_batch_quiet():
    # Between transfers the batch keeps a kept-alive socket in its epoll set, unwatched; when
    # the server closes it, it turns readable: the batch must drop it, not wake the loop again
    # and again, and the next request must still go through on a new connection.
    async def main():
        server, port = await _keep_alive_server(idle_close=0.1, close_each=False)
        async with server:
            with hc.Client(timeout=10) as c:
                url = f"http://127.0.0.1:{port}/"
                assert (await c.arequest("GET", url)).content == b"ok"
                driver = next(iter(c._drivers.values()))
                steps = []
                step = driver._step
                driver._step = lambda: (steps.append(1), step())[1]
                driver.loop.remove_reader(driver._fd)
                driver.loop.add_reader(driver._fd, driver._step)
                contents = []
                for _ in range(3):
                    await asyncio.sleep(0.4)   # the server closes the idle connection
                    contents.append((await c.arequest("GET", url)).content)
                return contents, len(steps)

    contents, steps = run(main())
    assert contents == [b"ok"] * 3
    assert steps < 60   # a readable socket left in the set would step the batch thousands of times


def test_requests_go_through_when_every_connection_is_closed_after_its_response():
    # Each socket is closed and the next often gets the same descriptor number: the batch's
    # record of the old one must not keep the new one out of its epoll set.
    async def main():
        server, port = await _keep_alive_server(idle_close=5, close_each=True)
        async with server:
            with hc.Client(timeout=10) as c:
                url = f"http://127.0.0.1:{port}/"
                one = [(await c.arequest("GET", url)).content for _ in range(5)]
                many = await asyncio.gather(*(c.arequest("GET", url) for _ in range(20)))
                return one, [r.content for r in many]

    one, many = run(asyncio.wait_for(main(), 20))
    assert one == [b"ok"] * 5 and many == [b"ok"] * 20


def test_a_request_cancelled_before_the_batch_took_it_never_runs(base_url):
    # Plain requests are handed to the batch together at the loop's next turn; one cancelled
    # before that is handed over and cancelled at once, and the others are untouched.
    async def main():
        with hc.Client(timeout=10) as c:
            await c.arequest("GET", f"{base_url}/bytes/1")   # the loop's batch made
            driver = next(iter(c._drivers.values()))
            tasks = [asyncio.ensure_future(c.arequest("GET", f"{base_url}/bytes/{n}")) for n in (4, 5, 6)]
            await asyncio.sleep(0)   # each task queued its request; no step ran yet
            queued = len(driver._out)
            tasks[1].cancel()
            done = await asyncio.gather(*tasks, return_exceptions=True)
            await asyncio.sleep(0.05)
            return queued, done, hc._lib.lib().hc_batch_pending(driver._batch), len(driver._waiting)

    queued, done, pending, waiting = run(main())
    assert queued == 3
    assert done[0].content == bytes(range(4)) and done[2].content == bytes(range(6))
    assert isinstance(done[1], asyncio.CancelledError)
    assert (pending, waiting) == (0, 0)


def test_responses_made_on_the_loop_are_freed_in_batches(base_url):
    from httpcontent import _aio
    lib = hc._lib.lib()

    async def main():
        with hc.Client(timeout=10) as c:
            await c.arequest("GET", f"{base_url}/bytes/1")
            _aio.release_now()
            before = lib.hc_live_handles()
            rs = await c.amap([hc.Request("GET", f"{base_url}/bytes/8")] * 100)
            assert all(r.content == bytes(range(8)) for r in rs)
            made = lib.hc_live_handles() - before
            del rs
            gc.collect()
            waiting = len(_aio._released)   # given back, not all freed yet
            _aio.release_now()
            return made, waiting, lib.hc_live_handles() - before

    made, waiting, left = run(main())
    assert made >= 100 and 0 < waiting < _aio._RELEASE_BATCH   # one call per 64 freed the rest
    assert left <= 0   # none of the hundred left (an older handle may have gone meanwhile)


def test_one_client_serves_each_loop_it_is_used_on_in_turn_and_at_once(base_url):
    """arequest recognises the loop it last ran on by that loop's thread: another loop, after it
    or at the same time on another thread, gets its own batch, and a closed client refuses."""
    url = f"{base_url}/bytes/16"
    with hc.Client(timeout=10) as c:
        async def some(n):
            rs = await asyncio.gather(*(c.arequest("GET", url) for _ in range(n)))
            assert all(r.content == bytes(range(16)) for r in rs)
            return id(asyncio.get_running_loop())

        async def distinct():   # texts of their own, handed over in one call
            rs = await asyncio.gather(*(c.arequest("HEAD" if i % 3 == 0 else "GET", f"{base_url}/bytes/{i}")
                                        for i in range(1, 40)))
            assert [r.content for r in rs] == [b"" if i % 3 == 0 else bytes(range(i)) for i in range(1, 40)]

        run(distinct())
        first = run(some(5))
        second = run(some(5))   # a new loop, possibly at the old one's address
        assert first and second
        errors = []

        def on_a_thread():
            try:
                for _ in range(3):
                    run(some(20))
            except BaseException as exc:  # noqa: BLE001
                errors.append(exc)

        threads = [threading.Thread(target=on_a_thread) for _ in range(3)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        assert errors == []
        run(some(3))

    async def after_close():
        await c.arequest("GET", url)

    with pytest.raises(ValueError):
        run(after_close())
