"""Request bodies: the form encoder (spaces as %20 by default), query strings, JSON, text,
raw bytes, streamed uploads and multipart, all encoded by the library itself."""

from __future__ import annotations

import ctypes
import io
import json as _json
import os
from dataclasses import dataclass
from typing import Any, Iterable, Iterator, Mapping, Sequence, cast

from . import _ffi
from . import _constants as _c
from ._handle import Handle
from ._types import FormInput, PathLike
from .errors import InvalidArgument, check

_SPACE = {"%20": _c.HC_FORM_SPACE_PERCENT, "+": _c.HC_FORM_SPACE_PLUS}
_ARRAYS = {"brackets": _c.HC_FORM_ARRAYS_BRACKETS, "repeat": _c.HC_FORM_ARRAYS_REPEAT,
           "indexed": _c.HC_FORM_ARRAYS_INDEXED}
_BOOLS = {"numeric": _c.HC_FORM_BOOLS_NUMERIC, "literal": _c.HC_FORM_BOOLS_LITERAL}
_NULLS = {"dropped": _c.HC_FORM_NULLS_DROPPED, "empty": _c.HC_FORM_NULLS_EMPTY}

_ffi.declare("hc_buffer_free", None, [ctypes.c_void_p])
_ffi.declare("hc_form_new", ctypes.c_void_p, [])
_ffi.declare("hc_multipart_new", ctypes.c_void_p, [])
_ffi.declare("hc_form_free", None, [ctypes.c_void_p])
_ffi.declare("hc_multipart_free", None, [ctypes.c_void_p])
for _name, _args in [
    ("hc_form_add_bytes", [ctypes.c_void_p, ctypes.c_char_p, ctypes.c_size_t, ctypes.c_char_p, ctypes.c_size_t]),
    ("hc_form_add_bool", [ctypes.c_void_p, ctypes.c_char_p, ctypes.c_int]),
    ("hc_form_add_null", [ctypes.c_void_p, ctypes.c_char_p]),
    ("hc_form_open_array", [ctypes.c_void_p, ctypes.c_char_p]),
    ("hc_form_open_dict", [ctypes.c_void_p, ctypes.c_char_p]),
    ("hc_form_close", [ctypes.c_void_p]),
    ("hc_form_set_space_encoding", [ctypes.c_void_p, ctypes.c_int]),
    ("hc_form_set_array_encoding", [ctypes.c_void_p, ctypes.c_int]),
    ("hc_form_set_bool_encoding", [ctypes.c_void_p, ctypes.c_int]),
    ("hc_form_set_null_encoding", [ctypes.c_void_p, ctypes.c_int]),
    ("hc_form_set_sort", [ctypes.c_void_p, ctypes.c_int]),
    ("hc_form_encode", [ctypes.c_void_p, ctypes.POINTER(ctypes.c_void_p), ctypes.POINTER(ctypes.c_size_t)]),
    ("hc_request_set_form_body", [ctypes.c_void_p, ctypes.c_void_p]),
    ("hc_request_add_query", [ctypes.c_void_p, ctypes.c_void_p]),
    ("hc_request_set_text_body", [ctypes.c_void_p, ctypes.c_char_p, ctypes.c_char_p]),
    ("hc_request_set_json_body", [ctypes.c_void_p, ctypes.c_char_p, ctypes.c_size_t]),
    ("hc_request_set_fd_body", [ctypes.c_void_p, ctypes.c_int, ctypes.c_int64, ctypes.c_char_p]),
    ("hc_request_set_read_body", [ctypes.c_void_p, _ffi.READ_CB, ctypes.c_void_p, ctypes.c_int64, ctypes.c_char_p]),
    ("hc_multipart_add_field", [ctypes.c_void_p, ctypes.c_char_p, ctypes.c_char_p]),
    ("hc_multipart_add_file", [ctypes.c_void_p, ctypes.c_char_p, ctypes.c_char_p, ctypes.c_char_p, ctypes.c_char_p]),
    ("hc_multipart_add_bytes", [ctypes.c_void_p, ctypes.c_char_p, ctypes.c_char_p, ctypes.c_size_t,
                                ctypes.c_char_p, ctypes.c_char_p]),
    ("hc_request_set_multipart", [ctypes.c_void_p, ctypes.c_void_p]),
]:
    _ffi.declare(_name, ctypes.c_int, _args)


def _raw(value: Any) -> bytes:
    if isinstance(value, bytes):
        return value
    if isinstance(value, (bytearray, memoryview)):
        return bytes(cast("bytearray | memoryview[int]", value))
    return str(value).encode("utf-8")


class Form(Handle):
    """A form built in the library from Python values: str, bytes, numbers, bool, None, lists
    (arrays) and dicts (nested keys), as ordered (key, value) pairs."""

    @staticmethod
    def _free(ptr: int) -> None:
        _ffi.lib().hc_form_free(ptr)

    def __init__(self, pairs: FormInput, *, space: str | None = None, arrays: str | None = None,
                 bools: str | None = None, nulls: str | None = None, sort: bool = False) -> None:
        lib = _ffi.lib()
        super().__init__(lib.hc_form_new())
        try:
            for option, table, setter in [(space, _SPACE, lib.hc_form_set_space_encoding),
                                          (arrays, _ARRAYS, lib.hc_form_set_array_encoding),
                                          (bools, _BOOLS, lib.hc_form_set_bool_encoding),
                                          (nulls, _NULLS, lib.hc_form_set_null_encoding)]:
                if option is None:  # the library's default
                    continue
                if option not in table:
                    raise ValueError(f"{option!r} is not one of {sorted(table)}")
                check(setter(self, table[option]))
            check(lib.hc_form_set_sort(self, int(sort)))
            for key, value in _form_items(pairs):
                self._add(key, value)
        except BaseException:
            self.close()
            raise

    def _add(self, key: Any, value: Any) -> None:
        lib = _ffi.lib()
        k = None if key is None else _raw(key)  # None: an array element
        if isinstance(value, bool):
            check(lib.hc_form_add_bool(self, k, int(value)))
        elif value is None:
            check(lib.hc_form_add_null(self, k))
        elif isinstance(value, Mapping):
            check(lib.hc_form_open_dict(self, k))
            members: Mapping[Any, Any] = value  # pyright: ignore[reportUnknownVariableType]
            for sub_key, sub_value in members.items():
                self._add(sub_key, sub_value)
            check(lib.hc_form_close(self))
        elif isinstance(value, (list, tuple)):
            check(lib.hc_form_open_array(self, k))
            for item in cast("Iterable[Any]", value):
                self._add(None, item)
            check(lib.hc_form_close(self))
        else:
            v = _raw(value)
            check(lib.hc_form_add_bytes(self, k, len(k or b""), v, len(v)))

    def encode(self) -> str:
        out, size = ctypes.c_void_p(), ctypes.c_size_t()
        check(_ffi.lib().hc_form_encode(self, ctypes.byref(out), ctypes.byref(size)))
        try:
            return ctypes.string_at(out, size.value).decode("ascii")
        finally:
            _ffi.lib().hc_buffer_free(out)


def form_encode(pairs: FormInput, space: str | None = None, arrays: str | None = None, sort: bool = False,
                bools: str | None = None, nulls: str | None = None) -> str:
    """`application/x-www-form-urlencoded` text for `pairs` (a dict or (key, value) pairs).
    Every byte outside A-Z a-z 0-9 - . _ ~ is %XX-escaped, in keys and values; a space is
    `%20` unless `space="+"`. Arrays: "brackets" (a[]=1), "repeat" (a=1&a=2), "indexed"
    (a[0]=1); dicts nest as a[b]=c; booleans "numeric" (1/0) or "literal"; None "dropped" or
    "empty". An option left None is the library's default (the first named of each)."""
    with Form(pairs, space=space, arrays=arrays, bools=bools, nulls=nulls, sort=sort) as form:
        return form.encode()


@dataclass(frozen=True)
class Field:
    """A text field of a multipart body."""
    name: str
    value: str


@dataclass(frozen=True)
class FilePart:
    """A file of a multipart body, read from `path` when the request is sent."""
    name: str
    path: PathLike
    content_type: str | None = None
    filename: str | None = None


@dataclass(frozen=True)
class BytesPart:
    """Bytes sent as one part of a multipart body."""
    name: str
    data: bytes
    filename: str | None = None
    content_type: str | None = None


class _Multipart(Handle):
    @staticmethod
    def _free(ptr: int) -> None:
        _ffi.lib().hc_multipart_free(ptr)


def _form_items(pairs: FormInput) -> Iterable[tuple[Any, Any]]:
    """The (key, value) pairs of a mapping or of an iterable of pairs."""
    if isinstance(pairs, Mapping):
        # pyright narrows to Mapping[Unknown, Unknown]: the keys and values are Any here.
        return pairs.items()  # pyright: ignore[reportUnknownVariableType, reportUnknownMemberType]
    return pairs


def _text(v: Any) -> bytes | None:
    return _ffi.text(os.fspath(cast("os.PathLike[str]", v)) if isinstance(v, os.PathLike) else v)


def _is_pairs(data: Any) -> bool:
    """A `data=` value that is form fields, as requests reads it: a mapping, or a list or tuple
    of (key, value) pairs (an iterable of bytes is a streamed body instead)."""
    if isinstance(data, Mapping):
        return True
    items = cast("Sequence[Any]", data)
    if not isinstance(items, (list, tuple)):
        return False
    return len(items) > 0 and all(_is_pair(item) for item in items)


def _is_pair(item: Any) -> bool:
    if not isinstance(item, tuple):
        return False
    pair: tuple[Any, ...] = item  # pyright: ignore[reportUnknownVariableType]
    return len(pair) == 2


def files_parts(files: Any, data: Any) -> list[Field | FilePart | BytesPart]:
    """The multipart parts of requests' `files=` (a mapping or (name, value) pairs), after the
    fields of `data=` (a mapping or pairs). A value is a file object, bytes or str, or a tuple
    (filename, content) or (filename, content, content_type). A file object opened on a real
    file, at its start, is read by the library from its path; any other is read here."""
    parts: list[Field | FilePart | BytesPart] = []
    if data is not None:
        if not _is_pairs(data):
            raise InvalidArgument("with files=, data= is form fields (a dict or (key, value) pairs)")
        for key, value in _form_items(data):
            values: list[Any] = value if isinstance(value, list) else [value]  # pyright: ignore[reportUnknownVariableType]
            for item in values:
                parts.append(Field(str(key), item.decode("utf-8") if isinstance(item, bytes) else str(item)))
    for name, value in _form_items(files):
        filename: str | None = None
        ctype: str | None = None
        content: Any = value
        if isinstance(value, tuple):
            spec: tuple[Any, ...] = value  # pyright: ignore[reportUnknownVariableType]
            if not 2 <= len(spec) <= 3:
                raise InvalidArgument(f"files={name!r}: a tuple is (filename, content) or (filename, content, content_type)")
            filename, content = spec[0], spec[1]
            ctype = spec[2] if len(spec) == 3 else None
        if isinstance(content, (str, bytes, bytearray, memoryview)):
            parts.append(BytesPart(str(name), _raw(content), filename or str(name), ctype))
            continue
        if not hasattr(content, "read"):
            raise InvalidArgument(f"files={name!r}: bytes, str or a file object, not {type(content).__name__}")
        path = getattr(content, "name", None)
        if filename is None:
            filename = os.path.basename(path) if isinstance(path, str) else str(name)
        if isinstance(path, str) and os.path.isfile(path) and _at_start(content):
            parts.append(FilePart(str(name), path, ctype, filename))
        else:
            parts.append(BytesPart(str(name), _raw(content.read()), filename, ctype))
    return parts


def _at_start(file: Any) -> bool:
    try:
        return bool(file.seekable()) and file.tell() == 0
    except (OSError, ValueError, AttributeError):
        return False


def apply_body(req: Any, keep: list[Any], *, params: FormInput | None, form: FormInput | None,
               json: Any, data: Any, multipart: Iterable[Any] | None,
               content_type: str | None, raised: list[BaseException], schema: Any = None,
               files: Any = None, arrays: str | None = None, plist: Any = None) -> None:
    """Sets the body (and query) of a native request from `Client.request`'s arguments.
    `keep` holds what C must still call during the send; `raised` collects exceptions.
    `arrays` encodes list values of `params`, `form` and a `data=` dict (None: the library's
    default)."""
    lib = _ffi.lib()
    if params is not None:
        with Form(params, arrays=arrays) as query:
            check(lib.hc_request_add_query(req, query))
    if files is not None:
        if multipart is not None:
            raise InvalidArgument("one body at a time: got files, multipart")
        multipart, data = files_parts(files, data), None
    elif data is not None and form is None and _is_pairs(data):
        form, data = data, None
    # The one-body rule, for every body a request may carry (a plist= one is set by the
    # plist module, after this check).
    given = [name for name, v in (("plist", plist), ("form", form), ("json", json), ("data", data),
                                  ("multipart", multipart)) if v is not None]
    if len(given) > 1:
        raise InvalidArgument(f"one body at a time: got {', '.join(given)}")
    if schema is not None and json is None and plist is None:
        raise InvalidArgument("schema= validates a json= or plist= body: there is none")
    if form is not None:
        with Form(form, arrays=arrays) as body:
            check(lib.hc_request_set_form_body(req, body))
    elif json is not None and schema is not None:
        raw = schema._dumps(json)
        check(lib.hc_request_set_json_body_schema(req, raw, len(raw), schema, 0))
    elif json is not None:
        try:
            text = _json.dumps(json, allow_nan=False, ensure_ascii=False, separators=(",", ":"))
        except ValueError as exc:
            raise InvalidArgument(f"JSON body: {exc}") from exc
        raw = text.encode("utf-8")
        check(lib.hc_request_set_json_body(req, raw, len(raw)))
    elif multipart is not None:
        with _Multipart(lib.hc_multipart_new()) as mp:
            for part in multipart:
                if isinstance(part, Field):
                    check(lib.hc_multipart_add_field(mp, _text(part.name), _text(part.value)))
                elif isinstance(part, FilePart):
                    check(lib.hc_multipart_add_file(mp, _text(part.name), _text(part.path),
                                                    _text(part.filename), _text(part.content_type)))
                elif isinstance(part, BytesPart):
                    check(lib.hc_multipart_add_bytes(mp, _text(part.name), part.data, len(part.data),
                                                     _text(part.filename), _text(part.content_type)))
                else:
                    raise TypeError(f"multipart parts are hc.Field, hc.FilePart or hc.BytesPart, not {part!r}")
            check(lib.hc_request_set_multipart(req, mp))
    elif data is not None:
        _apply_data(req, keep, data, content_type, raised)


def _apply_data(req: Any, keep: list[Any], data: Any, content_type: str | None,
                raised: list[BaseException]) -> None:
    lib = _ffi.lib()
    ctype = _ffi.text(content_type)
    if isinstance(data, str):
        # Sent as counted bytes, not a C string: a NUL inside the text must not cut it short.
        body = data.encode("utf-8")
        check(lib.hc_request_set_body(req, body, len(body), ctype or b"text/plain; charset=utf-8"))
        return
    if isinstance(data, (bytes, bytearray, memoryview)):
        body = bytes(cast("bytes | bytearray | memoryview[int]", data))
        check(lib.hc_request_set_body(req, body, len(body), ctype))
        return
    fileno = _real_fileno(data)
    if fileno is not None:
        # A real file is read by the library itself (pread), never through Python.
        # The library reads from the descriptor's offset, but a buffered file object that has
        # been read from is ahead of its own position (read-ahead): move the descriptor back to
        # data.tell(). Seeking to the end first drops the read-ahead buffer (a seek inside it
        # would not reach the descriptor), so the file object stays consistent.
        try:
            if data.seekable():
                position = data.tell()
                if os.lseek(fileno, 0, os.SEEK_CUR) != position:
                    data.seek(0, os.SEEK_END)
                    data.seek(position)
                length = os.fstat(fileno).st_size - position
            else:
                length = -1
        except (OSError, ValueError):
            length = -1
        check(lib.hc_request_set_fd_body(req, fileno, length, ctype))
        return
    if hasattr(data, "read"):
        chunks: Iterator[bytes] = iter(lambda: data.read(65536), b"")
    else:
        chunks = iter(data)
    # The current chunk, its data's address, and how much libcurl has taken: copying from an
    # offset, rather than re-slicing the rest of the chunk on every read, copies each byte once.
    state: dict[str, Any] = {"chunk": b"", "base": 0, "at": 0}

    def read(_userdata: int | None, buf: int, cap: int, written: Any) -> int:
        try:
            while state["at"] >= len(state["chunk"]):
                piece = next(chunks, None)
                if piece is None:
                    written[0] = 0
                    return 0
                piece = piece if type(piece) is bytes else bytes(piece)
                state.update(chunk=piece, base=ctypes.cast(piece, ctypes.c_void_p).value,  # type: ignore[arg-type]
                             at=0)
            n = min(cap, len(state["chunk"]) - state["at"])
            ctypes.memmove(buf, state["base"] + state["at"], n)
            state["at"] += n
            written[0] = n
            return 0
        except BaseException as exc:  # noqa: BLE001 - re-raised by Client.request
            raised.append(exc)
            return 1

    callback = _ffi.READ_CB(read)
    keep.append(callback)
    check(lib.hc_request_set_read_body(req, callback, None, -1, ctype))


def _real_fileno(data: Any) -> int | None:
    if isinstance(data, io.BytesIO) or not hasattr(data, "fileno"):
        return None
    try:
        fileno: int = data.fileno()
        return fileno
    except (OSError, io.UnsupportedOperation, ValueError):
        return None


__all__ = ["form_encode", "Form", "Field", "FilePart", "BytesPart"]
