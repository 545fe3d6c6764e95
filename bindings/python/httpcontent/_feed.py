"""How a streaming iterator gets its batches from a transfer while the body arrives, in bounded
memory: stepped on the consumer's own thread, the next step taken once the batches are
(`drained`, for `iter_json` and `iter_xml`, whose batches are small and costly to make); from
a worker thread through a bounded queue (`ThreadFeed`, for `iter_lines`, whose one batch per
round of reads grows to all the socket holds when stepped (+15% CPU, measured),
`iter_json_lines` (no faster stepped), `iter_events`, which reconnects, and the per-item
iterators with a schema); or on the event
loop itself, the socket left unread while the consumer is behind (`LoopFeed`, for
`aiter_json` and `aiter_events`).

Imports nothing of the package: the iterators hand in their transfers."""

from __future__ import annotations

import asyncio
import collections
import itertools
import queue
import sys
import threading
import weakref
from typing import Any, AsyncIterator, Callable, Generator, Generic, Iterable, Iterator, Protocol, TypeVar, cast

T = TypeVar("T")


class ThreadFeed(Generic[T]):
    """A bounded queue from a worker thread running one transfer to the consuming generator.
    The worker's callbacks `put` each batch (blocking while `size` wait); leaving the consumer
    makes `put` return False at once, and the callback then stops the transfer."""

    def __init__(self, size: int) -> None:
        self._items: queue.Queue[object] = queue.Queue(maxsize=max(1, size))
        self._stopping = threading.Event()
        self._done = object()
        self._failure: list[BaseException] = []
        self._worker: threading.Thread | None = None

    def put(self, item: T) -> bool:
        """Hands `item` over; False once the consumer has gone (the transfer should stop)."""
        return self._put(item)

    def _put(self, item: object) -> bool:
        while not self._stopping.is_set():
            try:
                self._items.put(item, timeout=0.1)
                return True
            except queue.Full:
                continue
        return False

    def run(self, transfer: Callable[[], object]) -> None:
        """Starts `transfer` in the worker thread; its exception is re-raised by `batches`."""
        def target() -> None:
            try:
                transfer()
            except BaseException as exc:  # noqa: BLE001 - re-raised in the consumer
                self._failure.append(exc)
            finally:
                self._put(self._done)
        self._worker = threading.Thread(target=target, daemon=True)
        self._worker.start()

    def batches(self, before_stop: Callable[[], object] | None = None) -> Iterator[T]:
        """The batches in order, then the transfer's exception if it failed. Leaving early stops
        the worker (after `before_stop`, say a cancellation that ends a wait at once) and waits
        for it."""
        try:
            while True:
                item = self._items.get()
                if item is self._done:
                    break
                yield cast(T, item)  # put() takes only T
            if self._failure:
                raise self._failure[0]
        finally:
            if before_stop is not None and not self._failure:
                before_stop()
            self._stop()

    def _stop(self) -> None:
        self._stopping.set()
        while self._worker is not None and self._worker.is_alive():
            try:
                self._items.get_nowait()
            except queue.Empty:
                self._worker.join(0.05)


class Pausable(Protocol):
    """What a LoopFeed needs of the loop's driver (_aio.LoopDriver)."""

    def pause(self) -> None: ...

    def resume(self) -> None: ...


class LoopFeed(Generic[T]):
    """Batches from a transfer on the running event loop to an async consumer. Callbacks run on
    the loop's thread and `put` each batch; once `size` wait, the driver stops watching the
    socket (nothing more is read, TCP holds the server back) until the consumer catches up."""

    def __init__(self, driver: Pausable, size: int) -> None:
        self._driver = driver
        self._waiting: collections.deque[T] = collections.deque()
        self._arrived = asyncio.Event()
        self._limit = max(1, size)

    def put(self, item: T) -> int:
        """Keeps `item`; 0, the callback's "go on"."""
        self._waiting.append(item)
        self._arrived.set()
        if len(self._waiting) >= self._limit:
            self._driver.pause()
        return 0

    async def drain(self, transfer: asyncio.Future[Any]) -> AsyncIterator[T]:
        """Yields the batches until `transfer` is done and none waits; the transfer's outcome
        (or error) is left in it."""
        while True:
            if self._waiting:
                item = self._waiting.popleft()
                if len(self._waiting) < self._limit:
                    self._driver.resume()
                yield item
                continue
            if transfer.done():
                return
            self._arrived.clear()
            waiter = asyncio.ensure_future(self._arrived.wait())
            try:
                await asyncio.wait({transfer, waiter}, return_when=asyncio.FIRST_COMPLETED)
            finally:
                waiter.cancel()


async def stop(transfer: asyncio.Future[Any] | None) -> None:
    """Cancels `transfer` if it still runs and waits for it to end (its error is ours)."""
    if transfer is None or transfer.done():
        return
    transfer.cancel()
    try:
        await transfer
    except BaseException:  # noqa: BLE001 - ours: the transfer was stopped
        pass


# Callbacks run on the consumer's thread (the main one, often) whose exceptions are kept: a
# signal's handler (Ctrl-C's KeyboardInterrupt) may run at a callback's first instruction,
# before any `try` in it, and ctypes then hands the exception to sys.unraisablehook and goes
# on. The hook installed by `watch` puts those of watched callbacks into their request's list
# instead (Client._stepped raises it after the step); any other goes to the hook it replaced.
_watched: weakref.WeakKeyDictionary[Callable[..., Any], list[BaseException]] = weakref.WeakKeyDictionary()
_previous_hook: Callable[[Any], Any] | None = None


def watch(callback: Callable[..., Any], sink: list[BaseException] | None) -> None:
    """Keeps in `sink` an exception raised in `callback` that ctypes could not pass on."""
    global _previous_hook
    if sink is None:
        return
    if _previous_hook is None:
        _previous_hook = sys.unraisablehook
        sys.unraisablehook = _unraisable
    _watched[callback] = sink


def _unraisable(unraisable: Any) -> None:
    try:
        sink = _watched.get(unraisable.object)
    except TypeError:   # not hashable: not ours
        sink = None
    if sink is not None and unraisable.exc_value is not None:
        sink.append(unraisable.exc_value)
        return
    (_previous_hook or sys.__unraisablehook__)(unraisable)


def drained(steps: Generator[None, None, Any], waiting: collections.deque[T]) -> Generator[T, None, None]:
    """What a transfer's callbacks leave in `waiting`, in order, as the transfer is stepped on
    this thread (`steps`: Client._stepped, whose callbacks run while it is resumed): the next
    step is taken only once `waiting` is empty, so nothing more is read meanwhile (TCP holds
    the server back), and no worker thread hands the GIL back and forth per batch. Then the
    transfer's error, if any. Closing it early closes `steps`, which stops the transfer."""
    try:
        for _ in steps:
            while waiting:
                yield waiting.popleft()
    finally:
        steps.close()


class _Chained(itertools.chain[T]):
    """The items of the batches a generator yields, one by one at C speed (itertools.chain: no
    Python frame resumed per item), closable as the generator is (`close()` stops the
    transfer). Made by `chained(batches)`."""

    __slots__ = ("_batches",)
    _batches: Generator[Iterable[T], None, None]

    def close(self) -> None:
        """Stops the transfer (as closing the generator of a `for` loop left early does)."""
        self._batches.close()


def chained(batches: Generator[Iterable[T], None, None]) -> Iterator[T]:
    """The items of `batches`' batches, one by one; `close()` closes `batches`."""
    made = cast("_Chained[T]", _Chained.from_iterable(batches))
    made._batches = batches  # pyright: ignore[reportPrivateUsage]
    return made


__all__ = ["ThreadFeed", "LoopFeed", "stop", "chained", "drained"]
