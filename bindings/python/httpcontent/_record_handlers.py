"""The record handlers (`hc.Lines`, `hc.JSONLines`, `hc.SSE` and `ServerSentEvent`) and their
options (hc_records_options); the iterators over them are in records.py, the public module,
which re-exports these."""

from __future__ import annotations

import ctypes
import json
import marshal
from typing import TYPE_CHECKING, Any, Callable, Iterable

from . import _feed, _ffi
from . import _constants as _c
from . import bodies as _bodies  # noqa: F401  # pyright: ignore[reportUnusedImport] (declares hc_buffer_free)
from ._types import StatusSpec
from .errors import DecodeError, Error, check
from .handlers import Handler
from .json import loads_iter as _loads_iter

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

_FRAMINGS = {"lines": _c.HC_JSON_LINES, "ndjson": _c.HC_JSON_LINES, "jsonl": _c.HC_JSON_LINES,
             "seq": _c.HC_JSON_SEQ, "json-seq": _c.HC_JSON_SEQ,
             "concatenated": _c.HC_JSON_CONCATENATED, "auto": _c.HC_JSON_AUTO}


def _options(*, max_line_size: int | None = None, max_record_size: int | None = None,
             framing: str | None = None, skip_bad: bool = False, strict: bool = True,
             reconnect: bool = False, max_reconnects: int | None = None, retry: float | None = None,
             max_retry: float | None = None, batch_bytes: int | None = None) -> _Options:
    """The library's defaults, changed where given (checked here, so errors come at once)."""
    opts = _Options()
    check(_ffi.lib().hc_records_options_init(ctypes.byref(opts), _c.HC_RECORDS_OPTIONS_VERSION))
    for name, value in (("max_line_size", max_line_size), ("max_record_size", max_record_size),
                        ("batch_bytes", batch_bytes)):
        if value is not None:
            if value < 0:
                raise ValueError(f"{name} cannot be negative")
            setattr(opts, name, int(value))
    if framing is not None and framing not in _FRAMINGS:
        raise ValueError(f"framing must be one of {', '.join(sorted(_FRAMINGS))}")
    if any(v is not None and v < 0 for v in (retry, max_retry, max_reconnects)):
        raise ValueError("reconnection settings cannot be negative")
    if framing is not None:  # else the library's default, "auto"
        opts.framing = _FRAMINGS[framing]
    opts.skip_bad_records = int(skip_bad)
    opts.strict = int(strict)
    opts.reconnect = int(reconnect)
    if max_reconnects is not None:
        opts.max_reconnects = int(max_reconnects)
    if retry is not None:
        opts.retry_ms = int(retry * 1000)
    if max_retry is not None:
        opts.max_retry_ms = int(max_retry * 1000)
    return opts


def _records_count(response_ptr: int) -> int:
    count = ctypes.c_size_t()
    check(_ffi.lib().hc_response_records(response_ptr, ctypes.byref(count), None))
    return count.value


def _text(ptr: int | None, size: int) -> str:
    return ctypes.string_at(ptr, size).decode("utf-8", "surrogateescape") if size and ptr else ""


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
