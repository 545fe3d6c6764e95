"""Response content handlers: what becomes of a body, decided per request.

A handler describes the handling; each request creates fresh handling state from a built-in
handler, so one built-in handler object may serve many requests. Every built-in takes
`accept_status=` (codes, ranges, `(low, high)` pairs or `"200-299"` strings; an empty list
accepts any status) and `accept_types=` (media ranges such as `"application/json"`,
`"image/*"`, `"*/*+json"`; they replace the handler's defaults, and an empty list accepts any
type).

Write your own by subclassing `Handler` and overriding `accept`, `consume`, `finish` and
`cleanup`; or subclass `Bytes` and override `convert` when you only want the whole body.
"""

from __future__ import annotations

import codecs
import ctypes
import os
import threading
from dataclasses import dataclass
from typing import Any, Callable, Iterable, cast

from . import _ffi
from . import _constants as _c
from ._handle import Handle
from ._headers import Headers
from ._types import PathLike, StatusSpec
from .errors import Error, check


# A bytes object of a given size, to be filled before anyone else sees it (CPython's own way
# of building bytes).
_new_bytes = ctypes.pythonapi.PyBytes_FromStringAndSize
_new_bytes.restype = ctypes.py_object
_new_bytes.argtypes = [ctypes.c_void_p, ctypes.c_ssize_t]
_MAKING = threading.RLock()  # held while a handler makes its native handler (Handler._handle)


def _status_ranges(spec: Iterable[StatusSpec]) -> list[tuple[int, int]]:
    ranges: list[tuple[int, int]] = []
    for item in cast("Iterable[object]", spec):  # checked one by one: any object may come
        if isinstance(item, bool):
            raise TypeError("accept_status takes status codes, not booleans")
        if isinstance(item, int):
            ranges.append((item, item))
        elif isinstance(item, range):
            if len(item):
                ranges.append((item[0], item[-1]))
        elif isinstance(item, tuple) and len(item) == 2:  # pyright: ignore[reportUnknownArgumentType]
            pair: tuple[Any, ...] = item  # pyright: ignore[reportUnknownVariableType]
            ranges.append((int(pair[0]), int(pair[1])))
        elif isinstance(item, str):
            first, _, last = item.partition("-")
            ranges.append((int(first), int(last or first)))
        else:
            raise TypeError(f"accept_status: cannot read {item!r} as a status code or range")
    return ranges


# The process-wide defaults, snapshotted by each handler when it is created (None: built-in).
_default_status: list[tuple[int, int]] | None = None
_default_types: list[str] | None = None


def set_default_accept_status(spec: Iterable[StatusSpec]) -> None:
    """Changes the status codes handlers created from now on accept by default (process-wide,
    like hotpotato's setDefaultAcceptableResponses). An empty list accepts any status."""
    global _default_status
    ranges = _status_ranges(spec)
    flat = (ctypes.c_int * (2 * len(ranges)))(*[v for pair in ranges for v in pair])
    check(_ffi.lib().hc_defaults_accept_status(flat, len(ranges)))
    _default_status = ranges


def _strings(items: Iterable[str]) -> tuple[Any, int]:
    encoded = [str(i).encode("utf-8") for i in items]
    return (ctypes.c_char_p * len(encoded))(*encoded), len(encoded)


def set_default_accept_types(media_ranges: Iterable[str]) -> None:
    """Changes the content types accepted by default by handlers created from now on whose own
    default is "any type" (Bytes, Text, Stream, File); an empty list accepts any type."""
    global _default_types
    ranges = list(media_ranges)
    check(_ffi.lib().hc_defaults_accept_types(*_strings(ranges)))
    _default_types = ranges


def set_server_message_paths(key_paths: Iterable[str]) -> None:
    """Changes the key paths, tried in order, that find the server's message in a rejected JSON
    body (default: error.message, error, message, error_description, detail, title)."""
    check(_ffi.lib().hc_defaults_server_message_paths(*_strings(key_paths)))


def reset_defaults() -> None:
    """Restores the built-in defaults: status 200-299, any content type, the default server
    message key paths."""
    global _default_status, _default_types
    _ffi.lib().hc_defaults_reset()
    _default_status = _default_types = None


class _NativeHandler(Handle):
    """The library's hc_handler behind a Python handler (plus what C must keep calling)."""

    @staticmethod
    def _free(ptr: int) -> None:
        _ffi.lib().hc_handler_free(ptr)

    keep: Any  # the Python callbacks C may call, kept alive with the native handler

    def __init__(self, handle: int | None) -> None:
        super().__init__(handle)
        self.arg = _ffi.as_arg(ctypes.c_void_p, handle)


@dataclass(frozen=True)
class ResponseHead:
    """What a handler's `accept` sees: the final response's status, headers and URL, and its
    status line's reason phrase and protocol version ("HTTP/1.1")."""
    status: int
    headers: Any
    url: str
    reason: str = ""
    http_version: str = ""


class Handler:
    """A response content handler. Subclass it to write your own, overriding any of:

    - `accept(head) -> bool` once the headers are complete (`head.status`, `head.headers`,
      `head.url`): return False (or raise) to refuse the body, which then never reaches
      `consume` and is kept, capped, in the error;
    - `consume(chunk: bytes)` for each chunk as it arrives (raise to stop the transfer);
    - `finish() -> content` once the body is complete: its result is `response.content`;
    - `cleanup(failed: bool)` always, last.

    An exception raised in any of them stops the transfer and is re-raised by the request.
    The acceptance options (`accept_status`, `accept_types`) are checked before `accept`.
    One instance keeps its state across calls: use one per concurrent request."""

    # Whether this kind of handler accepts any content type unless told otherwise (and so
    # follows `set_default_accept_types`).
    _any_type_by_default = True
    # Whether its native handler runs Python code that can keep an exception for the request to
    # re-raise: built-ins that never do spare each request the `_take_exception` call.
    _may_raise = True
    # A `Bytes` whose content is the body as is: Client._fetch then makes its response itself.
    _plain_bytes = False
    # A built-in with Python callbacks that concurrent requests may share (Stream, JSONItems):
    # each request gets a native of its own whose callbacks keep their exceptions for that
    # request (`_native_for`), never for another.
    _shared = False

    def __init__(self, *, accept_status: Iterable[StatusSpec] | None = None,
                 accept_types: Iterable[str] | None = None, max_size: int | None = None,
                 empty_statuses: Iterable[int] | None = None,
                 empty_methods: Iterable[str] | None = None) -> None:
        self.accept_status = (_default_status if accept_status is None
                              else _status_ranges(accept_status))
        self.accept_types = list(accept_types) if accept_types is not None else (
            _default_types if self._any_type_by_default else None)
        if max_size is not None and max_size <= 0:
            raise ValueError("max_size must be positive (or None for no limit)")
        self.max_size = max_size
        self.empty_statuses = None if empty_statuses is None else [int(c) for c in empty_statuses]
        self.empty_methods = None if empty_methods is None else list(empty_methods)
        self._native: _NativeHandler | None = None
        self._raised: list[BaseException] = []
        self._result: Any = None

    # -- what a custom handler overrides
    def accept(self, head: ResponseHead) -> bool:
        return True

    def consume(self, chunk: bytes) -> None:
        pass

    def finish(self) -> Any:
        return None

    def cleanup(self, failed: bool) -> None:
        pass

    # -- how built-ins plug in
    def _new_native(self) -> int | None:
        """The native handler (None: the library's error). By default, a custom one calling this
        object's methods. A `_shared` handler's takes the request's exception list, `sink`."""
        return self._new_custom()

    def _content(self, response_ptr: int) -> Any:
        return self._result

    def _fetched_content(self, response_ptr: int, fetched: Any) -> Any:
        """The content of a response from hc_client_fetch (`fetched`: its hc_fetch_result)."""
        return self._content(response_ptr)

    def _handle(self) -> _NativeHandler:
        """The native handler, made once and configured with the acceptance options. Made under
        a lock: threads first using one handler at once would each make one, and the callbacks
        one of them stored in `_keep` would replace those the other's native handler, still in
        use, calls (freed, a segfault). Reentrant: a Compound makes its handlers' inside."""
        if self._native is not None:
            return self._native
        with _MAKING:
            if self._native is None:
                self._native = self._configured(self._new_native())
            return self._native

    def _native_for(self, sink: list[BaseException]) -> _NativeHandler:
        """The native handler one request uses, its callbacks' exceptions going to `sink` (the
        request's own list). Most handlers serve every request from one native. A built-in
        whose Python callbacks may serve several requests at once (`_shared`: Stream, JSONItems)
        gets a native per request, so an exception reaches the request it was raised for."""
        if not self._shared:
            return self._handle()
        make: Callable[[list[BaseException]], int | None] = self._new_native  # type: ignore[assignment]
        with _MAKING:
            return self._configured(make(sink))

    def _configured(self, ptr: int | None) -> _NativeHandler:
        """`ptr`, just made by `_new_native`, owned and configured with the acceptance options.
        Called under `_MAKING`: `_keep` is the callbacks that `_new_native` made for it."""
        native = _NativeHandler(ptr)
        native.keep = getattr(self, "_keep", None)  # callbacks C may call
        lib = _ffi.lib()
        if self.accept_status is not None:
            check(lib.hc_handler_accept_any_status(native))
            for low, high in self.accept_status:
                check(lib.hc_handler_accept_status(native, low, high))
        if self.accept_types is not None:
            check(lib.hc_handler_accept_any_type(native))  # replace the handler's defaults
            for media_range in self.accept_types:
                check(lib.hc_handler_accept_type(native, _ffi.text(media_range)))
        if self.max_size is not None:
            check(lib.hc_handler_set_max_size(native, self.max_size))
        if self.empty_statuses is not None:
            codes = (ctypes.c_int * len(self.empty_statuses))(*self.empty_statuses)
            check(lib.hc_handler_empty_statuses(native, codes, len(self.empty_statuses)))
        if self.empty_methods is not None:
            check(lib.hc_handler_empty_methods(native, *_strings(self.empty_methods)))
        return native

    def _take_exception(self) -> BaseException | None:
        """The first exception a callback of this handler's own native raised during the last
        request (a handler of one's own serves one request at a time)."""
        if not self._raised:
            return None
        raised, self._raised = self._raised, []
        return raised[0]

    def close(self) -> None:
        if self._native is not None:
            self._native.close()
            self._native = None

    # -- the custom vtable
    def _guard(self, call: Callable[[], int], sink: list[BaseException] | None = None) -> int:
        # An exception cannot cross C: keep it (in `sink`, a request's own list, if given),
        # stop the transfer, re-raise after the call.
        try:
            return call()
        except BaseException as exc:  # noqa: BLE001 - re-raised by Client.request
            (self._raised if sink is None else sink).append(exc)
            return exc.code if isinstance(exc, Error) and exc.code else _c.HC_ECALLBACK

    def _new_custom(self) -> int | None:
        def accept(_userdata: int | None, head_ptr: int) -> int:
            def run() -> int:
                self._result = None
                self._raised = []
                lib = _ffi.lib()
                raw = _ffi.borrowed_bytes(lib.hc_response_headers_raw, head_ptr)
                head = ResponseHead(lib.hc_response_status(head_ptr), Headers.parse(raw),
                                    (lib.hc_response_url(head_ptr) or b"").decode(),
                                    (lib.hc_response_reason(head_ptr) or b"").decode("latin-1"),
                                    (lib.hc_response_http_version(head_ptr) or b"").decode("latin-1"))
                return _c.HC_OK if self.accept(head) else _c.HC_EUNACCEPTABLE_STATUS
            return self._guard(run)

        def consume(_userdata: int | None, buf: int, size: int) -> int:
            def run() -> int:
                self.consume(ctypes.string_at(buf, size))
                return 0
            return self._guard(run)

        def finish(_userdata: int | None) -> int:
            def run() -> int:
                self._result = self.finish()
                return 0
            return self._guard(run)

        def cleanup(_userdata: int | None, failed: int) -> None:
            def run() -> int:
                self.cleanup(bool(failed))
                return 0
            self._guard(run)

        vtable = _ffi.HandlerVTable(1, _ffi.ACCEPT_CB(accept), _ffi.WRITE_CB(consume),
                                    _ffi.FINISH_CB(finish), _ffi.CLEANUP_CB(cleanup))
        self._keep: Any = vtable
        native: int | None = _ffi.lib().hc_handler_custom_new(ctypes.byref(vtable), None)
        return native


class Discard(Handler):
    """Takes nothing from the body; `response.content` is None. Accepts 200-299, any type."""

    _may_raise = False

    def _new_native(self) -> int | None:
        native: int | None = _ffi.lib().hc_handler_discard_new()
        return native

    def _content(self, response_ptr: int) -> None:
        return None


# Bodies whose declared length is at least _LEND_MIN are written by the library straight into
# a bytes object made here (no second copy); smaller ones are copied, which is cheaper than a
# call into Python. _lent maps each such object's data address to it until the library calls
# release. The two callbacks are made once and never freed: a response may outlive the handler
# that lent its memory, and release comes when the response is freed.
_LEND_MIN = 65536
_lent: dict[int, bytes] = {}


# Where a bytes object's data starts, from its id (CPython's layout, measured once here rather
# than asked of ctypes.cast per body).
_probe = b"probe"
_DATA_OFFSET = (ctypes.cast(ctypes.c_char_p(_probe), ctypes.c_void_p).value or 0) - id(_probe)
del _probe


def _allocate(_userdata: int | None, size: int) -> int | None:
    try:
        body = _new_bytes(None, size)
    except (MemoryError, OverflowError):  # the size is the server's claim: it may be absurd
        return None  # the library then uses its own memory, grown as the body arrives
    address = id(body) + _DATA_OFFSET
    _lent[address] = body
    return address


def lent(address: int, size: int) -> bytes | None:
    """The bytes object lent for a body of `size` bytes at `address`, or None when the library
    used its own memory (the allocator refused, or the body was not the size announced)."""
    body = _lent.get(address)
    return body if body is not None and len(body) == size else None


def _release(_userdata: int | None, memory: int) -> None:
    _lent.pop(memory, None)


_LENDING = (_ffi.ALLOC_CB(_allocate), _ffi.RELEASE_CB(_release))


class Bytes(Handler):
    """Keeps the body as `bytes`. `max_size` (decoded bytes) fails larger bodies with
    `hc.TooLarge` as soon as they pass it. Accepts 200-299, any type. Subclass it and override
    `convert(data)` for a handler that turns the whole body into something else."""

    _may_raise = False  # its allocator callbacks keep no exception

    def __init__(self, max_size: int | None = None, **options: Any) -> None:
        super().__init__(max_size=max_size, **options)
        cls = type(self)
        self._plain_bytes = cls.convert is Bytes.convert and cls._fetched_content is Bytes._fetched_content

    def _new_native(self) -> int | None:
        native: int | None = _ffi.lib().hc_handler_bytes_new(self.max_size or 0)
        if native:
            check(_ffi.lib().hc_handler_bytes_set_allocator(native, _LEND_MIN, *_LENDING, None))
        return native

    @staticmethod
    def _body(data: Any, size: int) -> bytes:
        """The body at `data` (a pointer): the lent bytes object itself, or a copy."""
        if size >= _LEND_MIN:
            body = lent(ctypes.cast(data, ctypes.c_void_p).value or 0, size)
            if body is not None:
                return body
        return ctypes.string_at(data, size) if size else b""

    def _content(self, response_ptr: int) -> Any:
        data = _ffi.c_ubyte_p()
        size = ctypes.c_size_t()
        check(_ffi.lib().hc_response_bytes(response_ptr, ctypes.byref(data), ctypes.byref(size)))
        return self.convert(self._body(data, size.value))

    def _fetched_content(self, response_ptr: int, fetched: Any) -> Any:
        size = fetched.bytes_len
        return self.convert(self._body(fetched.bytes, size) if size >= _LEND_MIN else fetched.bytes[:size])

    def convert(self, data: bytes) -> Any:
        return data


_ENCODINGS = {"utf-8": 1, "utf-16-le": 2, "utf-16-be": 3, "utf-16": 3, "latin-1": 4,
              "iso8859-1": 4, "ascii": 5, "cp1252": 6}


class Text(Handler):
    """Decodes the body to `str` as it arrives: `encoding` if given, else the Content-Type's
    charset, else a byte order mark, else UTF-8. `errors="strict"` fails invalid bytes with
    `hc.DecodeError` (with `.offset`); `"replace"` substitutes U+FFFD. Supports UTF-8,
    UTF-16LE/BE, ISO-8859-1, US-ASCII and Windows-1252. Accepts 200-299, any type."""

    _may_raise = False

    def __init__(self, encoding: str | None = None, errors: str = "strict", **options: Any) -> None:
        super().__init__(**options)
        if errors not in ("strict", "replace"):
            raise ValueError('errors must be "strict" or "replace"')
        self.encoding = encoding
        self.errors = errors
        self._code = 0
        if encoding is not None:
            try:
                name = codecs.lookup(encoding).name
            except LookupError:
                raise ValueError(f"unknown encoding {encoding!r}") from None
            if name not in _ENCODINGS:
                raise ValueError(f"encoding {encoding!r} is not one the library decodes")
            self._code = _ENCODINGS[name]

    def _new_native(self) -> int | None:
        native: int | None = _ffi.lib().hc_handler_text_new(self._code, int(self.errors == "strict"))
        return native

    def _content(self, response_ptr: int) -> str:
        data = ctypes.c_void_p()
        size = ctypes.c_size_t()
        check(_ffi.lib().hc_response_text(response_ptr, ctypes.byref(data), ctypes.byref(size)))
        return ctypes.string_at(data, size.value).decode("utf-8") if size.value else ""


class Stream(Handler):
    """Passes each chunk, as it arrives, to `target`: a writable binary file object (its
    `write` is called) or a callable taking bytes. Keeps nothing; `response.content` is the
    number of bytes passed on. Accepts 200-299, any type."""

    _shared = True

    def __init__(self, target: Any, **options: Any) -> None:
        super().__init__(**options)
        write = getattr(target, "write", None)
        if write is None and not callable(target):
            raise TypeError("Stream needs a writable file object or a callable")
        self._write = write if write is not None else target

    def _new_native(self, sink: list[BaseException] | None = None) -> int | None:
        def on_chunk(_userdata: int | None, buf: int, size: int) -> int:
            def run() -> int:
                self._write(ctypes.string_at(buf, size))
                return 0
            return self._guard(run, sink)
        self._keep = _ffi.WRITE_CB(on_chunk)
        native: int | None = _ffi.lib().hc_handler_stream_cb_new(self._keep, None)
        return native

    def _content(self, response_ptr: int) -> int:
        return int(_ffi.lib().hc_response_streamed(response_ptr))


@dataclass(frozen=True)
class Download:
    """A finished download: the path, bytes written by this request, the final size, and
    whether it continued an earlier partial download."""
    path: str
    bytes_written: int
    size: int
    resumed: bool
    #: The digest computed while the bytes streamed, "sha256:<hex>"; None when none was checked.
    digest: str | None = None


_ffi.declare("hc_handler_file_set_digest", ctypes.c_int, [ctypes.c_void_p, ctypes.c_char_p, ctypes.c_char_p])
_ffi.declare("hc_response_file_digest", ctypes.c_char_p, [ctypes.c_void_p])


class File(Handler):
    """Downloads the body to `path`, atomically: written to a temporary file in the same
    directory, fsync'd (with `fsync=True`, the default: the finished file survives a power
    cut; `fsync=False` skips the fsyncs, and a crash may then leave a renamed file short),
    renamed over `path` only when complete. At both settings the file is written back while it
    streams, 16 MiB at a time, and written windows leave the page cache (so a large download
    holds about 32 MiB of it, and is not cached when it finishes); with fsync the disk's cache
    is flushed behind the windows too, and a large file replaced is freed in the background after
    the rename (docs/guides/choosing-a-handler.md). On any failure the temporary
    file is removed and an existing file is left untouched; with `resume=True`, `path + ".part"`
    is kept instead and the next request continues it with a Range request. A response with no
    body by definition (HEAD, 204, 205) leaves the file as it was. An unwritable directory raises
    `hc.LocalIOError` before anything is sent. Accepts 200-299, any type.

    `sha256=`, `sha512=` or `md5=` (hex) is the digest the file must have, computed while the
    bytes stream; digests the server sends (Repr-Digest, Content-Digest, Digest) are checked too.
    A mismatch raises `hc.ChecksumMismatch` and leaves neither the file nor a part. With
    `resume=True` the part's ETag/Last-Modified are kept in `path + ".part.meta"` and the resume
    asks with If-Range: a file changed on the server starts over, never spliced."""

    _may_raise = False

    def __init__(self, path: PathLike, *, overwrite: bool = True, make_dirs: bool = False,
                 resume: bool = False, fsync: bool = True, sha256: str | None = None,
                 sha512: str | None = None, md5: str | None = None, **options: Any) -> None:
        super().__init__(**options)
        self.path = os.fspath(path)
        given = [(name, value) for name, value in (("sha256", sha256), ("sha512", sha512), ("md5", md5))
                 if value is not None]
        if len(given) > 1:
            raise ValueError("give one of sha256=, sha512=, md5=")
        self.digest: tuple[str, str] | None = given[0] if given else None
        self.flags = ((_c.HC_FILE_MAKE_DIRS if make_dirs else 0)
                      | (0 if overwrite else _c.HC_FILE_NO_OVERWRITE)
                      | (_c.HC_FILE_RESUME if resume else 0) | (0 if fsync else _c.HC_FILE_NO_FSYNC))

    def _new_native(self) -> int | None:
        lib = _ffi.lib()
        native: int | None = lib.hc_handler_file_new(_ffi.text(self.path), self.flags)
        if native and self.digest is not None:
            algorithm, value = self.digest
            if lib.hc_handler_file_set_digest(native, algorithm.encode(), _ffi.text(value)) != 0:
                lib.hc_handler_free(native)
                from .errors import raise_last
                raise_last()
        return native

    def _content(self, response_ptr: int) -> Download:
        path, written, size, resumed = (ctypes.c_char_p(), ctypes.c_int64(), ctypes.c_int64(),
                                        ctypes.c_int())
        check(_ffi.lib().hc_response_file(response_ptr, ctypes.byref(path), ctypes.byref(written),
                                          ctypes.byref(size), ctypes.byref(resumed)))
        digest = _ffi.lib().hc_response_file_digest(response_ptr)
        return Download((path.value or b"").decode(), written.value, size.value, bool(resumed.value),
                        digest.decode() if digest else None)


class Compound(Handler):
    """Offers each response to `handlers` in order; the first that accepts it takes the body
    (AFNetworking's compound serializer). When none accepts, the first one's error is raised."""

    _any_type_by_default = False

    def __init__(self, handlers: Iterable[Handler]) -> None:
        super().__init__()
        self.handlers = list(handlers)
        if not self.handlers:
            raise ValueError("Compound needs at least one handler")
        self._shared = any(h._shared for h in self.handlers)  # then one compound per request

    def _new_native(self, sink: list[BaseException] | None = None) -> int | None:
        # The compound keeps its own references to these natives; its own native keeps their
        # Python objects, and with them the callbacks the natives call (a handler closed and
        # used again makes new ones, and its old ones must live as long as this compound).
        keep = [h._handle() if sink is None else h._native_for(sink) for h in self.handlers]
        self._keep = keep
        natives = (ctypes.c_void_p * len(keep))(*[n._as_parameter_ for n in keep])
        native: int | None = _ffi.lib().hc_handler_compound_new(natives, len(keep))
        return native

    def _content(self, response_ptr: int) -> Any:
        index: int = _ffi.lib().hc_response_handler_index(response_ptr)
        taker: Handler = self.handlers[index]
        return taker._content(response_ptr)

    def _take_exception(self) -> BaseException | None:
        found = [e for e in (h._take_exception() for h in self.handlers) if e is not None]
        return found[0] if found else None


__all__ = ["set_default_accept_types", "set_server_message_paths", "Handler", "ResponseHead", "Discard", "Bytes", "Text",
           "Stream", "File", "Download", "Compound", "set_default_accept_status", "reset_defaults"]
