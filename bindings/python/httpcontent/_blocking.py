"""Just enough of an event loop for a `LoopDriver` (_aio.py) to run on the caller's thread, for
`Client.map`: one poll(2) on the batch's descriptor, the driver's timer and its `call_soon`
steps. `map` then takes completions in arrays as `arequest` does (one library call per
wake-up, a request queued in one call with the others of its turn, small bodies copied into
`LoopResponse`s) instead of a ctypes callback and a prepared native request per request, and
libcurl's sockets are watched by the batch's epoll set: a wake-up runs the transfers whose
socket is ready, not every transfer of the batch (curl_multi_perform)."""

from __future__ import annotations

import collections
import heapq
import itertools
import select
import time
from typing import Any, Callable

_IN = select.POLLIN | select.POLLERR | select.POLLHUP


class TimerHandle:
    """What `call_soon` and `call_at` return: `cancel()` drops the call; `when()` its time."""

    __slots__ = ("_when", "_seq", "_callback", "_args", "cancelled")

    def __init__(self, when: float, seq: int, callback: Callable[..., Any], args: tuple[Any, ...]) -> None:
        self._when = when
        self._seq = seq
        self._callback = callback
        self._args = args
        self.cancelled = False

    def __lt__(self, other: TimerHandle) -> bool:
        return (self._when, self._seq) < (other._when, other._seq)

    def when(self) -> float:
        return self._when

    def cancel(self) -> None:
        self.cancelled = True

    def run(self) -> None:
        if not self.cancelled:
            self._callback(*self._args)


class BlockingLoop:
    """The loop methods a LoopDriver calls (`add_reader`, `remove_reader`, `call_soon`,
    `call_at`, `time`, `is_closed`), run by `run_until` on the calling thread. Not thread-safe:
    one thread uses it at a time (the one in `map`)."""

    def __init__(self) -> None:
        self._ready: collections.deque[TimerHandle] = collections.deque()
        self._timers: list[TimerHandle] = []
        self._readers: dict[int, Callable[[], Any]] = {}
        self._poll = select.poll()
        self._seq = itertools.count()
        self._closed = False

    def time(self) -> float:
        return time.monotonic()

    def is_closed(self) -> bool:
        return self._closed

    def close(self) -> None:
        self._closed = True
        for fd in list(self._readers):
            self.remove_reader(fd)
        self._ready.clear()
        self._timers.clear()

    def call_soon(self, callback: Callable[..., Any], *args: Any) -> TimerHandle:
        handle = TimerHandle(0.0, 0, callback, args)
        self._ready.append(handle)
        return handle

    def call_at(self, when: float, callback: Callable[..., Any], *args: Any) -> TimerHandle:
        handle = TimerHandle(when, next(self._seq), callback, args)
        heapq.heappush(self._timers, handle)
        return handle

    def add_reader(self, fd: int, callback: Callable[[], Any]) -> None:
        if fd in self._readers:
            self._poll.modify(fd, _IN)
        else:
            self._poll.register(fd, _IN)
        self._readers[fd] = callback

    def remove_reader(self, fd: int) -> bool:
        if self._readers.pop(fd, None) is None:
            return False
        self._poll.unregister(fd)
        return True

    def run_until(self, done: Callable[[], bool]) -> None:
        """Runs the ready calls, the readers whose descriptor is readable and the timers that
        are due, waiting in poll(2) (the GIL released) when there is nothing to run, until
        `done()` is true. An exception of a call stops it and propagates."""
        ready, timers = self._ready, self._timers
        while not done():
            for _ in range(len(ready)):   # those queued meanwhile wait for the next round
                ready.popleft().run()
            if done():
                return
            while timers and timers[0].cancelled:
                heapq.heappop(timers)
            if ready:
                timeout = 0
            elif timers:
                timeout = max(0, int((timers[0].when() - time.monotonic()) * 1000 + 0.999))
            elif self._readers:
                timeout = -1
            else:
                raise RuntimeError("httpcontent: map is waiting on nothing (no descriptor, no timer)")
            for fd, _ in self._poll.poll(timeout):
                reader = self._readers.get(fd)
                if reader is not None:
                    reader()
            now = time.monotonic()
            while timers and (timers[0].cancelled or timers[0].when() <= now):
                heapq.heappop(timers).run()


__all__ = ["BlockingLoop", "TimerHandle"]
