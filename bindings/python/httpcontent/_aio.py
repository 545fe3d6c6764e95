"""Requests on the running asyncio event loop, with no thread: a native batch whose sockets and
timer the loop itself watches (`loop.add_reader`/`add_writer`, `loop.call_later`), as pycurl
users drive libcurl's multi_socket API. Any number of transfers then wait on the loop's one
thread and cost nothing until their socket is ready; their completions resolve futures.

Imports only the bottom of the package: the client hands in requests it has prepared."""

from __future__ import annotations

import asyncio
from typing import Any, Protocol

from . import _lib
from ._handle import Handle
from .errors import check

_WATCH_IN, _WATCH_OUT, _WATCH_REMOVE = 1, 2, 4
_EVENT_IN, _EVENT_OUT = 1, 2
_SOCKET_TIMEOUT = -1


class Prepared(Protocol):
    """What the client prepares for a send (client._Prepared)."""
    native: Any

    def outcome(self, code: int, response: int | None, *, raise_errors: bool) -> Any: ...


class _Batch(Handle):
    @staticmethod
    def _free(ptr: int) -> None:
        _lib.lib().hc_batch_free(ptr)


class LoopDriver:
    """One native batch driven by one event loop. `add` queues a prepared request and returns
    the future of its outcome: a Response, or the hc.Error (or your handler's exception) set as
    the future's exception. Use it from the loop's thread only."""

    def __init__(self, client: Any, loop: asyncio.AbstractEventLoop, *, concurrency: int = 0,
                 host_limit: int = 0) -> None:
        lib = _lib.lib()
        self.loop = loop
        self._batch = _Batch(lib.hc_batch_new(client))
        self._watched: dict[int, int] = {}
        self._timer: asyncio.TimerHandle | None = None
        self._waiting: dict[int, tuple[Prepared, asyncio.Future[Any]]] = {}
        self._next = 1
        # While paused (a consumer is behind), the loop watches none of the batch's sockets and
        # libcurl is not called: nothing more is read, and TCP holds the server back.
        self._paused = False
        self._missed_timer = False
        try:
            check(lib.hc_batch_set_concurrency(self._batch, max(0, int(concurrency))))
            check(lib.hc_batch_set_host_limit(self._batch, max(0, int(host_limit))))
            # Kept alive as long as the batch may call them.
            self._socket_cb = _lib.SOCKET_WATCH_CB(self._on_socket)
            self._timer_cb = _lib.TIMER_WATCH_CB(self._on_timer)
            self._done_cb = _lib.DONE_CB(self._on_done)
            check(lib.hc_batch_watch(self._batch, self._socket_cb, self._timer_cb, None))
        except BaseException:
            self._batch.close()
            raise

    @property
    def closed(self) -> bool:
        return self._batch.closed

    def add(self, prepared: Prepared) -> asyncio.Future[Any]:
        """Queues `prepared` (its native request is freed here: the batch took its settings)."""
        future: asyncio.Future[Any] = self.loop.create_future()
        key = self._next
        self._next += 1
        self._waiting[key] = (prepared, future)
        try:
            with prepared.native as req:
                check(_lib.lib().hc_batch_add(self._batch, req, self._done_cb, key))
        except BaseException:
            self._waiting.pop(key, None)
            raise
        return future

    def pause(self) -> None:
        """Stops reading: the sockets are no longer watched (use with one request)."""
        if self._paused or self._batch.closed:
            return
        self._paused = True
        for fd, what in self._watched.items():
            if what & _WATCH_IN:
                self.loop.remove_reader(fd)
            if what & _WATCH_OUT:
                self.loop.remove_writer(fd)

    def resume(self) -> None:
        """Reads again: the sockets are watched as libcurl last asked, and its timer runs."""
        if not self._paused or self._batch.closed:
            return
        self._paused = False
        for fd, what in self._watched.items():
            if what & _WATCH_IN:
                self.loop.add_reader(fd, self._act, fd, _EVENT_IN)
            if what & _WATCH_OUT:
                self.loop.add_writer(fd, self._act, fd, _EVENT_OUT)
        self.loop.call_soon(self._act, _SOCKET_TIMEOUT, 0)   # data may be waiting already

    def poke(self) -> None:
        """Has the batch look at its transfers soon (after a cancellation token was set)."""
        self.loop.call_soon(self._act, _SOCKET_TIMEOUT, 0)

    def close(self) -> None:
        """Stops watching; requests still running complete with hc.Cancelled."""
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None
        for fd in list(self._watched):
            self._unwatch(fd)
        self._batch.close()   # completes what remains through _on_done

    # -- what the batch asks of the loop (called during hc_batch_add / socket_action) -------

    def _on_socket(self, _userdata: int | None, fd: int, what: int) -> None:
        try:
            if what == _WATCH_REMOVE:
                self._unwatch(fd)
                return
            had = self._watched.get(fd, 0)
            if self._paused:   # remembered, watched on resume
                self._watched[fd] = what
                return
            if what & _WATCH_IN and not had & _WATCH_IN:
                self.loop.add_reader(fd, self._act, fd, _EVENT_IN)
            elif had & _WATCH_IN and not what & _WATCH_IN:
                self.loop.remove_reader(fd)
            if what & _WATCH_OUT and not had & _WATCH_OUT:
                self.loop.add_writer(fd, self._act, fd, _EVENT_OUT)
            elif had & _WATCH_OUT and not what & _WATCH_OUT:
                self.loop.remove_writer(fd)
            self._watched[fd] = what
        except Exception as exc:  # noqa: BLE001 - a callback cannot raise into C
            self.loop.call_exception_handler({"message": "httpcontent: watching a socket failed",
                                              "exception": exc})

    def _unwatch(self, fd: int) -> None:
        had = 0 if self._paused else self._watched.get(fd, 0)
        self._watched.pop(fd, None)
        if had & _WATCH_IN:
            self.loop.remove_reader(fd)
        if had & _WATCH_OUT:
            self.loop.remove_writer(fd)

    def _on_timer(self, _userdata: int | None, ms: int) -> None:
        timer = self._timer
        if ms < 0:
            if timer is not None:
                timer.cancel()
                self._timer = None
            return
        when = self.loop.time() + ms / 1000
        if timer is not None:
            # libcurl re-arms its timer on most calls, often for the same moment: keep the
            # handle then (a new one costs a heap push, and the cancelled one stays in the heap).
            if abs(timer.when() - when) < 0.001:
                return
            timer.cancel()
        self._timer = self.loop.call_at(when, self._timer_expired)

    def _on_done(self, userdata: int | None, code: int, response: int | None) -> None:
        entry = self._waiting.pop(userdata or 0, None)
        if entry is None:
            if response:
                _lib.lib().hc_response_free(response)
            return
        prepared, future = entry
        try:
            outcome = prepared.outcome(code, response, raise_errors=False)
        except BaseException as exc:  # noqa: BLE001 - that request's outcome
            outcome = exc
        if future.done():
            return
        if isinstance(outcome, BaseException):
            future.set_exception(outcome)
        else:
            future.set_result(outcome)

    def _timer_expired(self) -> None:
        self._timer = None
        self._act(_SOCKET_TIMEOUT, 0)

    def _act(self, fd: int, events: int) -> None:
        if self._paused:
            return   # resume() calls the batch once it reads again
        if not self._batch.closed:
            _lib.lib().hc_batch_socket_action(self._batch, fd, events, None)


__all__ = ["LoopDriver"]
