"""A client's requests on the running asyncio event loop, with no thread (`arequest`, `amap`):
each loop has one `LoopDriver` (see _aio.py) made on first use, and a request with no option
of its own is queued in one library call (the fast path of _fastpath.py). A mixin of
`Client`, apart from the sending on the caller's thread."""

from __future__ import annotations

import asyncio
import functools
import threading
from typing import TYPE_CHECKING, Any, Callable, Iterable

from . import _lib
from ._aio import LoopDriver, _Future
from ._blocking import BlockingLoop
from ._fastpath import PLAIN, SMALL, fetched, response_of
from ._prepare import prepare
from ._urls import LastURL, method_bytes
from .models import Request, Response

if TYPE_CHECKING:
    from typing_extensions import Unpack

    from ._types import RequestOptions
    from .handlers import Bytes, Handler


class LoopMethods:
    """`arequest`, `amap` and the drivers they run on, one per event loop."""

    if TYPE_CHECKING:  # what the mixin uses of Client
        _bytes: Bytes | None
        _auth_hook: Any
        _urls: LastURL
        _drivers: dict[int, LoopDriver]
        _idle_drivers: list[LoopDriver]

        @property
        def closed(self) -> bool: ...
        _current: tuple[Any, LoopDriver] | None

        def _check_open(self) -> None: ...

        def _default_bytes(self) -> Handler: ...

    async def arequest(self, method: str, url: str, **kwargs: Unpack[RequestOptions]) -> Response:
        """`request` on the running event loop, with no thread: the loop watches the batch's
        sockets (see _aio.py), so thousands may be in flight at once. Cancelling the task
        cancels the transfer. Handlers' callbacks run on the loop's thread."""
        current = self._current
        if current is not None and current[0]._thread_id == _get_ident() and current[1].open:
            # The loop last seen is the one running on this thread (see _fast_loop): found
            # without get_running_loop, whose pid check is a system call per request.
            loop, driver = current
            future: asyncio.Future[Any] = _Future(loop=loop)
        else:
            loop = asyncio.get_running_loop()
            found = self._drivers.get(id(loop))
            driver = (found if found is not None and found.loop is loop and found.open
                      else self._loop_driver())
            future = loop.create_future()
            self._current = (loop, driver) if _fast_loop(loop) else None
        if kwargs:
            key = self._submit(driver, Request(method, url, **kwargs), future)
        else:   # the common case: one library call to queue it (`_fetch_on`'s usual case)
            handler = self._bytes or self._default_bytes()
            native = handler._native
            if native is not None and self._auth_hook is None and driver.fetches:
                key = driver.fetch(method_bytes(method), self._urls.encode(url), handler, native, future)
            else:
                key = self._fetch_on(driver, method, url, handler, future)
        try:
            response: Response = await future
        except asyncio.CancelledError:
            driver.cancel(key)
            raise
        return response

    async def amap(self, requests: Iterable[Request], *, concurrency: int | None = None,
                   host_limit: int | None = None) -> list[Any]:
        """`map` on the running event loop, with no thread: in order, a `Response` or the
        error of each request. At most `concurrency` are in flight (None: the library's
        default, `default_concurrency()`; 0: all at once); the next
        is queued as one completes, with no task per request. Cancelling the task cancels every
        transfer."""
        self._check_open()
        items = list(requests)
        if not items:
            return []
        loop = asyncio.get_running_loop()
        # The loop's own batch (its connections already made, the client's host limit), unless
        # a host limit of this call's needs a batch of its own.
        own = (LoopDriver(self, loop, host_limit=host_limit, respond=fetched, small=SMALL)
               if host_limit is not None else None)
        driver = own or self._loop_driver()
        finished = loop.create_future()
        if concurrency is None:
            concurrency = default_concurrency()

        def all_done() -> None:
            if not finished.done():
                finished.set_result(None)
        window = Window(self, driver, items, concurrency, all_done)
        try:
            window.start()
            await finished
        except BaseException:
            window.stop()
            raise
        finally:
            if own is not None:
                own.close()
        return window.results

    def _map_blocking(self, items: list[Request], concurrency: int, host_limit: int) -> list[Any]:
        """`map` on the calling thread: the requests on a batch driven by a BlockingLoop, the
        batch's own limits (`concurrency`, `host_limit`) holding back the rest. The batch is
        kept for the next call when this one ran to the end (its connections stay open)."""
        try:
            driver = self._idle_drivers.pop()
        except IndexError:
            # Plain Responses (freed one by one, as `request`'s), not LoopResponses: the
            # caller's thread may be no loop's, and what it keeps of them stays its own.
            driver = LoopDriver(self, BlockingLoop(), respond=response_of, small=PLAIN)
        finished = False
        window = Window(self, driver, items, 0, None)
        try:
            loop = driver.loop
            assert isinstance(loop, BlockingLoop)
            driver.set_limits(concurrency, host_limit)
            try:
                window.start()
                loop.run_until(window.finished)
            except BaseException:
                window.stop()
                raise
            finished = True
        finally:
            if finished and not self._idle_drivers and not self.closed:
                self._idle_drivers.append(driver)
            else:
                driver.close()
        return window.results

    def _submit(self, driver: LoopDriver, request: Request, sink: Any) -> int:
        """Queues `request` on `driver`, its outcome to `sink`; returns its key. A request with
        no option but a handler takes one library call (`_fetch_on`)."""
        o = request.options
        if not o or (len(o) == 1 and "handler" in o):
            handler = o.get("handler") or self._bytes or self._default_bytes()
            return self._fetch_on(driver, request.method, request.url, handler, sink)
        return driver.add(prepare(request, self._bytes or self._default_bytes(), self._auth_hook), sink)

    def _fetch_on(self, driver: LoopDriver, method: str, url: str, handler: Handler, sink: Any) -> int:
        """`_submit` of a request with no body and no header of its own (hc_batch_fetch_queued),
        unless a custom auth hook or a handler needing a native per request wants the full path."""
        if self._auth_hook is not None or handler._shared or not driver.fetches:
            return driver.add(prepare(Request(method, url, handler=handler),
                                       self._bytes or self._default_bytes(), self._auth_hook), sink)
        native = handler._native or handler._handle()
        return driver.fetch(method_bytes(method), self._urls.encode(url), handler, native, sink)

    def _loop_driver(self) -> LoopDriver:
        """The client's batch on the running loop, made on first use (no limit on transfers
        in flight: they cost nothing while they wait)."""
        self._check_open()
        loop = asyncio.get_running_loop()
        drivers = self._drivers
        driver = drivers.get(id(loop))
        if driver is None or driver.loop is not loop or driver.closed:
            for key, old in list(drivers.items()):   # those of loops since closed
                if old.loop.is_closed():   # (another thread may be at it too)
                    old.close()
                    drivers.pop(key, None)
            driver = drivers[id(loop)] = LoopDriver(self, loop, respond=fetched, small=SMALL)
        return driver

    async def _await(self, driver: LoopDriver, request: Request) -> Any:
        """Adds `request` to `driver` and waits for its outcome; a cancelled wait cancels the
        transfer."""
        future: asyncio.Future[Any] = asyncio.get_running_loop().create_future()
        key = self._submit(driver, request, future)
        try:
            return await future
        except asyncio.CancelledError:
            driver.cancel(key)
            raise

    async def _loop_send(self, handler: Handler, driver: LoopDriver, *, method: str, url: str,
                         **options: Any) -> Any:
        """Sends one request of a streaming async iterator on its own driver (_aio.loop_items)."""
        return await self._await(driver, Request(method, url, handler=handler, **options))


class Window:
    """The requests of one `map` or `amap` call on a driver: at most `limit` in flight (0: all),
    the next queued as one completes (with no task per request), each outcome (a Response or
    the error) put in `results` at its request's index; `on_done` is called once all are."""

    __slots__ = ("client", "driver", "items", "results", "limit", "on_done", "_next", "_left",
                 "_stopped", "_in_flight")

    def __init__(self, client: LoopMethods, driver: LoopDriver, items: list[Request], limit: int,
                 on_done: Callable[[], Any] | None) -> None:
        self.client = client
        self.driver = driver
        self.items = items
        self.results: list[Any] = [None] * len(items)
        self.limit = len(items) if limit <= 0 else min(limit, len(items))
        self.on_done = on_done
        self._next = 0
        self._left = len(items)
        self._stopped = False
        self._in_flight: dict[int, int] = {}   # index -> key

    def start(self) -> None:
        for _ in range(self.limit):
            if self._stopped or self._next >= len(self.items):
                break
            self._submit_next()

    def finished(self) -> bool:
        return self._left == 0

    def stop(self) -> None:
        """Cancels every transfer in flight; no more are queued."""
        self._stopped = True
        for key in self._in_flight.values():
            self.driver.cancel(key)

    def _submit_next(self) -> None:
        i = self._next
        self._next = i + 1
        try:
            self._in_flight[i] = self.client._submit(self.driver, self.items[i], functools.partial(self._done, i))
        except BaseException as exc:  # noqa: BLE001 - that request's outcome
            self._done(i, exc)

    def _done(self, i: int, outcome: Any) -> None:
        self._in_flight.pop(i, None)
        self.results[i] = outcome
        self._left -= 1
        if self._stopped:
            return
        if self._next < len(self.items):
            self._submit_next()
        elif self._left == 0 and self.on_done is not None:
            self.on_done()


_get_ident = threading.get_ident


def _fast_loop(loop: Any) -> bool:
    """Whether `loop` is recognised as the running one by its `_thread_id` (asyncio's own loops
    set it while they run on a thread, and a thread runs one loop at a time) and makes its
    futures as asyncio.Future (its create_future is asyncio's)."""
    return (isinstance(loop, asyncio.BaseEventLoop)
            and type(loop).create_future is asyncio.BaseEventLoop.create_future)


def default_concurrency() -> int:
    """The library's default for transfers in flight at once: `map`, `amap` and C batches
    (`hc_batch_default_concurrency`)."""
    return int(_lib.lib().hc_batch_default_concurrency())


__all__ = ["LoopMethods", "Window", "default_concurrency"]
