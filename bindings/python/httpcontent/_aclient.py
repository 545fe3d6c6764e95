"""A client's requests on the running asyncio event loop, with no thread (`arequest`, `amap`):
each loop has one `LoopDriver` (see _aio.py) made on first use, and a request with no option
of its own is queued in one library call (the fast path of _fastpath.py). A mixin of
`Client`, apart from the sending on the caller's thread."""

from __future__ import annotations

import asyncio
import functools
import threading
from typing import TYPE_CHECKING, Any, Iterable

from . import _lib
from ._aio import LoopDriver, _Future
from ._fastpath import SMALL, fetched
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
        results: list[Any] = [None] * len(items)
        if not items:
            return results
        loop = asyncio.get_running_loop()
        # The loop's own batch (its connections already made, the client's host limit), unless
        # a host limit of this call's needs a batch of its own.
        own = (LoopDriver(self, loop, host_limit=host_limit, respond=fetched, small=SMALL)
               if host_limit is not None else None)
        driver = own or self._loop_driver()
        finished = loop.create_future()
        in_flight: dict[int, int] = {}   # index -> key
        state = {"next": 0, "left": len(items), "stopped": False}

        def submit_next() -> None:
            i = state["next"]
            state["next"] = i + 1
            try:
                in_flight[i] = self._submit(driver, items[i], functools.partial(done, i))
            except BaseException as exc:  # noqa: BLE001 - that request's outcome
                done(i, exc)

        def done(i: int, outcome: Any) -> None:
            in_flight.pop(i, None)
            results[i] = outcome
            state["left"] -= 1
            if state["stopped"]:
                return
            if state["next"] < len(items):
                submit_next()
            elif state["left"] == 0 and not finished.done():
                finished.set_result(None)

        if concurrency is None:
            concurrency = default_concurrency()
        window = len(items) if concurrency <= 0 else min(concurrency, len(items))
        try:
            for _ in range(window):
                if state["stopped"]:
                    break
                submit_next()
            await finished
        except BaseException:
            state["stopped"] = True
            for key in in_flight.values():
                driver.cancel(key)
            raise
        finally:
            if own is not None:
                own.close()
        return results

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
        future: asyncio.Future[Any] = driver.loop.create_future()
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


__all__ = ["LoopMethods", "default_concurrency"]
