"""Record streams: bodies that are a stream of records, each handed over as soon as it is
complete however the body is cut into chunks. Text lines (`hc.Lines`, `client.iter_lines`),
JSON records (`hc.JSONLines`, `client.iter_json_lines`: JSON Lines / NDJSON, RFC 7464 JSON text
sequences, concatenated JSON; a path and a schema per record) and Server-Sent Events (`hc.SSE`,
`client.iter_events`, `client.aiter_events`, with reconnection)."""

from __future__ import annotations

import asyncio
import ctypes
import json
import marshal
from typing import TYPE_CHECKING, Any, AsyncGenerator, Awaitable, Callable, Generator, Iterable, Iterator

from . import _feed, _ffi
from . import _constants as _c
from . import bodies as _bodies  # noqa: F401  # pyright: ignore[reportUnusedImport] (declares hc_buffer_free)
from ._aio import LoopDriver, Send, loop_items
from ._feed import LoopFeed, ThreadFeed
from ._handle import Handle
from ._types import StatusSpec
from .errors import DecodeError, Error, check, last_error
from .handlers import Discard, Handler
from .jsoncontent import loads_iter as _loads_iter
from .models import CancelToken, Request

if TYPE_CHECKING:
    from .schema import Schema

_STOP = _c.HC_RECORDS_STOP
_SKIP_INVALID = _c.HC_SCHEMA_SKIP_INVALID


class _Options(ctypes.Structure):
    """hc_records_options, version 1."""
    _fields_ = [("version", ctypes.c_uint), ("max_line_size", ctypes.c_size_t),
                ("max_record_size", ctypes.c_size_t), ("framing", ctypes.c_int),
                ("skip_bad_records", ctypes.c_int), ("strict", ctypes.c_int),
                ("reconnect", ctypes.c_int), ("max_reconnects", ctypes.c_uint),
                ("retry_ms", ctypes.c_uint), ("max_retry_ms", ctypes.c_uint),
                ("batch_bytes", ctypes.c_size_t)]


_BATCH_CB = ctypes.CFUNCTYPE(ctypes.c_int, ctypes.c_void_p, ctypes.c_void_p, ctypes.c_size_t, ctypes.c_size_t)
_RECORD_CB = ctypes.CFUNCTYPE(ctypes.c_int, ctypes.c_void_p, ctypes.c_size_t, ctypes.c_void_p)
_SKIP_CB = ctypes.CFUNCTYPE(ctypes.c_int, ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int64, ctypes.c_char_p)
_EVENT_CB = ctypes.CFUNCTYPE(ctypes.c_int, ctypes.c_void_p, ctypes.c_void_p, ctypes.c_size_t, ctypes.c_void_p,
                             ctypes.c_size_t, ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int64)
_COMMENT_CB = ctypes.CFUNCTYPE(ctypes.c_int, ctypes.c_void_p, ctypes.c_void_p, ctypes.c_size_t)

_OPTIONS_P = ctypes.POINTER(_Options)
_DECLARATIONS: list[tuple[str, Any, list[Any]]] = [
    ("hc_records_options_init", ctypes.c_int, [_OPTIONS_P, ctypes.c_uint]),
    ("hc_handler_lines_pymarshal_new", ctypes.c_void_p, [_BATCH_CB, ctypes.c_void_p, _OPTIONS_P]),
    ("hc_handler_json_lines_pymarshal_new", ctypes.c_void_p, [_BATCH_CB, _SKIP_CB, ctypes.c_void_p, _OPTIONS_P]),
    ("hc_handler_json_lines_new", ctypes.c_void_p, [_RECORD_CB, _SKIP_CB, ctypes.c_void_p, _OPTIONS_P]),
    ("hc_handler_json_lines_set_path", ctypes.c_int, [ctypes.c_void_p, ctypes.c_char_p, ctypes.c_int]),
    ("hc_handler_json_set_schema", ctypes.c_int, [ctypes.c_void_p, ctypes.c_void_p, ctypes.c_int]),
    ("hc_json_serialize", ctypes.c_int, [ctypes.c_void_p, ctypes.c_int, ctypes.POINTER(ctypes.c_void_p),
                                         ctypes.POINTER(ctypes.c_size_t)]),
    ("hc_handler_free", None, [ctypes.c_void_p]),
    ("hc_handler_sse_new", ctypes.c_void_p, [_EVENT_CB, _COMMENT_CB, ctypes.c_void_p, _OPTIONS_P]),
    ("hc_client_events", ctypes.c_int, [ctypes.c_void_p, ctypes.c_void_p, _EVENT_CB, _COMMENT_CB, ctypes.c_void_p,
                                        _OPTIONS_P, ctypes.POINTER(ctypes.c_size_t)]),
    ("hc_event_source_new", ctypes.c_void_p, [_EVENT_CB, _COMMENT_CB, ctypes.c_void_p, _OPTIONS_P]),
    ("hc_event_source_free", None, [ctypes.c_void_p]),
    ("hc_event_source_handler", ctypes.c_void_p, [ctypes.c_void_p]),
    ("hc_event_source_next", ctypes.c_int, [ctypes.c_void_p, ctypes.c_int, ctypes.POINTER(ctypes.c_int64)]),
    ("hc_response_records", ctypes.c_int, [ctypes.c_void_p, ctypes.POINTER(ctypes.c_size_t),
                                           ctypes.POINTER(ctypes.c_size_t)]),
]
for _name, _res, _args in _DECLARATIONS:
    _ffi.declare(_name, _res, _args)

_FRAMINGS = {"lines": 0, "ndjson": 0, "jsonl": 0, "seq": 1, "json-seq": 1, "concatenated": 2, "auto": 3}
_HANDLER_OPTIONS = ("accept_status", "accept_types")


def _options(*, max_line_size: int | None = None, max_record_size: int | None = None,
             framing: str | None = None, skip_bad: bool = False, strict: bool = True,
             reconnect: bool = False, max_reconnects: int = 10, retry: float = 3.0,
             max_retry: float = 30.0, batch_bytes: int | None = None) -> _Options:
    """The library's defaults, changed where given (checked here, so errors come at once)."""
    opts = _Options()
    check(_ffi.lib().hc_records_options_init(ctypes.byref(opts), 1))
    for name, value in (("max_line_size", max_line_size), ("max_record_size", max_record_size),
                        ("batch_bytes", batch_bytes)):
        if value is not None:
            if value < 0:
                raise ValueError(f"{name} cannot be negative")
            setattr(opts, name, int(value))
    if framing is not None and framing not in _FRAMINGS:
        raise ValueError(f"framing must be one of {', '.join(sorted(_FRAMINGS))}")
    if retry < 0 or max_retry < 0 or max_reconnects < 0:
        raise ValueError("reconnection settings cannot be negative")
    if framing is not None:  # else the library's default, "auto"
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
    return ctypes.string_at(ptr, size).decode("utf-8", "surrogateescape") if size and ptr else ""


def _pop_handler_options(kwargs: dict[str, Any]) -> dict[str, Any]:
    """The handler's acceptance options among an iterator's keyword arguments (the rest are
    the request's)."""
    return {k: kwargs.pop(k) for k in list(kwargs) if k in _HANDLER_OPTIONS}


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
                 strict: bool = True, accept_status: Iterable[StatusSpec] | None = None,
                 accept_types: Iterable[str] | None = None, **options: Any) -> None:
        super().__init__(accept_status=accept_status, accept_types=accept_types, **options)
        self.on_line = on_line
        self._opts = _options(max_line_size=max_line_size, strict=strict)

    def _new_native(self, sink: list[BaseException] | None = None) -> int | None:
        def on_batch(lines: list[str]) -> int:
            def run() -> int:
                for line in lines:
                    if self.on_line(line) is True:
                        return _STOP
                return 0
            return self._guard(run, sink)
        return self._batches_native(on_batch)

    def _batches_native(self, on_batch: Callable[[list[str]], int]) -> int | None:
        """Lines in batches, each a marshal list of str made in the library (the splitting
        stays there: one marshal.loads per batch, no per-line work in Python)."""
        def call(_userdata: int | None, data: int | None, size: int, _count: int) -> int:
            # Read in place: the batch is valid during the call.
            lines: list[str] = marshal.loads((ctypes.c_char * size).from_address(data or 0))
            return on_batch(lines)
        self._keep = _BATCH_CB(call)
        native: int | None = _ffi.lib().hc_handler_lines_pymarshal_new(self._keep, None, ctypes.byref(self._opts))
        return native

    def _content(self, response_ptr: int) -> int:
        return _records_count(response_ptr)


# -- JSON records

class JSONLines(Handler):
    """Calls `on_item(value)` with each JSON record as soon as it is parsed (yajl, as the bytes
    arrive), values as `json.loads` gives them (integers exact at any size). `framing`:
    "auto" (the default: "seq" when the Content-Type is application/json-seq, else "lines"),
    "lines" (JSON Lines / NDJSON, blank lines skipped, CRLF allowed), "seq" (RFC 7464
    application/json-seq: truncated top-level values detected) or "concatenated" (`{..}{..}`).
    A bad record raises `hc.DecodeError` with `.record_index` and `.offset`; with
    `skip_bad=True` it goes to `on_skip(error)` (if given) and the stream goes on. `on_item` may
    return True to stop. `max_record_size` (bytes, default 16 MiB).

    `path` ("data.items.0": member names and array indices joined with dots) hands over the
    value at that path in each record instead; `schema` (an `hc.Schema`) checks each value
    handed over in the library. A record without the path, or invalid, raises `hc.DecodeError`
    (`hc.SchemaError` for the schema) with `.record_index` and `.offset`, or with
    `skip_invalid=True` goes to `on_skip`. With either, each record crosses as JSON text
    (values with a transformable format come back converted).

    Records cross from the library in batches. Content: the number of records delivered.
    Accepts 200-299 and application/x-ndjson, application/jsonl, application/json-seq,
    application/json."""

    _any_type_by_default = False
    _shared = True

    def __init__(self, on_item: Callable[[Any], Any], *, framing: str | None = None, skip_bad: bool = False,
                 on_skip: Callable[[Error], Any] | None = None, max_record_size: int | None = None,
                 path: str | None = None, schema: Schema | None = None, skip_invalid: bool = False,
                 accept_status: Iterable[StatusSpec] | None = None, accept_types: Iterable[str] | None = None,
                 **options: Any) -> None:
        super().__init__(accept_status=accept_status, accept_types=accept_types, **options)
        self.on_item = on_item
        self.on_skip = on_skip
        if skip_invalid and path is None and schema is None:
            raise ValueError("skip_invalid needs a path or a schema")
        self.path = path
        self.schema = schema
        self.skip_invalid = skip_invalid
        self._opts = _options(framing=framing, skip_bad=skip_bad, max_record_size=max_record_size)

    @property
    def _per_record(self) -> bool:
        """Whether records cross one by one as JSON text (a path or a schema needs the tree)."""
        return self.path is not None or self.schema is not None

    def _value(self, text: bytes) -> Any:
        return json.loads(text) if self.schema is None else self.schema.transform_text(text)

    def _new_native(self, sink: list[BaseException] | None = None) -> int | None:
        def on_values(values: Callable[[], Iterable[Any]]) -> int:
            def run() -> int:
                for value in values():
                    if self.on_item(value) is True:
                        return _STOP
                return 0
            return self._guard(run, sink)

        def on_skip(error: Error) -> int:
            def run() -> int:
                if self.on_skip is not None:
                    self.on_skip(error)
                return 0
            return self._guard(run, sink)

        if self._per_record:
            return self._records_native(lambda text: on_values(lambda: (self._value(text),)), on_skip)
        # Read in place: the batch is valid during the call.
        return self._batches_native(
            lambda data, size: on_values(lambda: _loads_iter((ctypes.c_char * size).from_address(data))), on_skip)

    def _batches_native(self, on_batch: Callable[[int, int], int], on_skip: Callable[[Error], int]) -> int | None:
        """Records written as marshal lists while parsed: `on_batch(address, size)`."""
        def batch(_userdata: int | None, data: int | None, size: int, _count: int) -> int:
            return on_batch(data or 0, size)

        def skip(_userdata: int | None, index: int, offset: int, message: bytes | None) -> int:
            return on_skip(_skip_error(index, offset, message))
        self._keep = (_BATCH_CB(batch), _SKIP_CB(skip))
        native: int | None = _ffi.lib().hc_handler_json_lines_pymarshal_new(self._keep[0], self._keep[1], None,
                                                                            ctypes.byref(self._opts))
        return native

    def _records_native(self, on_text: Callable[[bytes], int], on_skip: Callable[[Error], int]) -> int | None:
        """Each record (its value at the path), checked by the schema, as JSON text: `on_text(text)`."""
        lib = _ffi.lib()

        def record(_userdata: int | None, _index: int, node: int | None) -> int:
            out, size = ctypes.c_void_p(), ctypes.c_size_t()
            if lib.hc_json_serialize(node, 0, ctypes.byref(out), ctypes.byref(size)) != 0:
                return _c.HC_ECALLBACK
            try:
                text = ctypes.string_at(out.value or 0, size.value)
            finally:
                lib.hc_buffer_free(out)
            return on_text(text)

        def skip(_userdata: int | None, index: int, offset: int, message: bytes | None) -> int:
            return on_skip(_skip_error(index, offset, message))
        self._keep = (_RECORD_CB(record), _SKIP_CB(skip))
        ptr: int | None = lib.hc_handler_json_lines_new(self._keep[0], self._keep[1], None, ctypes.byref(self._opts))
        if not ptr:
            return None
        try:
            check(lib.hc_handler_json_lines_set_path(ptr, None if self.path is None else self.path.encode(),
                                                     int(self.skip_invalid)))
            if self.schema is not None:
                check(lib.hc_handler_json_set_schema(ptr, self.schema, _SKIP_INVALID if self.skip_invalid else 0))
        except BaseException:
            lib.hc_handler_free(ptr)
            raise
        return ptr

    def _content(self, response_ptr: int) -> int:
        return _records_count(response_ptr)


_records = _feed.chained


def _skip_error(index: int, offset: int, message: bytes | None) -> Error:
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
        return json.loads(self.data)

    def __eq__(self, other: object) -> bool:
        return (isinstance(other, ServerSentEvent) and (self.event, self.data, self.id, self.retry)
                == (other.event, other.data, other.id, other.retry))

    def __repr__(self) -> str:
        return f"ServerSentEvent(event={self.event!r}, data={self.data!r}, id={self.id!r}, retry={self.retry!r})"


def _event(event: int | None, event_len: int, data: int | None, data_len: int, id_: int | None, id_len: int,
           retry: int) -> ServerSentEvent:
    return ServerSentEvent(_text(event, event_len), _text(data, data_len), _text(id_, id_len),
                           None if retry < 0 else retry)


def _event_callbacks(on_event: Callable[[ServerSentEvent], int],
                     on_comment: Callable[[str], int]) -> tuple[Any, Any]:
    """The C callbacks of an event stream (keep them alive while it runs)."""
    def event_cb(_userdata: int | None, event: int | None, event_len: int, data: int | None, data_len: int,
                 id_: int | None, id_len: int, retry: int) -> int:
        return on_event(_event(event, event_len, data, data_len, id_, id_len, retry))

    def comment_cb(_userdata: int | None, text: int | None, size: int) -> int:
        return on_comment(_text(text, size))
    return _EVENT_CB(event_cb), _COMMENT_CB(comment_cb)


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
                 max_event_size: int | None = None, accept_status: Iterable[StatusSpec] | None = None,
                 accept_types: Iterable[str] | None = None, **options: Any) -> None:
        super().__init__(accept_status=accept_status, accept_types=accept_types, **options)
        self.on_event = on_event
        self.on_comment = on_comment
        self._opts = _options(max_line_size=max_line_size, max_record_size=max_event_size)

    def _new_native(self, sink: list[BaseException] | None = None) -> int | None:
        def on_event(event: ServerSentEvent) -> int:
            return self._guard(lambda: _STOP if self.on_event(event) is True else 0, sink)

        def on_comment(text: str) -> int:
            comment = self.on_comment
            if comment is None:
                return 0
            return self._guard(lambda: _STOP if comment(text) is True else 0, sink)

        self._keep = _event_callbacks(on_event, on_comment)
        native: int | None = _ffi.lib().hc_handler_sse_new(self._keep[0], self._keep[1], None, ctypes.byref(self._opts))
        return native

    def _content(self, response_ptr: int) -> int:
        return _records_count(response_ptr)


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
                       reconnect: bool = False, max_reconnects: int = 10, max_line_size: int | None = None,
                       max_event_size: int | None = None, retry: float = 3.0, max_retry: float = 30.0,
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
