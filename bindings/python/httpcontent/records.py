"""Record streams: bodies that are a stream of records, each handed over as soon as it is
complete however the body is cut into chunks. Text lines (`hc.Lines`, `client.iter_lines`),
JSON records (`hc.JSONLines`, `client.iter_json_lines`: JSON Lines / NDJSON, RFC 7464 JSON text
sequences, concatenated JSON; a path and a schema per record) and Server-Sent Events (`hc.SSE`,
`client.iter_events`, `client.aiter_events`, with reconnection)."""

from __future__ import annotations

import asyncio
import ctypes
import json
from typing import TYPE_CHECKING, Any, AsyncGenerator, Awaitable, Callable, Generator, Iterable, Iterator

from . import _feed, _ffi
from . import _constants as _c
from ._aio import LoopDriver, Send, loop_items
from ._feed import LoopFeed, ThreadFeed
from ._handle import Handle
from ._record_handlers import (SSE, JSONLines, Lines, ServerSentEvent, _event_callbacks, _options,
                               _Options, _records, _records_count, _STOP)
from .errors import Error, check, last_error
from .handlers import Discard, Handler
from .json import loads_iter as _loads_iter
from .models import CancelToken, Request

if TYPE_CHECKING:
    from .schema import Schema


_HANDLER_OPTIONS = ("accept_status", "accept_types")


def _pop_handler_options(kwargs: dict[str, Any]) -> dict[str, Any]:
    """The handler's acceptance options among an iterator's keyword arguments (the rest are
    the request's)."""
    return {k: kwargs.pop(k) for k in list(kwargs) if k in _HANDLER_OPTIONS}


# -- iterators: the transfer in a worker thread, a bounded queue between it and the caller

def iter_lines(client: Any, url: str, *, method: str = "GET", max_line_size: int | None = None,
               strict: bool = True, buffer: int = 4, **kwargs: Any) -> Iterator[str]:
    """Yields each line (str, without its terminator) while the body arrives; see `Lines`.
    The transfer starts at the first `next`; `close()` stops it."""
    return _records(_line_batches(client, url, method, max_line_size, strict, buffer, kwargs))


def _line_batches(client: Any, url: str, method: str, max_line_size: int | None, strict: bool, buffer: int,
                  kwargs: dict[str, Any]) -> Generator[list[str], None, None]:
    feed: ThreadFeed[list[str]] = ThreadFeed(buffer)

    class _Fed(Lines):
        def _new_native(self, sink: list[BaseException] | None = None) -> int | None:
            return self._batches_native(lambda lines: 0 if feed.put(lines) else _STOP)

    handler = _Fed(_ignore, max_line_size=max_line_size, strict=strict, **_pop_handler_options(kwargs))
    stop = _run(feed, client, method, url, handler, kwargs)
    try:
        yield from feed.batches(before_stop=stop)
    finally:
        handler.close()


def _run(feed: ThreadFeed[Any], client: Any, method: str, url: str, handler: Handler,
         kwargs: dict[str, Any]) -> Callable[[], None]:
    """Starts the request in the feed's worker, with a cancellation token (the caller's `cancel=`
    or a new one); returns what stops it at once, also while it waits on an idle connection
    (leaving the iterator early)."""
    token: CancelToken = kwargs.pop("cancel", None) or CancelToken()
    feed.run(lambda: client.request(method, url, handler=handler, cancel=token, **kwargs))
    return token.cancel


def _ignore(_item: Any) -> None:
    return None


def iter_json_lines(client: Any, url: str, *, method: str = "GET", framing: str | None = None,
                    skip_bad: bool = False, on_skip: Callable[[Error], Any] | None = None,
                    max_record_size: int | None = None, path: str | None = None, schema: Schema | None = None,
                    skip_invalid: bool = False, buffer: int = 4, **kwargs: Any) -> Iterator[Any]:
    """Yields each JSON record (as `json.loads` gives it) while the body arrives; see
    `JSONLines` (and its `path`, `schema`, `skip_invalid`). Bad or invalid records skipped go to
    `on_skip(error)` in order. The transfer starts at the first `next`; `close()` stops it."""
    return _records(_record_batches(client, url, method, framing, skip_bad, on_skip, max_record_size, path,
                                       schema, skip_invalid, buffer, kwargs))


def _record_batches(client: Any, url: str, method: str, framing: str | None, skip_bad: bool,
                    on_skip: Callable[[Error], Any] | None, max_record_size: int | None, path: str | None,
                    schema: Schema | None, skip_invalid: bool, buffer: int,
                    kwargs: dict[str, Any]) -> Generator[Iterable[Any], None, None]:
    handler_options = _pop_handler_options(kwargs)
    per_record = path is not None or schema is not None
    # Records one by one (a path or a schema) wait in larger numbers than batches.
    feed: ThreadFeed[bytes | Error] = ThreadFeed(buffer * 64 if per_record else buffer)

    class _Fed(JSONLines):
        def _new_native(self, sink: list[BaseException] | None = None) -> int | None:
            def put(item: bytes | Error) -> int:
                return 0 if feed.put(item) else _STOP
            if self._per_record:
                return self._records_native(put, put)
            return self._batches_native(lambda data, size: put(ctypes.string_at(data, size)), put)

    handler = _Fed(_ignore, framing=framing, skip_bad=skip_bad, max_record_size=max_record_size, path=path,
                   schema=schema, skip_invalid=skip_invalid, **handler_options)
    stop = _run(feed, client, method, url, handler, kwargs)
    try:
        for item in feed.batches(before_stop=stop):
            if isinstance(item, Error):
                if on_skip is not None:
                    on_skip(item)
            elif per_record:
                yield (handler._value(item),)
            else:
                yield _loads_iter(item)
    finally:
        handler.close()


def _run_events(client: Any, url: str, method: str, opts: _Options, kwargs: dict[str, Any],
                on_event: Callable[[ServerSentEvent], bool], on_comment: Callable[[str], bool] | None,
                cancel: CancelToken) -> int:
    """hc_client_events on this thread (reconnecting by option). The native request is made by
    the client's own `_prepare` (this module imports nothing of the client)."""
    raised: list[BaseException] = []

    def guard(call: Callable[[], bool]) -> int:
        try:
            return 0 if call() else _STOP
        except BaseException as exc:  # noqa: BLE001 - re-raised below
            raised.append(exc)
            return _c.HC_ECALLBACK

    callbacks = _event_callbacks(lambda event: guard(lambda: on_event(event)),
                                 lambda text: guard(lambda: on_comment is None or on_comment(text)))
    handler = Discard()
    try:
        prepared = client._prepare_native(Request(method, url, handler=handler, cancel=cancel, **kwargs), handler)
        with prepared.native as req:
            count = ctypes.c_size_t()
            code = _ffi.lib().hc_client_events(client, req, callbacks[0], callbacks[1], None, ctypes.byref(opts),
                                               ctypes.byref(count))
    finally:
        handler.close()
    if raised:
        raise raised[0]
    if prepared.raised:
        raise prepared.raised[0]
    if code:
        raise last_error()
    return count.value


def _event_options(reconnect: bool, max_reconnects: int | None, max_line_size: int | None,
                   max_event_size: int | None, retry: float | None, max_retry: float | None) -> _Options:
    return _options(max_line_size=max_line_size, max_record_size=max_event_size, reconnect=reconnect,
                    max_reconnects=max_reconnects, retry=retry, max_retry=max_retry)


def iter_events(client: Any, url: str, *, method: str = "GET", reconnect: bool = False,
                max_reconnects: int | None = None, max_line_size: int | None = None, max_event_size: int | None = None,
                retry: float | None = None, max_retry: float | None = None, on_comment: Callable[[str], Any] | None = None,
                buffer: int = 16, **kwargs: Any) -> Iterator[ServerSentEvent]:
    """Yields each Server-Sent Event as it arrives. With `reconnect=True`, a stream that ends or
    breaks is asked for again after the reconnection time (the server's `retry:`, else `retry`
    seconds; at most `max_retry`, plus jitter) with `Last-Event-ID`, at most `max_reconnects`
    times (None: the library's defaults, 3 s, 30 s and 10 times); a 204 ends it. Another status or type raises as any handler does. Stopping the
    iteration stops the stream (also during a wait)."""
    opts = _event_options(reconnect, max_reconnects, max_line_size, max_event_size, retry, max_retry)
    feed: ThreadFeed[ServerSentEvent | str] = ThreadFeed(buffer)
    token: CancelToken = kwargs.pop("cancel", None) or CancelToken()
    feed.run(lambda: _run_events(client, url, method, opts, kwargs, feed.put,
                                 None if on_comment is None else feed.put, token))
    # Leaving early cancels: that ends a reconnection wait at once (the worker may sleep in one).
    for item in feed.batches(before_stop=token.cancel):
        if isinstance(item, str):
            if on_comment is not None:
                on_comment(item)
        else:
            yield item


# -- on the event loop, no thread: one transfer each (aiter_events, which reconnects, below)

def aiter_lines(client: Any, send: Send, url: str, *, method: str = "GET", max_line_size: int | None = None,
                strict: bool = True, buffer: int = 4, **kwargs: Any) -> AsyncGenerator[str, None]:
    """`iter_lines` on the running event loop, with no thread (`send` runs the transfer, see
    Client.aiter_lines). When `buffer` batches wait for you, the loop stops reading the socket
    until you catch up. Leaving early, or cancelling the task, stops the transfer."""
    handler_options = _pop_handler_options(kwargs)

    def handler_of(feed: LoopFeed[list[str]]) -> Lines:
        class _Fed(Lines):
            def _new_native(self, sink: list[BaseException] | None = None) -> int | None:
                return self._batches_native(lambda lines: self._guard(lambda: feed.put(lines), sink))
        return _Fed(_ignore, max_line_size=max_line_size, strict=strict, **handler_options)

    return loop_items(client, send, handler_of, iter, buffer=buffer, method=method, url=url, options=kwargs)


def aiter_json_lines(client: Any, send: Send, url: str, *, method: str = "GET", framing: str = "lines",
                     skip_bad: bool = False, on_skip: Callable[[Error], Any] | None = None,
                     max_record_size: int | None = None, path: str | None = None, schema: Schema | None = None,
                     skip_invalid: bool = False, buffer: int = 4, **kwargs: Any) -> AsyncGenerator[Any, None]:
    """`iter_json_lines` on the running event loop, with no thread (see `aiter_lines`): the same
    options, bad or invalid records skipped going to `on_skip(error)` in order."""
    handler_options = _pop_handler_options(kwargs)
    per_record = path is not None or schema is not None
    value: Callable[[bytes], Any] = json.loads if schema is None else schema.transform_text

    def handler_of(feed: LoopFeed[bytes | Error]) -> JSONLines:
        class _Fed(JSONLines):
            def _new_native(self, sink: list[BaseException] | None = None) -> int | None:
                def put(item: bytes | Error) -> int:
                    return self._guard(lambda: feed.put(item), sink)
                if per_record:
                    return self._records_native(put, put)
                return self._batches_native(lambda data, size: put(ctypes.string_at(data, size)), put)
        return _Fed(_ignore, framing=framing, skip_bad=skip_bad, max_record_size=max_record_size, path=path,
                    schema=schema, skip_invalid=skip_invalid, **handler_options)

    def records_of(item: bytes | Error) -> Iterable[Any]:
        if isinstance(item, Error):   # a record skipped, in its place among the others
            if on_skip is not None:
                on_skip(item)
            return ()
        return (value(item),) if per_record else _loads_iter(item)

    # Records one by one (a path or a schema) wait in larger numbers than batches.
    return loop_items(client, send, handler_of, records_of, buffer=buffer * 64 if per_record else buffer,
                      method=method, url=url, options=kwargs)


# -- aiter_events: the connections on the event loop, no thread

class _EventSource(Handle):
    """hc_event_source: one stream's reconnection state in the library, for connections sent
    from the event loop."""

    @staticmethod
    def _free(ptr: int) -> None:
        _ffi.lib().hc_event_source_free(ptr)


class _Connections(Handler):
    """The handler of an event source's connections (they share its parser)."""

    _any_type_by_default = False
    _may_raise = False

    def __init__(self, source: _EventSource, **options: Any) -> None:
        super().__init__(**options)
        self._source = source

    def _new_native(self) -> int | None:
        native: int | None = _ffi.lib().hc_event_source_handler(self._source)
        return native

    def _content(self, response_ptr: int) -> int:
        return _records_count(response_ptr)


async def aiter_events(client: Any, send: Callable[..., Awaitable[Any]], url: str, *, method: str = "GET",
                       reconnect: bool = False, max_reconnects: int | None = None, max_line_size: int | None = None,
                       max_event_size: int | None = None, retry: float | None = None, max_retry: float | None = None,
                       on_comment: Callable[[str], Any] | None = None, buffer: int = 16,
                       **kwargs: Any) -> AsyncGenerator[ServerSentEvent, None]:
    """`iter_events` on the running event loop, with no thread: each connection's socket is
    watched by the loop (`send(handler, driver, ...)` runs one, see Client.aiter_events), and
    the library's event source decides when to reconnect (as hc_client_events does). When
    `buffer` events wait for you, the loop stops reading the socket until you catch up.
    Leaving the loop early, or cancelling the task, cancels the transfer (or the wait)."""
    opts = _event_options(reconnect, max_reconnects, max_line_size, max_event_size, retry, max_retry)
    handler_options = _pop_handler_options(kwargs)
    driver = LoopDriver(client, asyncio.get_running_loop())
    feed: LoopFeed[ServerSentEvent | str] = LoopFeed(driver, buffer)
    callbacks = _event_callbacks(feed.put, lambda text: 0 if on_comment is None else feed.put(text))
    source = _EventSource(_ffi.lib().hc_event_source_new(callbacks[0], callbacks[1], None, ctypes.byref(opts)))
    handler = _Connections(source, **handler_options)
    transfer: asyncio.Future[Any] | None = None
    try:
        while True:
            transfer = asyncio.ensure_future(send(handler, driver, method=method, url=url, **kwargs))
            async for item in feed.drain(transfer):
                if isinstance(item, str):
                    if on_comment is not None:
                        on_comment(item)
                else:
                    yield item
            failure = transfer.exception()
            code = 0 if failure is None else (failure.code if isinstance(failure, Error) and failure.code
                                              else _c.HC_ECALLBACK)
            delay = ctypes.c_int64()
            rc = _ffi.lib().hc_event_source_next(source, code, ctypes.byref(delay))
            if failure is not None and rc == code:
                raise failure
            check(rc)
            if delay.value < 0:
                return
            await asyncio.sleep(delay.value / 1000)
    finally:
        await _feed.stop(transfer)
        driver.close()
        handler.close()
        source.close()
        del callbacks


__all__ = ["Lines", "JSONLines", "SSE", "ServerSentEvent", "iter_lines", "iter_json_lines", "iter_events",
           "aiter_lines", "aiter_json_lines", "aiter_events"]
