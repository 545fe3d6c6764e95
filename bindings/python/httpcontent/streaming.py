"""A response whose head comes first and whose body is read as it arrives, as httpx's
`client.stream()` and requests' `stream=True` give it: `client.stream(method, url)` returns
once the status line and headers are in; the body is then taken with `iter_bytes()` or `read()`,
the transfer stepped on the caller's thread while it does (nothing is read while the caller
holds the response). Closing it, or leaving its `with` block, stops a transfer not yet done.
The adapters for requests and httpx (adapters.py) are built on it."""

from __future__ import annotations

import asyncio
import collections
from typing import Any, AsyncIterator, Generator, Iterator

from . import _feed
from ._aio import LoopDriver
from ._feed import LoopFeed
from .chunks import _check
from .handlers import Handler, ResponseHead
from .models import Headers, Request, Response


class _HeadFirst(Handler):
    """Keeps the head when it is decided and each chunk until taken (one request at a time)."""

    def __init__(self, **options: Any) -> None:
        super().__init__(**options)
        self.head: ResponseHead | None = None
        self.waiting: collections.deque[bytes] = collections.deque()

    def accept(self, head: ResponseHead) -> bool:
        self.head = head
        return True

    def consume(self, chunk: bytes) -> None:
        self.waiting.append(chunk)


class StreamedResponse:
    """The head of a response whose body has not been read yet: `status`, `reason`,
    `http_version`, `headers`, `url`; the body with `iter_bytes(chunk_size=None)` (each chunk as
    it arrives, or cut again to `chunk_size`) or `read()`. Once the body is complete,
    `response` is the finished `hc.Response` (history, metrics). A transfer error raises from
    the call that reads the body. Use it in a `with` block or `close()` it."""

    def __init__(self, steps: Generator[None, None, Response], handler: _HeadFirst,
                 response: Response | None) -> None:
        head = handler.head
        assert head is not None or response is not None
        self._steps = steps
        self._handler = handler
        self.response = response
        if head is None:   # no body callback ran (a response with no body): from the response
            assert response is not None
            head = ResponseHead(response.status, response.headers, response.url, response.reason,
                                response.http_version)
        self.status: int = head.status
        self.reason: str = head.reason
        self.http_version: str = head.http_version
        self.headers: Headers = head.headers
        self.url: str = head.url
        self.is_closed = False

    @property
    def is_consumed(self) -> bool:
        """Whether the whole body has been read (or the transfer ended)."""
        return self.response is not None and not self._handler.waiting

    def iter_bytes(self, chunk_size: int | None = None) -> Iterator[bytes]:
        rechunker = _check(chunk_size)
        for chunk in self._chunks():
            if rechunker is None:
                yield chunk
            else:
                yield from rechunker.cut(chunk)
        if rechunker is not None:
            yield from rechunker.rest()

    def _chunks(self) -> Iterator[bytes]:
        waiting = self._handler.waiting
        while True:
            while waiting:
                yield waiting.popleft()
            if self.response is not None or self.is_closed:
                return
            try:
                next(self._steps)
            except StopIteration as done:
                self.response = done.value
            except BaseException:
                self.close()
                raise

    def read(self) -> bytes:
        return b"".join(self._chunks())

    def close(self) -> None:
        """Stops the transfer if it is still running and frees what it holds."""
        if not self.is_closed:
            self.is_closed = True
            self._steps.close()
            self._handler.waiting.clear()
            self._handler.close()

    def __enter__(self) -> StreamedResponse:
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()

    def __repr__(self) -> str:
        return f"<StreamedResponse [{self.status}]>"


def stream(client: Any, method: str, url: str, **kwargs: Any) -> StreamedResponse:
    """Sends the request and returns once its head is in (see `StreamedResponse`). Every status
    is returned, as httpx does (`accept_status=` to choose); `accept_types=`, `max_size=` and
    the request options as `client.request`."""
    options = {k: kwargs.pop(k) for k in ("accept_status", "accept_types", "max_size") if k in kwargs}
    options.setdefault("accept_status", [])
    handler = _HeadFirst(**options)
    steps = client._stepped(Request(method, url, handler=handler, **kwargs))
    response: Response | None = None
    try:
        while handler.head is None:
            next(steps)
    except StopIteration as done:
        response = done.value
    except BaseException:
        steps.close()
        handler.close()
        raise
    return StreamedResponse(steps, handler, response)


class _LoopHeadFirst(Handler):
    """The head into a future, each chunk into a LoopFeed (callbacks on the loop's thread)."""

    def __init__(self, head: asyncio.Future[ResponseHead], feed: LoopFeed[bytes], **options: Any) -> None:
        super().__init__(**options)
        self._head = head
        self._feed = feed

    def accept(self, head: ResponseHead) -> bool:
        if not self._head.done():
            self._head.set_result(head)
        return True

    def consume(self, chunk: bytes) -> None:
        self._feed.put(chunk)


class AsyncStreamedResponse:
    """`StreamedResponse` on the running event loop, with no thread (`await client.astream()`):
    the head at once, the body with `async for chunk in r.aiter_bytes()` or `await r.aread()`;
    at most `buffer` chunks wait for you (the loop then stops reading the socket). `aclose()`,
    or leaving its `async with` block, stops a transfer not yet done."""

    def __init__(self, head: ResponseHead, transfer: asyncio.Future[Any], feed: LoopFeed[bytes],
                 driver: LoopDriver, handler: Handler) -> None:
        self.status = head.status
        self.reason = head.reason
        self.http_version = head.http_version
        self.headers: Headers = head.headers
        self.url = head.url
        self.response: Response | None = None
        self._transfer = transfer
        self._feed = feed
        self._driver = driver
        self._handler = handler
        self.is_closed = False

    async def aiter_bytes(self, chunk_size: int | None = None) -> AsyncIterator[bytes]:
        rechunker = _check(chunk_size)
        try:
            async for chunk in self._feed.drain(self._transfer):
                if rechunker is None:
                    yield chunk
                else:
                    for piece in rechunker.cut(chunk):
                        yield piece
            self.response = self._transfer.result()   # raises the request's error
        except BaseException:
            await self.aclose()
            raise
        if rechunker is not None:
            for piece in rechunker.rest():
                yield piece

    async def aread(self) -> bytes:
        return b"".join([chunk async for chunk in self.aiter_bytes()])

    async def aclose(self) -> None:
        if not self.is_closed:
            self.is_closed = True
            await _feed.stop(self._transfer)
            self._driver.close()
            self._handler.close()

    async def __aenter__(self) -> AsyncStreamedResponse:
        return self

    async def __aexit__(self, *exc: Any) -> None:
        await self.aclose()

    def __repr__(self) -> str:
        return f"<AsyncStreamedResponse [{self.status}]>"


async def astream(client: Any, method: str, url: str, *, buffer: int = 8, **kwargs: Any) -> AsyncStreamedResponse:
    """`stream` on the running event loop (see `AsyncStreamedResponse`)."""
    options = {k: kwargs.pop(k) for k in ("accept_status", "accept_types", "max_size") if k in kwargs}
    options.setdefault("accept_status", [])
    loop = asyncio.get_running_loop()
    driver = LoopDriver(client, loop)
    feed: LoopFeed[bytes] = LoopFeed(driver, buffer)
    head: asyncio.Future[ResponseHead] = loop.create_future()
    handler = _LoopHeadFirst(head, feed, **options)
    transfer: asyncio.Future[Any] = asyncio.ensure_future(
        client._loop_send(handler, driver, method=method, url=url, **kwargs))
    try:
        await asyncio.wait({transfer, head}, return_when=asyncio.FIRST_COMPLETED)
        if not head.done():   # over before a head was decided: its error, or a response
            response: Response = transfer.result()
            head.set_result(ResponseHead(response.status, response.headers, response.url,
                                         response.reason, response.http_version))
    except BaseException:
        head.cancel()
        await _feed.stop(transfer)
        driver.close()
        handler.close()
        raise
    return AsyncStreamedResponse(head.result(), transfer, feed, driver, handler)


__all__ = ["StreamedResponse", "AsyncStreamedResponse", "stream", "astream"]
