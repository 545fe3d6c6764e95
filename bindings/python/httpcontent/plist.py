"""Property lists, XML or binary, read and written by libplist: `hc.Plist()` gives what
`plistlib.loads` gives, and `client.post(url, plist=obj, plist_format="xml"|"binary")` sends a
document `plistlib.loads` reads back equal."""

from __future__ import annotations

import ctypes
import datetime as _datetime
import gc
import io
import pickle
import plistlib
from typing import TYPE_CHECKING, Any, Callable

from . import _ffi
from ._handle import Handle
from .errors import InvalidArgument, check
from .handlers import Handler
from . import bodies as _bodies  # noqa: F401  # pyright: ignore[reportUnusedImport]  (declares hc_buffer_free)

if TYPE_CHECKING:
    from .schema import Schema

for _name, _res, _args in [
    ("hc_plist_options_new", ctypes.c_void_p, []),
    ("hc_plist_options_free", None, [ctypes.c_void_p]),
    ("hc_plist_options_set", ctypes.c_int, [ctypes.c_void_p, ctypes.c_int, ctypes.c_int64]),
    ("hc_handler_plist_new", ctypes.c_void_p, [ctypes.c_void_p]),
    ("hc_response_plist", ctypes.c_void_p, [ctypes.c_void_p]),
    ("hc_plist_pypickle", ctypes.c_int, [ctypes.c_void_p, ctypes.POINTER(ctypes.c_void_p),
                                         ctypes.POINTER(ctypes.c_size_t)]),
    ("hc_handler_plist_pickle_new", ctypes.c_void_p, [ctypes.c_void_p]),
    ("hc_response_plist_pickle", ctypes.c_int, [ctypes.c_void_p, ctypes.POINTER(ctypes.c_void_p),
                                                ctypes.POINTER(ctypes.c_size_t)]),
    ("hc_plist_free", None, [ctypes.c_void_p]),
    ("hc_plist_builder_new", ctypes.c_void_p, []),
    ("hc_plist_builder_free", None, [ctypes.c_void_p]),
    ("hc_plist_builder_string", ctypes.c_int, [ctypes.c_void_p, ctypes.c_char_p, ctypes.c_size_t]),
    ("hc_plist_builder_key", ctypes.c_int, [ctypes.c_void_p, ctypes.c_char_p, ctypes.c_size_t]),
    ("hc_plist_builder_int64", ctypes.c_int, [ctypes.c_void_p, ctypes.c_int64]),
    ("hc_plist_builder_uint64", ctypes.c_int, [ctypes.c_void_p, ctypes.c_uint64]),
    ("hc_plist_builder_real", ctypes.c_int, [ctypes.c_void_p, ctypes.c_double]),
    ("hc_plist_builder_bool", ctypes.c_int, [ctypes.c_void_p, ctypes.c_int]),
    ("hc_plist_builder_date", ctypes.c_int, [ctypes.c_void_p, ctypes.c_double]),
    ("hc_plist_builder_data", ctypes.c_int, [ctypes.c_void_p, ctypes.c_char_p, ctypes.c_size_t]),
    ("hc_plist_builder_uid", ctypes.c_int, [ctypes.c_void_p, ctypes.c_uint64]),
    ("hc_plist_builder_begin_array", ctypes.c_int, [ctypes.c_void_p]),
    ("hc_plist_builder_end_array", ctypes.c_int, [ctypes.c_void_p]),
    ("hc_plist_builder_begin_dict", ctypes.c_int, [ctypes.c_void_p]),
    ("hc_plist_builder_end_dict", ctypes.c_int, [ctypes.c_void_p]),
    ("hc_plist_builder_finish", ctypes.c_int, [ctypes.c_void_p, ctypes.POINTER(ctypes.c_void_p)]),
    ("hc_request_set_plist_value", ctypes.c_int, [ctypes.c_void_p, ctypes.c_void_p, ctypes.c_int]),
    ("hc_handler_plist_set_schema", ctypes.c_int, [ctypes.c_void_p, ctypes.c_void_p, ctypes.c_int]),
    ("hc_request_set_plist_value_schema", ctypes.c_int,
     [ctypes.c_void_p, ctypes.c_void_p, ctypes.c_int, ctypes.c_void_p, ctypes.c_int]),
    ("hc_schema_plist_format_annotations", ctypes.c_int,
     [ctypes.c_void_p, ctypes.c_void_p, ctypes.POINTER(ctypes.c_void_p), ctypes.POINTER(ctypes.c_size_t)]),
]:
    _ffi.declare(_name, _res, _args)

_OPTIONS = {"max_depth": 1, "max_size": 2, "max_objects": 3, "allow_empty": 4}
_FORMATS = {"xml": 0, "binary": 1}
_EPOCH = _datetime.datetime(1970, 1, 1)
_INT64_MIN, _UINT64_MAX = -(1 << 63), (1 << 64) - 1


class _Options(Handle):
    @staticmethod
    def _free(ptr: int) -> None:
        _ffi.lib().hc_plist_options_free(ptr)

    def __init__(self, **values: Any) -> None:
        super().__init__(_ffi.lib().hc_plist_options_new())
        for name, value in values.items():
            if value is not None:
                check(_ffi.lib().hc_plist_options_set(self, _OPTIONS[name], int(value)))


class _Unpickler(pickle.Unpickler):
    """Reads the library's own pickle of a plist: only datetime.datetime and plistlib.UID."""

    def find_class(self, module: str, name: str) -> Any:
        if (module, name) == ("datetime", "datetime"):
            return _datetime.datetime
        if (module, name) == ("plistlib", "UID"):
            return plistlib.UID
        raise pickle.UnpicklingError(f"unexpected global {module}.{name}")


def _unpickle(address: int, size: int) -> Any:
    """The objects of the library's plist pickle at `address` (borrowed for the call)."""
    view = (ctypes.c_char * size).from_address(address)
    # The objects hold no cycles: collections triggered by millions of new containers
    # would only rescan them.
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        return _Unpickler(io.BytesIO(view)).load()
    finally:
        if was_enabled:
            gc.enable()


def _value_content(value_ptr: int) -> Any:
    """The Python objects of a borrowed hc_plist, as plistlib gives them."""
    lib = _ffi.lib()
    out, size = ctypes.c_void_p(), ctypes.c_size_t()
    check(lib.hc_plist_pypickle(value_ptr, ctypes.byref(out), ctypes.byref(size)))
    address = out.value
    assert address is not None  # HC_OK always gives a buffer
    try:
        return _unpickle(address, size.value)
    finally:
        lib.hc_buffer_free(out)


class Plist(Handler):
    """Keeps the body and parses it as a property list, XML or binary (sniffed from the bytes),
    with libplist: content is what `plistlib.loads(body)` gives (dict, list, str, int, float,
    bool, naive UTC `datetime.datetime`, `bytes`, `plistlib.UID`). Options: `max_depth` (512),
    `max_size` (64 MiB), `max_objects` (10,000,000 values), `allow_empty`. Malformed or too
    deep input raises `hc.DecodeError`; too many bytes or values `hc.TooLarge`. Content is None
    for an empty 204/HEAD response. Accepts 200-299 and application/x-plist,
    application/x-bplist, application/plist, text/xml, application/xml."""

    _any_type_by_default = False
    _may_raise = False

    def __init__(self, *, max_depth: int | None = None, max_objects: int | None = None,
                 allow_empty: bool = False, schema: Schema | None = None, all_errors: bool = False,
                 **options: Any) -> None:
        super().__init__(**options)
        self._options = dict(max_depth=max_depth, max_objects=max_objects, allow_empty=allow_empty)
        self.schema = schema
        self._schema_flags = 1 if all_errors else 0
        self._pickled = False

    def _new_native(self) -> int:
        lib = _ffi.lib()
        with _Options(**self._options) as opts:
            # Without a schema, the library writes the document as a pickle, no tree in between.
            self._pickled = self.schema is None
            if self._pickled:
                return int(lib.hc_handler_plist_pickle_new(opts))
            ptr = int(lib.hc_handler_plist_new(opts))
        if ptr and self.schema is not None:
            code = lib.hc_handler_plist_set_schema(ptr, self.schema, self._schema_flags)
            if code != 0:
                lib.hc_handler_free(ptr)
                check(code)
        return ptr

    def _content(self, response_ptr: int) -> Any:
        lib = _ffi.lib()
        if self._pickled:
            data, size = ctypes.c_void_p(), ctypes.c_size_t()
            check(lib.hc_response_plist_pickle(response_ptr, ctypes.byref(data), ctypes.byref(size)))
            return None if not data.value else _unpickle(data.value, size.value)
        lib.hc_error_clear()
        value = lib.hc_response_plist(response_ptr)
        if not value:
            check(lib.hc_error_code(lib.hc_error_last()))
            return None
        content = _value_content(value)
        if self.schema is not None:
            content = self.schema._apply(content, _plist_annotations(self.schema, value))
        return content


def _plist_annotations(schema: Schema, value_ptr: int | _Value) -> bytes:
    """The format annotations of a (valid) library plist value, as JSON text."""
    lib = _ffi.lib()
    out, size = ctypes.c_void_p(), ctypes.c_size_t()
    check(lib.hc_schema_plist_format_annotations(schema, value_ptr, ctypes.byref(out), ctypes.byref(size)))
    try:
        return ctypes.string_at(out.value, size.value) if out.value else b"[]"
    finally:
        lib.hc_buffer_free(out)


class _Builder(Handle):
    @staticmethod
    def _free(ptr: int) -> None:
        _ffi.lib().hc_plist_builder_free(ptr)


class _Value(Handle):
    @staticmethod
    def _free(ptr: int) -> None:
        _ffi.lib().hc_plist_free(ptr)


def _seconds_since_1970(d: _datetime.datetime) -> float:
    """A naive datetime is UTC (as plistlib reads and writes them); an aware one is converted."""
    if d.tzinfo is not None:
        d = d.astimezone(_datetime.timezone.utc).replace(tzinfo=None)
    return (d - _EPOCH).total_seconds()


def _is(v: object, kinds: type | tuple[type, ...]) -> bool:
    """isinstance without narrowing: the walk below declares the container types it reads."""
    return isinstance(v, kinds)


def _build(obj: Any, encode: Callable[[Any], Any] | None = None) -> _Value:
    """`obj` as a library plist value, walked without recursion. `encode` turns other objects
    into ones a plist holds (a schema's transformers: uuid.UUID -> str...)."""
    lib = _ffi.lib()
    with _Builder(lib.hc_plist_builder_new()) as b:
        # Work items: a value to add, or a marker closing a container.
        stack: list[tuple[int, Any]] = [(0, obj)]
        active: set[int] = set()
        while stack:
            op, v = stack.pop()
            if op == 1:
                check(lib.hc_plist_builder_end_array(b))
                active.discard(v)
                continue
            if op == 2:
                check(lib.hc_plist_builder_end_dict(b))
                active.discard(v)
                continue
            if op == 3:
                raw = v.encode("utf-8")
                check(lib.hc_plist_builder_key(b, raw, len(raw)))
                continue
            if isinstance(v, bool):
                check(lib.hc_plist_builder_bool(b, int(v)))
            elif isinstance(v, plistlib.UID):
                check(lib.hc_plist_builder_uid(b, v.data))
            elif isinstance(v, int):
                if v < _INT64_MIN or v > _UINT64_MAX:
                    raise OverflowError(f"{v} does not fit in a property list's 64-bit integers")
                check(lib.hc_plist_builder_int64(b, v) if v < 0 else lib.hc_plist_builder_uint64(b, v))
            elif isinstance(v, float):
                check(lib.hc_plist_builder_real(b, v))
            elif isinstance(v, str):
                raw = v.encode("utf-8")
                check(lib.hc_plist_builder_string(b, raw, len(raw)))
            elif _is(v, (bytes, bytearray, memoryview)):
                blob: bytes | bytearray | memoryview = v
                raw = bytes(blob)
                check(lib.hc_plist_builder_data(b, raw, len(raw)))
            elif isinstance(v, _datetime.datetime):
                check(lib.hc_plist_builder_date(b, _seconds_since_1970(v)))
            elif _is(v, dict):
                d: dict[Any, Any] = v
                if id(d) in active:
                    raise ValueError("a dict that contains itself cannot be a property list")
                active.add(id(d))
                check(lib.hc_plist_builder_begin_dict(b))
                stack.append((2, id(d)))
                for key, item in reversed(list(d.items())):
                    if not isinstance(key, str):
                        raise TypeError(f"property list keys must be str, not {type(key).__name__}")
                    stack.append((0, item))
                    stack.append((3, key))
            elif _is(v, (list, tuple)):
                seq: list[Any] | tuple[Any, ...] = v
                if id(seq) in active:
                    raise ValueError("a list that contains itself cannot be a property list")
                active.add(id(seq))
                check(lib.hc_plist_builder_begin_array(b))
                stack.append((1, id(seq)))
                for item in reversed(seq):
                    stack.append((0, item))
            elif encode is not None:
                text = encode(v)
                if not isinstance(text, str):
                    raise TypeError(f"{type(v).__name__} cannot be written in a property list")
                raw = text.encode("utf-8")
                check(lib.hc_plist_builder_string(b, raw, len(raw)))
            else:
                raise TypeError(f"{type(v).__name__} cannot be written in a property list")
        out = ctypes.c_void_p()
        check(lib.hc_plist_builder_finish(b, ctypes.byref(out)))
        return _Value(out.value)


def set_plist_body(req: Any, obj: Any, plist_format: str, schema: Schema | None = None) -> None:
    """Sets a native request's body to `obj` as a property list in `plist_format`; with a
    `schema`, validated first (typed values encoded back to text by its transformers): an
    invalid body raises `hc.RequestSchemaError` and nothing is sent."""
    if plist_format not in _FORMATS:
        raise InvalidArgument(f"plist_format must be 'xml' or 'binary', not {plist_format!r}")
    lib = _ffi.lib()
    with _build(obj, None if schema is None else schema._encode) as value:
        if schema is None:
            check(lib.hc_request_set_plist_value(req, value, _FORMATS[plist_format]))
        else:
            check(lib.hc_request_set_plist_value_schema(req, value, _FORMATS[plist_format], schema, 0))


__all__ = ["Plist"]
