"""Record streams: bodies that are a stream of records, each handed over as soon as it is
complete however the body is cut into chunks. Text lines (`hc.Lines`, `client.iter_lines`),
JSON records (`hc.JSONLines`, `client.iter_json_lines`: JSON Lines / NDJSON, RFC 7464 JSON text
sequences, concatenated JSON) and Server-Sent Events (`hc.SSE`, `client.iter_events`,
`client.aiter_events`, with reconnection)."""

from __future__ import annotations

import asyncio
import collections
import ctypes
import marshal
import queue
import threading
from typing import Any, AsyncIterator, Awaitable, Callable, Iterator

from . import _ffi
from ._aio import LoopDriver
from ._handle import Handle
from .errors import Error, check, last_error
from .handlers import Discard, Handler
from .models import CancelToken, Request

_STOP = -1  # HC_RECORDS_STOP


class _Options(ctypes.Structure):
    """hc_records_options, version 1."""
    _fields_ = [("version", ctypes.c_uint), ("max_line_size", ctypes.c_size_t),
                ("max_record_size", ctypes.c_size_t), ("framing", ctypes.c_int),
                ("skip_bad_records", ctypes.c_int), ("strict", ctypes.c_int),
                ("reconnect", ctypes.c_int), ("max_reconnects", ctypes.c_uint),
                ("retry_ms", ctypes.c_uint), ("max_retry_ms", ctypes.c_uint),
                ("batch_bytes", ctypes.c_size_t)]


_BATCH_CB = ctypes.CFUNCTYPE(ctypes.c_int, ctypes.c_void_p, ctypes.c_void_p, ctypes.c_size_t, ctypes.c_size_t)
_SKIP_CB = ctypes.CFUNCTYPE(ctypes.c_int, ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int64, ctypes.c_char_p)
_EVENT_CB = ctypes.CFUNCTYPE(ctypes.c_int, ctypes.c_void_p, ctypes.c_void_p, ctypes.c_size_t, ctypes.c_void_p,
                             ctypes.c_size_t, ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int64)
_COMMENT_CB = ctypes.CFUNCTYPE(ctypes.c_int, ctypes.c_void_p, ctypes.c_void_p, ctypes.c_size_t)

for _name, _res, _args in [
    ("hc_records_options_init", ctypes.c_int, [ctypes.POINTER(_Options), ctypes.c_uint]),
    ("hc_handler_lines_batches_new", ctypes.c_void_p, [_BATCH_CB, ctypes.c_void_p, ctypes.POINTER(_Options)]),
    ("hc_handler_json_lines_pymarshal_new", ctypes.c_void_p, [_BATCH_CB, _SKIP_CB, ctypes.c_void_p,
                                                              ctypes.POINTER(_Options)]),
    ("hc_handler_sse_new", ctypes.c_void_p, [_EVENT_CB, _COMMENT_CB, ctypes.c_void_p, ctypes.POINTER(_Options)]),
    ("hc_client_events", ctypes.c_int, [ctypes.c_void_p, ctypes.c_void_p, _EVENT_CB, _COMMENT_CB, ctypes.c_void_p,
                                        ctypes.POINTER(_Options), ctypes.POINTER(ctypes.c_size_t)]),
    ("hc_event_source_new", ctypes.c_void_p, [_EVENT_CB, _COMMENT_CB, ctypes.c_void_p, ctypes.POINTER(_Options)]),
    ("hc_event_source_free", None, [ctypes.c_void_p]),
    ("hc_event_source_handler", ctypes.c_void_p, [ctypes.c_void_p]),
    ("hc_event_source_next", ctypes.c_int, [ctypes.c_void_p, ctypes.c_int, ctypes.POINTER(ctypes.c_int64)]),
    ("hc_response_records", ctypes.c_int, [ctypes.c_void_p, ctypes.POINTER(ctypes.c_size_t),
                                           ctypes.POINTER(ctypes.c_size_t)]),
]:
    _ffi.declare(_name, _res, _args)

_FRAMINGS = {"lines": 0, "ndjson": 0, "jsonl": 0, "seq": 1, "json-seq": 1, "concatenated": 2}


def _options(*, max_line_size: int | None = None, max_record_size: int | None = None,
             framing: str = "lines", skip_bad: bool = False, strict: bool = True,
             reconnect: bool = False, max_reconnects: int = 10, retry: float = 3.0,
             max_retry: float = 30.0, batch_bytes: int | None = None) -> _Options:
    opts = _Options()
    check(_ffi.lib().hc_records_options_init(ctypes.byref(opts), 1))
    for name, value in (("max_line_size", max_line_size), ("max_record_size", max_record_size),
                        ("batch_bytes", batch_bytes)):
        if value is not None:
            if value < 0:
                raise ValueError(f"{name} cannot be negative")
            setattr(opts, name, int(value))
    if framing not in _FRAMINGS:
        raise ValueError(f"framing must be one of {', '.join(sorted(_FRAMINGS))}")
    if retry < 0 or max_retry < 0 or max_reconnects < 0:
        raise ValueError("reconnection settings cannot be negative")
    opts.framing = _FRAMINGS[framing]
    opts.skip_bad_records = int(skip_bad)
    opts.strict = int(strict)
    opts.reconnect = int(reconnect)
    opts.max_reconnects = int(max_reconnects)
    opts.retry_ms = int(retry * 1000)
    opts.max_retry_ms = int(max_retry * 1000)
    return opts


def _records_count(response_ptr: int) -> int:
    count = ctypes.c_size_t()
    check(_ffi.lib().hc_response_records(response_ptr, ctypes.byref(count), None))
    return count.value


def _text(ptr: int | None, size: int) -> str:
    return ctypes.string_at(ptr, size).decode("utf-8", "surrogateescape") if size else ""


# -- lines

class Lines(Handler):
    """Calls `on_line(line)` with each text line as it arrives: decoded from the Content-Type's
    charset (UTF-8 when none), split at CR, LF or CRLF (also when a chunk ends between CR and
    LF), without the terminator; empty lines kept, a last unterminated line kept. `on_line` may
    return True to stop. `max_line_size` (bytes, default 1 MiB) fails longer lines with
    `hc.TooLarge`; `strict=False` turns invalid bytes into U+FFFD instead of `hc.DecodeError`.
    Content: the number of lines. Accepts 200-299, any type."""

    _shared = True

    def __init__(self, on_line: Callable[[str], Any], *, max_line_size: int | None = None,
                 strict: bool = True, **options: Any) -> None:
        super().__init__(**options)
        self.on_line = on_line
        self._opts = dict(max_line_size=max_line_size, strict=strict)

    def _new_native(self, sink: list[BaseException] | None = None) -> int:
        def on_batch(_userdata, data, size, count):
            def run():
                for line in _split_batch(data, size, count):
                    if self.on_line(line) is True:
                        return _STOP
                return 0
            return self._guard(run, sink)
        self._keep = _BATCH_CB(on_batch)
        opts = _options(**self._opts)
        return _ffi.lib().hc_handler_lines_batches_new(self._keep, None, ctypes.byref(opts))

    def _content(self, response_ptr: int) -> int:
        return _records_count(response_ptr)


def _split_batch(data: int | None, size: int, count: int) -> list[str]:
    if count == 1 and size == 0:
        return [""]
    return ctypes.string_at(data, size).decode("utf-8").split("\n")


# -- JSON records

class JSONLines(Handler):
    """Calls `on_item(value)` with each JSON record as soon as it is parsed (yajl, as the bytes
    arrive), values as `json.loads` gives them (integers exact at any size). `framing`:
    "lines" (JSON Lines / NDJSON, blank lines skipped, CRLF allowed), "seq" (RFC 7464
    application/json-seq: truncated top-level values detected) or "concatenated" (`{..}{..}`).
    A bad record raises `hc.DecodeError` with `.record_index` and `.offset`; with
    `skip_bad=True` it goes to `on_skip(error)` (if given) and the stream goes on. `on_item` may
    return True to stop. `max_record_size` (bytes, default 16 MiB). Records cross from the
    library in batches. Content: the number of records delivered. Accepts 200-299 and
    application/x-ndjson, application/jsonl, application/json-seq, application/json."""

    _any_type_by_default = False
    _shared = True

    def __init__(self, on_item: Callable[[Any], Any], *, framing: str = "lines", skip_bad: bool = False,
                 on_skip: Callable[[Error], Any] | None = None, max_record_size: int | None = None,
                 **options: Any) -> None:
        super().__init__(**options)
        self.on_item = on_item
        self.on_skip = on_skip
        self._opts = dict(framing=framing, skip_bad=skip_bad, max_record_size=max_record_size)
        _options(**self._opts)  # checks them now

    def _new_native(self, sink: list[BaseException] | None = None) -> int:
        def on_batch(_userdata, data, size, _count):
            def run():
                for value in marshal.loads((ctypes.c_char * size).from_address(data)):
                    if self.on_item(value) is True:
                        return _STOP
                return 0
            return self._guard(run, sink)

        def on_skip(_userdata, index, offset, message):
            def run():
                if self.on_skip is not None:
                    self.on_skip(_skip_error(index, offset, message))
                return 0
            return self._guard(run, sink)

        self._keep = (_BATCH_CB(on_batch), _SKIP_CB(on_skip))
        opts = _options(**self._opts)
        return _ffi.lib().hc_handler_json_lines_pymarshal_new(self._keep[0], self._keep[1], None, ctypes.byref(opts))

    def _content(self, response_ptr: int) -> int:
        return _records_count(response_ptr)


def _skip_error(index: int, offset: int, message: bytes | None) -> Error:
    from .errors import DecodeError
    return DecodeError((message or b"").decode("utf-8", "replace"), offset=offset if offset >= 0 else None,
                       record_index=index)


# -- Server-Sent Events

class ServerSentEvent:
    """One event, with httpx-sse's names: `event` ("message" when unset), `data` (data lines
    joined with "\\n"), `id` (the last event ID, "" when none), `retry` (ms, or None)."""

    __slots__ = ("event", "data", "id", "retry")

    def __init__(self, event: str = "message", data: str = "", id: str = "", retry: int | None = None) -> None:
        self.event = event or "message"
        self.data = data
        self.id = id
        self.retry = retry

    def json(self) -> Any:
        import json
        return json.loads(self.data)

    def __eq__(self, other: object) -> bool:
        return (isinstance(other, ServerSentEvent) and (self.event, self.data, self.id, self.retry)
                == (other.event, other.data, other.id, other.retry))

    def __repr__(self) -> str:
        return f"ServerSentEvent(event={self.event!r}, data={self.data!r}, id={self.id!r}, retry={self.retry!r})"


def _event(event, event_len, data, data_len, id_, id_len, retry) -> ServerSentEvent:
    return ServerSentEvent(_text(event, event_len), _text(data, data_len), _text(id_, id_len),
                           None if retry < 0 else retry)


class SSE(Handler):
    """Server-Sent Events (text/event-stream) as the WHATWG standard reads them, one connection:
    calls `on_event(event)` (a `ServerSentEvent`) as soon as each event's blank line arrives, and
    `on_comment(text)` with each comment line (keep-alives). Either may return True to stop.
    `max_line_size` (default 1 MiB) and `max_event_size` (default 16 MiB) fail larger ones with
    `hc.TooLarge`. For reconnection use `client.iter_events(url, reconnect=True)`. Content: the
    number of events. Accepts 200 and 204 (no events) with text/event-stream."""

    _any_type_by_default = False
    _shared = True

    def __init__(self, on_event: Callable[[ServerSentEvent], Any], *,
                 on_comment: Callable[[str], Any] | None = None, max_line_size: int | None = None,
                 max_event_size: int | None = None, **options: Any) -> None:
        super().__init__(**options)
        self.on_event = on_event
        self.on_comment = on_comment
        self._opts = dict(max_line_size=max_line_size, max_record_size=max_event_size)

    def _new_native(self, sink: list[BaseException] | None = None) -> int:
        def on_event(_userdata, event, event_len, data, data_len, id_, id_len, retry):
            def run():
                stop = self.on_event(_event(event, event_len, data, data_len, id_, id_len, retry))
                return _STOP if stop is True else 0
            return self._guard(run, sink)

        def on_comment(_userdata, text, size):
            def run():
                if self.on_comment is None:
                    return 0
                return _STOP if self.on_comment(_text(text, size)) is True else 0
            return self._guard(run, sink)

        self._keep = (_EVENT_CB(on_event), _COMMENT_CB(on_comment))
        opts = _options(**self._opts)
        return _ffi.lib().hc_handler_sse_new(self._keep[0], self._keep[1], None, ctypes.byref(opts))

    def _content(self, response_ptr: int) -> int:
        return _records_count(response_ptr)


# -- iterators: the transfer in a worker thread, a bounded queue between it and the caller

class _Pipe:
    """A bounded queue from a worker thread running one transfer (or event stream) to the
    consumer; stopping the iteration stops the worker at its next callback."""

    def __init__(self, size: int) -> None:
        self.items: queue.Queue = queue.Queue(maxsize=max(1, size))
        self.stopping = threading.Event()
        self.done = object()
        self.failure: list[BaseException] = []
        self.worker: threading.Thread | None = None

    def put(self, item: Any) -> bool:
        """False once the consumer has gone (the transfer should stop)."""
        while not self.stopping.is_set():
            try:
                self.items.put(item, timeout=0.1)
                return True
            except queue.Full:
                continue
        return False

    def run(self, body: Callable[[], Any]) -> None:
        def target() -> None:
            try:
                body()
            except BaseException as exc:  # noqa: BLE001 - re-raised in the consumer
                self.failure.append(exc)
            finally:
                self.put(self.done)
        self.worker = threading.Thread(target=target, daemon=True)
        self.worker.start()

    def stop(self) -> None:
        self.stopping.set()
        while self.worker is not None and self.worker.is_alive():
            try:
                self.items.get_nowait()
            except queue.Empty:
                self.worker.join(0.05)


def _iterate(pipe: _Pipe, unpack: Callable[[Any], Iterator[Any]],
             before_stop: Callable[[], Any] | None = None) -> Iterator[Any]:
    try:
        while True:
            item = pipe.items.get()
            if item is pipe.done:
                break
            yield from unpack(item)
        if pipe.failure:
            raise pipe.failure[0]
    finally:
        if before_stop is not None:
            before_stop()
        pipe.stop()


def iter_lines(client: Any, url: str, *, method: str = "GET", max_line_size: int | None = None,
               strict: bool = True, buffer: int = 4, **kwargs: Any) -> Iterator[str]:
    """Yields each line (str, without its terminator) while the body arrives; see `Lines`."""
    pipe = _Pipe(buffer)
    handler_options = {k: kwargs.pop(k) for k in list(kwargs) if k in ("accept_status", "accept_types")}

    class _Feeder(Lines):
        def _new_native(self, sink=None):
            def on_batch(_userdata, data, size, count):
                return 0 if pipe.put(_split_batch(data, size, count)) else _STOP
            self._keep = _BATCH_CB(on_batch)
            opts = _options(**self._opts)
            return _ffi.lib().hc_handler_lines_batches_new(self._keep, None, ctypes.byref(opts))

    handler = _Feeder(lambda _line: None, max_line_size=max_line_size, strict=strict, **handler_options)
    pipe.run(lambda: client.request(method, url, handler=handler, **kwargs))
    try:
        yield from _iterate(pipe, iter)
    finally:
        handler.close()


def iter_json_lines(client: Any, url: str, *, method: str = "GET", framing: str = "lines",
                    skip_bad: bool = False, on_skip: Callable[[Error], Any] | None = None,
                    max_record_size: int | None = None, buffer: int = 4, **kwargs: Any) -> Iterator[Any]:
    """Yields each JSON record (as `json.loads` gives it) while the body arrives; see
    `JSONLines`. Bad records skipped with `skip_bad=True` go to `on_skip(error)` in order."""
    pipe = _Pipe(buffer)
    handler_options = {k: kwargs.pop(k) for k in list(kwargs) if k in ("accept_status", "accept_types")}

    class _Feeder(JSONLines):
        def _new_native(self, sink=None):
            def on_batch(_userdata, data, size, _count):
                return 0 if pipe.put(ctypes.string_at(data, size)) else _STOP

            def skip(_userdata, index, offset, message):
                return 0 if pipe.put(_skip_error(index, offset, message)) else _STOP
            self._keep = (_BATCH_CB(on_batch), _SKIP_CB(skip))
            opts = _options(**self._opts)
            return _ffi.lib().hc_handler_json_lines_pymarshal_new(self._keep[0], self._keep[1], None,
                                                                  ctypes.byref(opts))

    handler = _Feeder(lambda _v: None, framing=framing, skip_bad=skip_bad, max_record_size=max_record_size,
                      **handler_options)

    def unpack(item: Any) -> Iterator[Any]:
        if isinstance(item, Error):
            if on_skip is not None:
                on_skip(item)
            return iter(())
        return iter(marshal.loads(item))

    pipe.run(lambda: client.request(method, url, handler=handler, **kwargs))
    try:
        yield from _iterate(pipe, unpack)
    finally:
        handler.close()


def _run_events(client: Any, url: str, method: str, opts: _Options, kwargs: dict,
                on_event: Callable[[ServerSentEvent], bool], on_comment: Callable[[str], bool] | None,
                cancel: Any) -> int:
    """hc_client_events on this thread (reconnecting by option). The native request is made by
    the client's own `_prepare` (this module imports nothing of the client)."""

    raised: list[BaseException] = []

    def event_cb(_userdata, event, event_len, data, data_len, id_, id_len, retry):
        try:
            return 0 if on_event(_event(event, event_len, data, data_len, id_, id_len, retry)) else _STOP
        except BaseException as exc:  # noqa: BLE001 - re-raised below
            raised.append(exc)
            return 11

    def comment_cb(_userdata, text, size):
        try:
            return 0 if on_comment is None or on_comment(_text(text, size)) else _STOP
        except BaseException as exc:  # noqa: BLE001 - re-raised below
            raised.append(exc)
            return 11

    callbacks = (_EVENT_CB(event_cb), _COMMENT_CB(comment_cb))
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


def _event_options(reconnect: bool, max_reconnects: int, max_line_size: int | None,
                   max_event_size: int | None, retry: float, max_retry: float) -> _Options:
    return _options(max_line_size=max_line_size, max_record_size=max_event_size, reconnect=reconnect,
                    max_reconnects=max_reconnects, retry=retry, max_retry=max_retry)


def iter_events(client: Any, url: str, *, method: str = "GET", reconnect: bool = False,
                max_reconnects: int = 10, max_line_size: int | None = None, max_event_size: int | None = None,
                retry: float = 3.0, max_retry: float = 30.0, on_comment: Callable[[str], Any] | None = None,
                buffer: int = 16, **kwargs: Any) -> Iterator[ServerSentEvent]:
    """Yields each Server-Sent Event as it arrives. With `reconnect=True`, a stream that ends or
    breaks is asked for again after the reconnection time (the server's `retry:`, else `retry`
    seconds; at most `max_retry`, plus jitter) with `Last-Event-ID`, at most `max_reconnects`
    times; a 204 ends it. Another status or type raises as any handler does. Stopping the
    iteration stops the stream (also during a wait)."""
    opts = _event_options(reconnect, max_reconnects, max_line_size, max_event_size, retry, max_retry)
    pipe = _Pipe(buffer)
    token = kwargs.pop("cancel", None) or CancelToken()
    pipe.run(lambda: _run_events(client, url, method, opts, kwargs, pipe.put,
                                 None if on_comment is None else (lambda text: pipe.put(("comment", text))),
                                 token))

    def unpack(item: Any) -> Iterator[ServerSentEvent]:
        if isinstance(item, tuple):
            assert on_comment is not None
            on_comment(item[1])
            return iter(())
        return iter((item,))

    # Cancelling ends a reconnection wait at once (the worker may be sleeping in one).
    yield from _iterate(pipe, unpack, before_stop=lambda: token.cancel() if pipe.failure == [] else None)


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
                       reconnect: bool = False, max_reconnects: int = 10, max_line_size: int | None = None,
                       max_event_size: int | None = None, retry: float = 3.0, max_retry: float = 30.0,
                       on_comment: Callable[[str], Any] | None = None, buffer: int = 16,
                       **kwargs: Any) -> AsyncIterator[ServerSentEvent]:
    """`iter_events` on the running event loop, with no thread: each connection's socket is
    watched by the loop (`send(handler, driver, ...)` runs one, see Client.aiter_events), and
    the library's event source decides when to reconnect (as hc_client_events does). When
    `buffer` events wait for you, the loop stops reading the socket until you catch up.
    Leaving the loop early, or cancelling the task, cancels the transfer (or the wait)."""
    opts = _event_options(reconnect, max_reconnects, max_line_size, max_event_size, retry, max_retry)
    handler_options = {k: kwargs.pop(k) for k in list(kwargs) if k in ("accept_status", "accept_types")}
    loop = asyncio.get_running_loop()
    driver = LoopDriver(client, loop)
    waiting: collections.deque[ServerSentEvent | str] = collections.deque()
    arrived = asyncio.Event()
    limit = max(1, buffer)

    def keep(item: ServerSentEvent | str) -> int:
        waiting.append(item)
        arrived.set()
        if len(waiting) >= limit:
            driver.pause()
        return 0

    def event_cb(_userdata: int | None, event: int | None, event_len: int, data: int | None, data_len: int,
                 id_: int | None, id_len: int, retry_ms: int) -> int:
        return keep(_event(event, event_len, data, data_len, id_, id_len, retry_ms))

    def comment_cb(_userdata: int | None, text: int | None, size: int) -> int:
        return keep(_text(text, size)) if on_comment is not None else 0

    callbacks = (_EVENT_CB(event_cb), _COMMENT_CB(comment_cb))
    source = _EventSource(_ffi.lib().hc_event_source_new(callbacks[0], callbacks[1], None, ctypes.byref(opts)))
    handler = _Connections(source, **handler_options)
    transfer: asyncio.Future[Any] | None = None
    try:
        while True:
            transfer = asyncio.ensure_future(send(handler, driver, method=method, url=url, **kwargs))
            while True:
                if waiting:
                    item = waiting.popleft()
                    if len(waiting) < limit:
                        driver.resume()
                    if isinstance(item, str):
                        assert on_comment is not None
                        on_comment(item)
                    else:
                        yield item
                    continue
                if transfer.done():
                    break
                arrived.clear()
                waiter = asyncio.ensure_future(arrived.wait())
                try:
                    await asyncio.wait({transfer, waiter}, return_when=asyncio.FIRST_COMPLETED)
                finally:
                    waiter.cancel()
            failure = transfer.exception()
            code = 0 if failure is None else (failure.code if isinstance(failure, Error) and failure.code else 11)
            delay = ctypes.c_int64()
            rc = _ffi.lib().hc_event_source_next(source, code, ctypes.byref(delay))
            if rc == code and failure is not None:
                raise failure
            check(rc)
            if delay.value < 0:
                return
            await asyncio.sleep(delay.value / 1000)
    finally:
        if transfer is not None and not transfer.done():
            transfer.cancel()
            try:
                await transfer
            except BaseException:  # noqa: BLE001 - ours: the transfer was stopped
                pass
        driver.close()
        handler.close()
        source.close()
        del callbacks


__all__ = ["Lines", "JSONLines", "SSE", "ServerSentEvent", "iter_lines", "iter_json_lines", "iter_events",
           "aiter_events"]
