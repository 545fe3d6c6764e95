"""Raw bodies as they arrive: `client.iter_bytes` (stepped on your thread) and
`client.aiter_bytes` (on the event loop), requests' `iter_content` and httpx's `iter_bytes`
habit: each chunk as soon as it is read, or with `chunk_size` the body cut again into chunks of
exactly that size (the last may be shorter)."""

from __future__ import annotations

import collections
import ctypes
from typing import Any, AsyncGenerator, Callable, Generator, Iterable, cast

from . import _feed, _ffi
from ._aio import Send, loop_items
from ._feed import LoopFeed
from .handlers import Stream
from .models import Request

# The Stream options among an iterator's keyword arguments (the rest are the request's).
_HANDLER_OPTIONS = ("accept_status", "accept_types", "max_size")


class _Chunks(Stream):
    """A Stream handing each chunk to `put`; on the consumer's own thread (`watched`), a
    signal's exception raised at its callback's first instruction is kept too (_feed.watch)."""

    def __init__(self, put: Callable[[bytes], object], *, watched: bool, **options: Any) -> None:
        super().__init__(put, **options)
        self._watched = watched

    def _new_native(self, sink: list[BaseException] | None = None) -> int | None:
        write = self._write

        def on_chunk(_userdata: int | None, buf: int, size: int) -> int:
            def run() -> int:
                write(ctypes.string_at(buf, size))
                return 0
            return self._guard(run, sink)
        if self._watched:
            _feed.watch(on_chunk, sink)
        self._keep = _ffi.WRITE_CB(on_chunk)
        native: int | None = _ffi.lib().hc_handler_stream_cb_new(self._keep, None)
        return native


class _Rechunker:
    """Cuts chunks of any size into chunks of `size` bytes, keeping the rest for the next."""

    def __init__(self, size: int) -> None:
        self.size = size
        self._held = bytearray()

    def cut(self, chunk: bytes) -> list[bytes]:
        size = self.size
        if not self._held and len(chunk) == size:
            return [chunk]
        self._held += chunk
        whole = len(self._held) - len(self._held) % size
        out = [bytes(self._held[i:i + size]) for i in range(0, whole, size)]
        del self._held[:whole]
        return out

    def rest(self) -> list[bytes]:
        """The last, shorter chunk (once the body is complete)."""
        rest, self._held = bytes(self._held), bytearray()
        return [rest] if rest else []


def _check(chunk_size: int | None) -> _Rechunker | None:
    if chunk_size is None:
        return None
    size = cast(object, chunk_size)   # any object may come
    if isinstance(size, bool) or not isinstance(size, int) or size <= 0:
        raise ValueError("chunk_size must be a positive number of bytes, or None")
    return _Rechunker(size)


def iter_bytes(client: Any, url: str, chunk_size: int | None = None, *, method: str = "GET",
               **kwargs: Any) -> Generator[bytes, None, None]:
    """Yields the body's chunks as they are read (`chunk_size`: cut again to that size). The
    transfer runs on your thread, a step at a time while you take the chunks (Client._stepped:
    nothing is read while you hold the iterator, so at most one wake-up's reads wait). Closing
    it, or leaving a `for` loop, stops the transfer."""
    rechunker = _check(chunk_size)
    waiting: collections.deque[bytes] = collections.deque()
    options = {k: kwargs.pop(k) for k in list(kwargs) if k in _HANDLER_OPTIONS}
    handler = _Chunks(waiting.append, watched=True, **options)
    chunks = _stepped(client._stepped(Request(method, url, handler=handler, **kwargs)), waiting, handler)
    return chunks if rechunker is None else _recut(chunks, rechunker)


def _stepped(steps: Generator[None, None, Any], waiting: collections.deque[bytes],
             handler: Stream) -> Generator[bytes, None, None]:
    try:
        yield from _feed.drained(steps, waiting)
    finally:
        handler.close()


def _recut(chunks: Generator[bytes, None, None], rechunker: _Rechunker) -> Generator[bytes, None, None]:
    try:
        for chunk in chunks:
            yield from rechunker.cut(chunk)
        yield from rechunker.rest()
    finally:
        chunks.close()


def aiter_bytes(client: Any, send: Send, url: str, chunk_size: int | None = None, *, method: str = "GET",
                buffer: int = 8, **kwargs: Any) -> AsyncGenerator[bytes, None]:
    """`iter_bytes` on the running event loop, with no thread (`send` runs the transfer, see
    Client.aiter_bytes). When `buffer` chunks wait for you, the loop stops reading the socket
    until you catch up. Leaving early, or cancelling the task, stops the transfer."""
    rechunker = _check(chunk_size)
    options = {k: kwargs.pop(k) for k in list(kwargs) if k in _HANDLER_OPTIONS}

    def handler_of(feed: LoopFeed[bytes]) -> Stream:
        return _Chunks(feed.put, watched=False, **options)

    items: Callable[[bytes], Iterable[bytes]] = _alone if rechunker is None else rechunker.cut
    return loop_items(client, send, handler_of, items, buffer=buffer, method=method, url=url, options=kwargs,
                      tail=None if rechunker is None else rechunker.rest)


def _alone(chunk: bytes) -> tuple[bytes]:
    return (chunk,)


__all__ = ["iter_bytes", "aiter_bytes"]
