"""A response whose head comes first and whose body is read as it arrives, as httpx's
`client.stream()` and requests' `stream=True` give it: `client.stream(method, url)` returns
once the status line and headers are in; the body is then taken with `iter_bytes()` or `read()`,
the transfer stepped on the caller's thread while it does (nothing is read while the caller
holds the response). Closing it, or leaving its `with` block, stops a transfer not yet done.
The adapters for requests and httpx (adapters.py) are built on it."""

from __future__ import annotations

import collections
from typing import Any, Generator, Iterator

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


__all__ = ["StreamedResponse", "stream"]
