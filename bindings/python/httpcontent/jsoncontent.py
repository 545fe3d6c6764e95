"""JSON: whole documents parsed by yajl as the bytes arrive, and path streaming (ijson-style
prefixes) that yields values one by one in bounded memory."""

from __future__ import annotations

import collections
import ctypes
import decimal
import gc
import json as _json
import marshal
from typing import Any, AsyncGenerator, Callable, Generator, Iterable, Iterator, cast

from . import _feed, _ffi
from . import _constants as _c
from ._aio import Send, loop_items
from ._feed import LoopFeed
from ._handle import Handle
from .errors import check
from .handlers import Handler
from .models import Request
from . import bodies as _bodies  # noqa: F401  # pyright: ignore[reportUnusedImport] (declares hc_buffer_free)

_ITEMS_BATCH_CB = ctypes.CFUNCTYPE(ctypes.c_int, ctypes.c_void_p, ctypes.c_size_t, ctypes.c_void_p,
                                   ctypes.c_size_t, ctypes.c_size_t)
_STOP = _c.HC_JSON_STOP

for _name, _res, _args in [
    ("hc_json_options_new", ctypes.c_void_p, []),
    ("hc_json_options_free", None, [ctypes.c_void_p]),
    ("hc_json_options_set", ctypes.c_int, [ctypes.c_void_p, ctypes.c_int, ctypes.c_int64]),
    ("hc_handler_json_new", ctypes.c_void_p, [ctypes.c_void_p]),
    ("hc_handler_json_batches_new", ctypes.c_void_p, [ctypes.POINTER(ctypes.c_char_p), ctypes.c_size_t,
                                                      ctypes.c_void_p, _ITEMS_BATCH_CB, ctypes.c_void_p]),
    ("hc_response_json", ctypes.c_void_p, [ctypes.c_void_p]),
    ("hc_response_json_items", ctypes.c_int, [ctypes.c_void_p, ctypes.POINTER(ctypes.c_size_t),
                                              ctypes.POINTER(ctypes.c_int)]),
    ("hc_json_serialize", ctypes.c_int, [ctypes.c_void_p, ctypes.c_int, ctypes.POINTER(ctypes.c_void_p),
                                         ctypes.POINTER(ctypes.c_size_t)]),
    ("hc_handler_json_pymarshal_new", ctypes.c_void_p, [ctypes.c_void_p]),
    ("hc_handler_json_batches_pymarshal_new", ctypes.c_void_p, [ctypes.POINTER(ctypes.c_char_p), ctypes.c_size_t,
                                                                ctypes.c_void_p, _ITEMS_BATCH_CB, ctypes.c_void_p]),
    ("hc_response_json_pymarshal", ctypes.c_int, [ctypes.c_void_p, ctypes.POINTER(ctypes.c_void_p),
                                                  ctypes.POINTER(ctypes.c_size_t)]),
    ("hc_response_json_format_annotations", ctypes.c_int, [ctypes.c_void_p, ctypes.POINTER(ctypes.c_void_p),
                                                           ctypes.POINTER(ctypes.c_size_t)]),
    ("hc_handler_json_items_new", ctypes.c_void_p, [ctypes.POINTER(ctypes.c_char_p), ctypes.c_size_t,
                                                    ctypes.c_void_p, ctypes.c_void_p, ctypes.c_void_p]),
    ("hc_handler_json_set_schema", ctypes.c_int, [ctypes.c_void_p, ctypes.c_void_p, ctypes.c_int]),
    ("hc_handler_free", None, [ctypes.c_void_p]),
]:
    _ffi.declare(_name, _res, _args)

_OPTIONS = {"remove_nulls": 1, "allow_comments": 2, "multiple_values": 3, "max_depth": 4,
            "max_size": 5, "strict_utf8": 6, "keep_number_text": 7, "allow_empty": 8,
            "limit": 9, "stop_when_closed": 10, "require_prefix": 11}


class _Options(Handle):
    @staticmethod
    def _free(ptr: int) -> None:
        _ffi.lib().hc_json_options_free(ptr)

    def __init__(self, **values: Any) -> None:
        super().__init__(_ffi.lib().hc_json_options_new())
        for name, value in values.items():
            if value is None:
                continue
            if name not in _OPTIONS:
                raise TypeError(f"unknown JSON option {name!r}")
            check(_ffi.lib().hc_json_options_set(self, _OPTIONS[name], int(value)))


class _GCPaused:
    """Pauses the cyclic garbage collector while a whole document's objects are made: they
    hold no cycles, and collections triggered by millions of new containers would otherwise
    rescan them over and over (a third of json.loads's time on large documents)."""

    def __enter__(self) -> None:
        self.was_enabled = gc.isenabled()
        gc.disable()

    def __exit__(self, *exc: Any) -> None:
        if self.was_enabled:
            gc.enable()


def _loads(text: bytes, keep_number_text: bool) -> Any:
    with _GCPaused():
        if keep_number_text:
            return _json.loads(text, parse_float=decimal.Decimal)
        return _json.loads(text)


class JSON(Handler):
    """Parses the body as JSON with yajl while it arrives, and gives plain Python objects
    (dict, list, str, int, float, bool, None). A malformed document raises `hc.DecodeError`
    (its message has the byte offset) as soon as the bad byte arrives. Options:
    `remove_nulls` (drop null members at every depth), `allow_comments`, `multiple_values`
    (NDJSON: a list of documents), `max_depth` (512), `max_size`, `strict_utf8` (True),
    `keep_number_text` (floats become `decimal.Decimal`, nothing is rounded), `allow_empty`.
    Content is None for an empty 204/HEAD response. Accepts 200-299 and application/json,
    text/json, text/javascript, */*+json."""

    _any_type_by_default = False
    _may_raise = False

    def __init__(self, *, remove_nulls: bool = False, allow_comments: bool = False,
                 multiple_values: bool = False, max_depth: int | None = None,
                 max_size: int | None = None, strict_utf8: bool = True,
                 keep_number_text: bool = False, allow_empty: bool = False,
                 schema: Any = None, all_errors: bool = False, **options: Any) -> None:
        super().__init__(**options)
        self.schema = schema
        self._schema_flags = 1 if all_errors else 0
        self._options = dict(remove_nulls=remove_nulls, allow_comments=allow_comments,
                             multiple_values=multiple_values, max_depth=max_depth,
                             max_size=max_size, strict_utf8=strict_utf8,
                             keep_number_text=keep_number_text, allow_empty=allow_empty)

    def _new_native(self) -> int | None:
        lib = _ffi.lib()
        with _Options(**self._options) as opts:
            ptr: int | None
            if self._options["keep_number_text"]:
                ptr = lib.hc_handler_json_new(opts)
            else:
                # Without keep_number_text, the document is written in Python's marshal format
                # while it is parsed (no tree), and marshal.loads makes the objects about three
                # times faster than json.loads would from text. With a schema, the tree is built,
                # validated, then written in marshal's format.
                ptr = lib.hc_handler_json_pymarshal_new(opts)
        if ptr and self.schema is not None:
            code = lib.hc_handler_json_set_schema(ptr, self.schema, self._schema_flags)
            if code:
                lib.hc_handler_free(ptr)
                check(code)
        return ptr

    def _content(self, response_ptr: int) -> Any:
        lib = _ffi.lib()
        if not self._options["keep_number_text"]:
            data, size = ctypes.c_void_p(), ctypes.c_size_t()
            check(lib.hc_response_json_pymarshal(response_ptr, ctypes.byref(data), ctypes.byref(size)))
            if not data.value:
                return None
            # Read in place: the bytes belong to the response, alive during this call.
            with _GCPaused():
                value = marshal.loads((ctypes.c_char * size.value).from_address(data.value))
            if self.schema is not None:
                check(lib.hc_response_json_format_annotations(response_ptr, ctypes.byref(data),
                                                              ctypes.byref(size)))
                if data.value:
                    value = self.schema._apply(value, ctypes.string_at(data, size.value))
            return value
        lib.hc_error_clear()
        tree = lib.hc_response_json(response_ptr)
        if not tree:
            check(lib.hc_error_code(lib.hc_error_last()))
            return None
        out, size = ctypes.c_void_p(), ctypes.c_size_t()
        check(lib.hc_json_serialize(tree, 0, ctypes.byref(out), ctypes.byref(size)))
        try:
            return _loads(ctypes.string_at(out, size.value), True)
        finally:
            lib.hc_buffer_free(out)


class JSONItems(Handler):
    """Path streaming: calls `on_item(value)` (or `on_item(prefix, value)` with several
    prefixes) with each value found under the ijson `prefix` — dot-joined keys, `item` for an
    array element, "" the whole document — as soon as it is parsed, keeping at most one batch of
    values in memory. Values cross from the library in batches (one call per batch, not per
    value). `limit` stops after that many values; `stop_when_closed` stops once the prefix can no
    longer match; `require_prefix` makes a prefix that never appears a `hc.DecodeError`.
    `on_item` may return True to stop early. Content: the number of values delivered."""

    _any_type_by_default = False
    _shared = True

    def __init__(self, prefix: str | Iterable[str], on_item: Callable[..., Any], *,
                 limit: int | None = None, stop_when_closed: bool = False,
                 require_prefix: bool = False, multiple_values: bool = False,
                 allow_comments: bool = False, max_depth: int | None = None,
                 max_size: int | None = None, **options: Any) -> None:
        super().__init__(**options)
        self.prefixes = [prefix] if isinstance(prefix, str) else list(prefix)
        if not self.prefixes:
            raise ValueError("JSONItems needs at least one prefix")
        self.on_item = on_item
        self._options = dict(limit=limit, stop_when_closed=stop_when_closed,
                             require_prefix=require_prefix, multiple_values=multiple_values,
                             allow_comments=allow_comments, max_depth=max_depth, max_size=max_size)

    def _new_native(self, sink: list[BaseException] | None = None) -> int | None:
        several = len(self.prefixes) > 1

        def on_batch(_userdata: int | None, prefix_index: int, data: int, size: int,
                     _count: int) -> int:
            def run() -> int:
                # One list in marshal's format per batch (read in place: valid during the call).
                for value in batch_values(marshal.loads((ctypes.c_char * size).from_address(data))):
                    stop = (self.on_item(self.prefixes[prefix_index], value) if several
                            else self.on_item(value))
                    if stop is True:
                        return _STOP
                return 0
            return self._guard(run, sink)

        self._keep = _ITEMS_BATCH_CB(on_batch)
        names = (ctypes.c_char_p * len(self.prefixes))(*[p.encode() for p in self.prefixes])
        with _Options(**self._options) as opts:
            native: int | None = _ffi.lib().hc_handler_json_batches_pymarshal_new(
                names, len(self.prefixes), opts, self._keep, None)
            return native

    def _content(self, response_ptr: int) -> int:
        count = ctypes.c_size_t()
        check(_ffi.lib().hc_response_json_items(response_ptr, ctypes.byref(count), None))
        return count.value


_ITEM_CB = ctypes.CFUNCTYPE(ctypes.c_int, ctypes.c_void_p, ctypes.c_size_t, ctypes.c_void_p)


def iter_json(client: Any, url: str, prefix: str = "item", *, method: str = "GET",
              buffer: int = 4, schema: Any = None, skip_invalid: bool = False,
              **kwargs: Any) -> Iterator[Any]:
    """Yields each value under `prefix` while the body is still arriving. The transfer runs on
    your thread, a step at a time while you take the values: nothing is read while you hold
    the iterator, so memory stays bounded (one wake-up's reads) however large the document.
    Stopping the iteration early (`close()`, or leaving a `for` loop) stops the transfer.
    Without a schema, `buffer` is unused (kept for compatibility).

    `schema` (an `hc.Schema`) validates each value before it is yielded: an invalid one raises
    `hc.SchemaError` (its paths relative to the item), or is skipped with `skip_invalid=True`;
    values with a transformable format come back converted."""
    if schema is not None:
        return _iter_json_validated(client, url, prefix, method, buffer, schema, skip_invalid, kwargs)
    if skip_invalid:
        raise ValueError("skip_invalid needs a schema")
    return _iter_json(client, url, prefix, method, buffer, kwargs)


def _iter_json(client: Any, url: str, prefix: str, method: str, buffer: int,
               kwargs: dict[str, Any]) -> Iterator[Any]:
    # The transfer is stepped on the consumer's thread (Client._stepped): each step's batches
    # wait here, as marshal text, until taken; the next step only once they are. A worker
    # thread would hand the GIL back and forth per batch (thousands of context switches per
    # 20 MiB, +25% CPU on one core). `buffer` is kept for compatibility: nothing waits beyond
    # one step's batches (libcurl's reads of one wake-up).
    del buffer
    waiting: collections.deque[bytes] = collections.deque()
    options = _pop_options(kwargs)

    class _Collector(JSONItems):
        def _new_native(self, sink: list[BaseException] | None = None) -> int | None:  # never raises
            def on_batch(_userdata: int | None, _prefix_index: int, data: int, size: int,
                         _count: int) -> int:
                # Guarded: on this thread, a signal's exception (KeyboardInterrupt) may be
                # raised here; it stops the transfer and is raised by the next step.
                return self._guard(lambda: _append(waiting, ctypes.string_at(data, size)), sink)
            _feed.watch(on_batch, sink)   # and before the guard's `try`
            return _batches_native(self, on_batch, prefix)

    handler = _Collector(prefix, _ignore, **options)
    return _feed.chained(_value_batches(client._stepped(Request(method, url, handler=handler, **kwargs)),
                                        waiting, handler))


def _value_batches(steps: Generator[None, None, Any], waiting: collections.deque[bytes],
                   handler: Handler) -> Generator[Iterable[Any], None, None]:
    """The batches' values, each batch a list made by one marshal.loads, as the steps of the
    transfer leave them; then the transfer's error, if any. Closing stops the transfer."""
    try:
        for text in _feed.drained(steps, waiting):
            yield loads_iter(text)
    finally:
        handler.close()


def loads_iter(batch: Any) -> Iterator[Any]:
    """The values of a batch from its marshal list, the cyclic GC paused meanwhile (the values
    hold no cycles; collections triggered by their containers cost a third of the loads), as an
    iterator made while the GC is still paused: the iterator is a container too, and made after,
    it would trigger a collection that scans the whole batch (the batch's containers are
    counted; once they are consumed and freed the count is back down)."""
    with _GCPaused():
        return iter(batch_values(cast("list[Any]", marshal.loads(batch))))


def batch_values(values: list[Any]) -> list[Any]:
    """A batch's values. A batch that goes on with a value begun in the one before (the batch
    went when the bytes read so far ended mid-value) starts with a tuple of the member names
    that value may refer to, defined again so that marshal's references keep their numbers:
    no JSON value is a tuple, and it is dropped here."""
    if values and values[0].__class__ is tuple:
        del values[0]
    return values


def _pop_options(kwargs: dict[str, Any]) -> dict[str, Any]:
    """The JSONItems options among a streaming iterator's keyword arguments (the rest are the
    request's)."""
    return {k: kwargs.pop(k) for k in list(kwargs) if k in (
        "limit", "stop_when_closed", "require_prefix", "multiple_values", "allow_comments",
        "max_depth", "max_size", "accept_status", "accept_types")}


def _batches_native(handler: JSONItems, on_batch: Callable[[int | None, int, int, int, int], int],
                    prefix: str) -> int | None:
    """A one-prefix batches handler calling `on_batch` (kept alive by `handler`)."""
    handler._keep = _ITEMS_BATCH_CB(on_batch)
    names = (ctypes.c_char_p * 1)(prefix.encode())
    with _Options(**handler._options) as opts:
        native: int | None = _ffi.lib().hc_handler_json_batches_pymarshal_new(
            names, 1, opts, handler._keep, None)
        return native


def _ignore(_value: Any) -> None:
    return None


def _append(waiting: collections.deque[bytes], item: bytes) -> int:
    waiting.append(item)
    return 0


def aiter_json(client: Any, send: Send, url: str, prefix: str = "item", *, method: str = "GET",
               buffer: int = 4, **kwargs: Any) -> AsyncGenerator[Any, None]:
    """`iter_json` on the running event loop, with no thread: the transfer's socket is watched
    by the loop (`send(handler, driver)` runs it, see Client.aiter_json). When `buffer` batches
    wait for you, the loop stops reading the socket until you catch up, so memory stays
    bounded. Leaving the loop early cancels the transfer."""
    options = _pop_options(kwargs)

    def handler_of(feed: LoopFeed[bytes]) -> JSONItems:
        class _Feeder(JSONItems):
            def _new_native(self, sink: list[BaseException] | None = None) -> int | None:  # never raises
                def on_batch(_userdata: int | None, _prefix_index: int, data: int, size: int,
                             _count: int) -> int:
                    return self._guard(lambda: feed.put(ctypes.string_at(data, size)), sink)
                return _batches_native(self, on_batch, prefix)
        return _Feeder(prefix, _ignore, **options)

    return loop_items(client, send, handler_of, loads_iter, buffer=buffer, method=method, url=url,
                      options=kwargs)


def _iter_json_validated(client: Any, url: str, prefix: str, method: str, buffer: int, schema: Any,
                         skip_invalid: bool, kwargs: dict[str, Any]) -> Iterator[Any]:
    """iter_json with a schema: each item is a tree validated in the library before its
    callback (hc_handler_json_set_schema), then handed over as JSON text. Stepped on this
    thread as iter_json is (the texts of one step wait until taken)."""
    del buffer
    waiting: collections.deque[bytes] = collections.deque()
    options = _pop_options(kwargs)
    lib = _ffi.lib()

    class _Validated(JSONItems):
        def _new_native(self, sink: list[BaseException] | None = None) -> int | None:
            def on_item(_userdata: int | None, _prefix_index: int, node: int) -> int:
                def run() -> int:
                    out, size = ctypes.c_void_p(), ctypes.c_size_t()
                    if lib.hc_json_serialize(node, 0, ctypes.byref(out), ctypes.byref(size)) != 0:
                        return _c.HC_ECALLBACK
                    try:
                        waiting.append(ctypes.string_at(out, size.value))
                    finally:
                        lib.hc_buffer_free(out)
                    return 0
                return self._guard(run, sink)   # as iter_json's on_batch
            _feed.watch(on_item, sink)
            self._keep = _ITEM_CB(on_item)
            names = (ctypes.c_char_p * 1)(prefix.encode())
            with _Options(**self._options) as opts:
                ptr: int | None = lib.hc_handler_json_items_new(names, 1, opts,
                                                                ctypes.cast(self._keep, ctypes.c_void_p), None)
            if ptr:
                check(lib.hc_handler_json_set_schema(ptr, schema, 2 if skip_invalid else 0))
            return ptr

    handler = _Validated(prefix, _ignore, **options)
    try:
        for text in _feed.drained(client._stepped(Request(method, url, handler=handler, **kwargs)), waiting):
            yield schema.transform_text(text)
    finally:
        handler.close()


__all__ = ["JSON", "JSONItems", "iter_json", "aiter_json"]
