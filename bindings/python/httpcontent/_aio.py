"""Requests on the running asyncio event loop, with no thread: a native batch that polls its
own sockets (an epoll set, hc_batch_poll_fd) and hands the loop one descriptor to watch
(`loop.add_reader`) and one timer (`loop.call_at`). On each wake-up one library call
(hc_batch_step) serves every ready socket and hands back the requests that completed, in
arrays read here; Python works per request only when it is added and when it completes. Any
number of transfers then wait on the loop's one thread and cost nothing until they are ready.

Imports only the bottom of the package: the client hands in requests it has prepared."""

from __future__ import annotations

import asyncio
import atexit
import collections
import ctypes
import functools
import struct
import sys
from typing import Any, AsyncGenerator, Awaitable, Callable, Iterable, Protocol, TypeVar, Union

from . import _feed, _lib
from ._blocking import BlockingLoop, TimerHandle
from ._feed import LoopFeed
from ._handle import Handle
from .errors import check, error_of

# Completions taken per hc_batch_step call (more are taken by calling again).
_TAKE = 64
_Future = asyncio.Future
# hc_fetch_result's fields (response, status, bytes, bytes_len) as `struct` reads them: a step
# reads every completion's in one call (iter_unpack) instead of a ctypes object per field.
_RESULT = struct.Struct("@PiPN")


class Prepared(Protocol):
    """What the client prepares for a send (_prepare.Prepared)."""
    native: Any
    handler: Any

    def outcome(self, code: int, response: int | None, *, raise_errors: bool,
                error: BaseException | None = None) -> Any: ...


class _Batch(Handle):
    """The native batch. Freeing it closes its poll descriptor, so whoever frees it (the
    driver's close, or this handle's finalizer when the driver is collected unclosed) first has
    the loop stop watching that descriptor: a loop left watching a closed number would hand a
    later descriptor of the same number to this batch's callback, or ignore it."""

    __slots__ = ("unwatch",)

    def __init__(self, handle: int | None) -> None:
        super().__init__(handle)
        #: Removes the loop's reader of the batch's descriptor (set once it is added).
        self.unwatch: Callable[[], None] | None = None

    def close(self) -> None:
        unwatch, self.unwatch = getattr(self, "unwatch", None), None
        if unwatch is not None and not self.closed:
            try:
                unwatch()
            finally:
                super().close()
        else:
            super().close()

    @staticmethod
    def _free(ptr: int) -> None:
        _lib.lib().hc_batch_free(ptr)


# Makes the Response of a fetched request (hc_fetch_result) for a handler (_fastpath.fetched).
Respond = Callable[[Any, Any], Any]
# (Response class, limit, lent): see LoopDriver.__init__.
Small = tuple[type, int, Callable[[int, int], "bytes | None"]]
# What a driver runs on: the running asyncio loop (`arequest`, `amap`), or a BlockingLoop on the
# caller's thread (`map`).
Loop = Union[asyncio.AbstractEventLoop, BlockingLoop]


class LoopDriver:
    """One native batch driven by one event loop. `add` queues a prepared request (`fetch` a
    plain one, in one call) and returns its key; its outcome goes to `sink`: a future (set to
    the Response, or to the hc.Error or your handler's exception) or a function called with
    it. Use it from the loop's thread only."""

    def __init__(self, client: Any, loop: Loop, *, concurrency: int = 0,
                 host_limit: int | None = None, respond: Respond | None = None,
                 small: Small | None = None) -> None:
        """`respond` makes the Response of a `fetch`; `small` is (class, limit, lent): a body
        shorter than `limit` for a handler with `_plain_bytes` is copied into
        `class._small(...)`, as `respond` does, without calling it (a step's work per request),
        and a longer one the library wrote into a bytes object lent by the handler
        (`lent(address, size)`) goes into `class._small(...)` as it is."""
        lib = _lib.lib()
        self.loop = loop
        self._batch = _Batch(lib.hc_batch_new(client))
        self._timer: asyncio.TimerHandle | TimerHandle | None = None
        # key -> (prepared or None for a fetch, handler, sink)
        self._waiting: dict[int, tuple[Prepared | None, Any, Any]] = {}
        self._respond = respond
        self._small = small
        #: Whether `fetch` may be used (the client handed in how to make its responses).
        self.fetches = respond is not None
        self._next = 1
        # A step is scheduled with call_soon (adding many requests in one turn schedules one).
        self._soon = False
        # While paused (a consumer is behind), the loop does not watch the batch's descriptor and
        # the batch is not stepped: nothing more is read, and TCP holds the server back.
        self._paused = False
        # What hc_batch_step fills, made once.
        self._keys = (ctypes.c_uint64 * _TAKE)()
        self._results = (_lib.FetchResult * _TAKE)()
        self._errors = (ctypes.c_void_p * _TAKE)()
        self._count = ctypes.c_size_t()
        self._timeout = ctypes.c_long()
        self._step_args = (self._keys, self._results, self._errors, ctypes.byref(self._count),
                           ctypes.byref(self._timeout))
        if _RESULT.size != ctypes.sizeof(_lib.FetchResult):   # a platform struct does not describe
            raise RuntimeError("httpcontent: hc_fetch_result's layout is not the one _aio reads")
        self._results_bytes = memoryview(self._results).cast("B")
        # A char pointer whose address is set through an alias of its storage: slicing it
        # (`[:n]`) copies a body at an address read by `_RESULT` into bytes, with no ctypes
        # object made per body.
        self._body = ctypes.POINTER(ctypes.c_char)()
        self._body_at = ctypes.c_void_p.from_buffer(self._body)
        try:
            check(lib.hc_batch_set_concurrency(self._batch, max(0, int(concurrency))))
            if host_limit is not None:  # else the client's (hc_client_set_host_limit)
                check(lib.hc_batch_set_host_limit(self._batch, max(0, int(host_limit))))
            fd = ctypes.c_int()
            check(lib.hc_batch_poll_fd(self._batch, ctypes.byref(fd)))
            self._fd = fd.value
            loop.add_reader(self._fd, self._step)
            self._batch.unwatch = functools.partial(_unwatch, loop, self._fd)
        except BaseException:
            self._batch.close()
            raise
        # Converted once (see _lib.as_arg): ctypes passes it on as it is.
        self._ptr = _lib.as_arg(ctypes.c_void_p, self._batch._as_parameter_)
        #: False once closed (read on every request: a plain attribute).
        self.open = True
        self._hc_step = lib.hc_batch_step
        self._hc_add = lib.hc_batch_add_queued
        self._hc_fetch_many = lib.hc_batch_fetch_queued_many
        # Plain requests queued by `fetch` and not yet handed to the batch: (method, url, native
        # handler, key) each, handed over in one call at the next step (or before a cancel or
        # an `add`), not one call each.
        self._out: list[tuple[bytes | None, bytes | None, Any, int]] = []
        # What _hand_over fills, made once (a ctypes array type made per call costs more than
        # the call it saves).
        self._out_methods: Any = (ctypes.c_char_p * _TAKE)()
        self._out_urls: Any = (ctypes.c_char_p * _TAKE)()
        self._out_handlers: Any = (ctypes.c_void_p * _TAKE)()
        self._out_keys: Any = (ctypes.c_uint64 * _TAKE)()
        self._hc_cancel = lib.hc_batch_cancel_queued

    @property
    def closed(self) -> bool:
        return self._batch.closed

    def set_limits(self, concurrency: int, host_limit: int) -> None:
        """Transfers in flight at once and connections per host (0: no limit), for the requests
        added from now on (a batch `map` keeps for its next call)."""
        lib = _lib.lib()
        check(lib.hc_batch_set_concurrency(self._batch, max(0, int(concurrency))))
        check(lib.hc_batch_set_host_limit(self._batch, max(0, int(host_limit))))

    def add(self, prepared: Prepared, sink: Any) -> int:
        """Queues `prepared` (its native request is freed here: the batch took its settings);
        its outcome goes to `sink`. Returns its key (for `cancel`)."""
        if not self.open:
            raise ValueError("the loop's batch is closed")
        if self._out:   # those queued before it go first
            self._hand_over()
        key = self._next
        self._next = key + 1
        with prepared.native as req:
            check(self._hc_add(self._ptr, req, key))
        self._waiting[key] = (prepared, prepared.handler, sink)
        if not self._soon:   # the transfer starts at the next step
            self._soon = True
            self.loop.call_soon(self._step)
        return key

    def fetch(self, method: bytes | None, url: bytes | None, handler: Any, native: Any,
              sink: Any) -> int:
        """Queues a request with no body and no header of its own (its Response made by
        `respond`), handed to the batch with the others of this turn in one call at the next
        step; `native` is the handler's native (a _NativeHandler), not per request. Returns its
        key."""
        if not self.open:
            raise ValueError("the loop's batch is closed")
        key = self._next
        self._next = key + 1
        self._out.append((method, url, native, key))
        self._waiting[key] = (None, handler, sink)
        if not self._soon:
            self._soon = True
            self.loop.call_soon(self._step)
        return key

    def cancel(self, key: int) -> None:
        """Cancels the request under `key` (it completes with hc.Cancelled at the next step)."""
        if key in self._waiting and self.open:
            if self._out:   # it may not be the batch's yet
                self._hand_over()
            self._hc_cancel(self._ptr, key)
            self.poke()

    def pause(self) -> None:
        """Stops reading: the batch's descriptor is no longer watched (use with one request)."""
        if self._paused or self._batch.closed:
            return
        self._paused = True
        self.loop.remove_reader(self._fd)
        self._batch.unwatch = None

    def resume(self) -> None:
        """Reads again: the descriptor is watched, and the batch stepped soon."""
        if not self._paused or self._batch.closed:
            return
        self._paused = False
        self.loop.add_reader(self._fd, self._step)
        self._batch.unwatch = functools.partial(_unwatch, self.loop, self._fd)
        self.poke()   # data may be waiting already

    def poke(self) -> None:
        """Has the batch look at its transfers soon (after a cancellation token was set)."""
        if not self._soon:
            self._soon = True
            self.loop.call_soon(self._step)

    def close(self) -> None:
        """Stops watching; requests still waiting complete with hc.Cancelled."""
        if not self.open:
            return
        self.open = False
        self._out = []   # never handed over: they complete with hc.Cancelled below
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None
        self._batch.close()   # unwatches, frees the completions not taken and the descriptor
        waiting, self._waiting = self._waiting, {}
        for _, _, sink in waiting.values():
            _deliver(sink, _cancelled())

    # -- the loop's side ---------------------------------------------------------------------

    def _hand_over(self) -> None:
        """Hands the requests `fetch` queued to the batch, in one call."""
        out, self._out = self._out, []
        methods, urls, natives, keys = zip(*out)
        handlers = [native._ptr for native in natives]
        if None in handlers:   # a handler closed before its request was handed over
            kept = [i for i, h in enumerate(handlers) if h is not None]
            for i, h in enumerate(handlers):
                if h is None:
                    entry = self._waiting.pop(keys[i], None)
                    if entry is not None:
                        _deliver(entry[2], _closed_handler())
            methods, urls, keys = (tuple(m[i] for i in kept) for m in (methods, urls, keys))
            handlers = [handlers[i] for i in kept]
        m, u, h, k = self._out_methods, self._out_urls, self._out_handlers, self._out_keys
        for start in range(0, len(keys), _TAKE):
            end = min(start + _TAKE, len(keys))
            n = end - start
            m[:n] = methods[start:end]
            u[:n] = urls[start:end]
            h[:n] = handlers[start:end]
            k[:n] = keys[start:end]
            if self._hc_fetch_many(self._ptr, n, m, u, h, k):
                # Only for arguments this never passes; those requests get the error.
                exc = _take_last_error()
                for key in keys[start:end]:
                    entry = self._waiting.pop(key, None)
                    if entry is not None:
                        _deliver(entry[2], exc)

    def _step(self) -> None:
        """Steps the batch (every ready socket, the timer if due) and settles what completed."""
        self._soon = False
        if not self.open:
            return
        if self._out:
            self._hand_over()
        if self._paused:
            return
        keys, results, errors = self._keys, self._results, self._errors
        waiting = self._waiting
        respond = self._respond
        small, limit, lent = self._small or (None, 0, None)
        body, body_at = self._body, self._body_at
        fields = self._results_bytes
        size = _RESULT.size
        while True:
            check(self._hc_step(self._ptr, _TAKE, *self._step_args))
            n = self._count.value
            if not n:
                break
            # Whole slices and one unpacking: a few calls for every completion, not some each.
            for i, key, error, (response, status, at, length) in zip(
                    range(n), keys[:n], errors[:n], _RESULT.iter_unpack(fields[:n * size])):
                entry = waiting.pop(key, None)
                if entry is None:   # not ours any more (closed meanwhile)
                    _free(response, error)
                    continue
                prepared, handler, sink = entry
                if prepared is None and not error and handler._plain_bytes and not handler._may_raise:
                    # `respond`'s plain-bytes cases without calling it: the usual arequest outcome.
                    outcome: Any = None
                    if length < limit:
                        body_at.value = at
                        outcome = small._small(response, status, body[:length])  # type: ignore[union-attr]  # limit 0 when small is None
                    elif lent is not None:
                        lent_body = lent(at, length)
                        if lent_body is not None:
                            outcome = small._small(response, status, lent_body)  # type: ignore[union-attr]
                    if outcome is not None:
                        if sink.__class__ is _Future and not sink.done():
                            sink.set_result(outcome)
                        else:
                            _deliver(sink, outcome)
                        continue
                result = results[i]
                try:
                    if prepared is not None:
                        outcome = prepared.outcome(1 if error else 0, result.response, raise_errors=False,
                                                   error=_take_error(error) if error else None)
                    else:
                        exc = handler._take_exception() if handler._may_raise else None
                        if exc is not None:
                            _free(result.response, error)
                            outcome = exc
                        elif error:
                            outcome = _take_error(error)
                        else:
                            assert respond is not None
                            outcome = respond(handler, result)
                except BaseException as exc:  # noqa: BLE001 - that request's outcome
                    outcome = exc
                if sink.__class__ is _Future and not sink.done() and not isinstance(outcome, BaseException):
                    sink.set_result(outcome)   # the usual case, without a call
                else:
                    _deliver(sink, outcome)
            if n < _TAKE or not self.open:
                break
        self._arm(self._timeout.value)

    def _arm(self, ms: int) -> None:
        """Has the loop step the batch after `ms` milliseconds (-1: never, 0: soon)."""
        timer = self._timer
        if ms < 0:
            if timer is not None:
                timer.cancel()
                self._timer = None
            return
        if ms == 0:
            self.poke()
            return
        when = self.loop.time() + ms / 1000
        if timer is not None:
            # A timer due no later than asked is kept: stepping early is harmless (the step
            # arms again), and libcurl's earliest deadline moves on at almost every step as
            # transfers complete (a new handle costs a heap push, and the cancelled one stays
            # in the heap).
            if timer.when() <= when + 0.001:
                return
            timer.cancel()
        self._timer = self.loop.call_at(when, self._timer_expired)

    def _timer_expired(self) -> None:
        self._timer = None
        self._step()




def _deliver(sink: asyncio.Future[Any] | Callable[[Any], None], outcome: Any) -> None:
    """Gives `outcome` to `sink`: a future (unless cancelled meanwhile: the outcome is dropped,
    a Response freeing itself) or a function."""
    if isinstance(sink, asyncio.Future):
        if sink.done():
            return
        if isinstance(outcome, BaseException):
            sink.set_exception(outcome)
        else:
            sink.set_result(outcome)  # pyright: ignore[reportUnknownMemberType]
    else:
        try:
            sink(outcome)
        except Exception as exc:  # noqa: BLE001 - a sink cannot raise into the loop's step
            asyncio.get_running_loop().call_exception_handler(
                {"message": "httpcontent: a request's outcome could not be delivered", "exception": exc})


def _take_error(err: int) -> BaseException:
    """The hc_error `err` as an exception; `err` is freed."""
    try:
        return error_of(err)
    finally:
        _lib.lib().hc_error_free(err)


def _unwatch(loop: Loop, fd: int) -> None:
    """Has `loop` stop watching a batch's descriptor, before the batch closes it. (A partial of
    this, not a bound method: the batch handle must not keep its driver alive.)"""
    if not loop.is_closed():
        loop.remove_reader(fd)


def _free(response: int | None, error: int | None) -> None:
    lib = _lib.lib()
    if response:
        lib.hc_response_free(response)
    if error:
        lib.hc_error_free(error)


# Native responses given back by `release`, freed in one call per _RELEASE_BATCH (a deque:
# appends and pops are atomic, so any thread may give one back, and a flush inside a flush, from
# a finalizer, takes other entries).
_released: collections.deque[int] = collections.deque()
_RELEASE_BATCH = 64


def release(ptr: int) -> None:
    """Frees the native response `ptr` soon, with others (hc_response_free_many): a response made
    on the loop costs no library call of its own when it goes. At most _RELEASE_BATCH wait."""
    _released.append(ptr)
    if len(_released) >= _RELEASE_BATCH:
        release_now()


def release_now() -> None:
    """Frees the native responses `release` holds (at exit too, while the library is loaded)."""
    pop = _released.popleft
    taken: list[int] = []
    try:
        for _ in range(len(_released)):
            taken.append(pop())
    except IndexError:   # taken meanwhile by another flush
        pass
    if taken and not sys.is_finalizing():   # at exit the library may be gone: leak, don't crash
        _lib.lib().hc_response_free_many((ctypes.c_void_p * len(taken))(*taken), len(taken))


atexit.register(release_now)


def _closed_handler() -> BaseException:
    from .errors import InvalidArgument
    return InvalidArgument("the request's handler was closed before the request started")


def _take_last_error() -> BaseException:
    from .errors import last_error
    return last_error()


def _cancelled() -> BaseException:
    from .errors import Cancelled
    return Cancelled("cancelled: the event loop's batch was closed")


class Closable(Protocol):
    """A handler made for one stream (closed when the stream ends)."""

    def close(self) -> None: ...


# Runs one request on a driver, the handler given: `send(handler, driver, method=, url=,
# **request_options)` (Client._loop_send).
Send = Callable[..., Awaitable[Any]]
B = TypeVar("B")
T = TypeVar("T")


async def loop_items(client: Any, send: Send, handler_of: Callable[[LoopFeed[B]], Closable],
                     items: Callable[[B], Iterable[T]], *, buffer: int, method: str, url: str,
                     options: dict[str, Any], tail: Callable[[], Iterable[T]] | None = None
                     ) -> AsyncGenerator[T, None]:
    """The streaming iterators' body on the running loop, with no thread: one transfer on a
    driver of its own, whose handler (`handler_of(feed)`) puts each batch into `feed` as its
    callbacks run on the loop; each batch's `items(batch)` are yielded, then `tail()` once the
    transfer succeeded, then its error, if any. When `buffer` batches wait, the driver stops
    reading the socket until the consumer catches up. Leaving early (`aclose`, a `break` that
    drops the iterator, a cancelled task) cancels the transfer and frees the driver's batch,
    which closes the connection at once, before `aclose` returns."""
    driver = LoopDriver(client, asyncio.get_running_loop())
    handler: Closable | None = None
    transfer: asyncio.Future[Any] | None = None
    try:
        feed: LoopFeed[B] = LoopFeed(driver, buffer)
        handler = handler_of(feed)
        transfer = asyncio.ensure_future(send(handler, driver, method=method, url=url, **options))
        async for batch in feed.drain(transfer):
            for item in items(batch):
                yield item
        transfer.result()   # raises the request's error
        if tail is not None:
            for item in tail():
                yield item
    finally:
        await _feed.stop(transfer)
        driver.close()
        if handler is not None:
            handler.close()


__all__ = ["LoopDriver", "loop_items"]
