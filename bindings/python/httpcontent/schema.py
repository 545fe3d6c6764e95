"""JSON Schema (draft 2020-12) validation, run by the library's Swift core.

    schema = hc.Schema({"type": "object", "required": ["id"]})
    schema.validate({"id": 3})                 # raises hc.SchemaError when invalid
    client.get(url, handler=hc.JSON(schema=schema))
    client.post(url, json=body, schema=schema)  # refused before anything is sent
"""

from __future__ import annotations

import ctypes
import datetime as _dt
import json as _json
import os
import plistlib
import uuid as _uuid
from typing import Any, Callable, Mapping, cast

from . import _ffi
from ._handle import Handle
from .errors import check

_ALL_ERRORS = 1
_SKIP_INVALID = 2

for _name, _res, _args in (
    ("hc_schema_options_new", ctypes.c_void_p, []),
    ("hc_schema_options_free", None, [ctypes.c_void_p]),
    ("hc_schema_options_add_remote", ctypes.c_int, [ctypes.c_void_p, ctypes.c_char_p, ctypes.c_char_p, ctypes.c_size_t]),
    ("hc_schema_options_set_assert_format", ctypes.c_int, [ctypes.c_void_p, ctypes.c_int]),
    ("hc_schema_options_add_transformer", ctypes.c_int, [ctypes.c_void_p, ctypes.c_char_p]),
    ("hc_schema_new_from_json", ctypes.c_void_p, [ctypes.c_char_p, ctypes.c_size_t, ctypes.c_void_p]),
    ("hc_schema_new_from_plist", ctypes.c_void_p, [ctypes.c_char_p, ctypes.c_size_t, ctypes.c_void_p]),
    ("hc_schema_free", None, [ctypes.c_void_p]),
    ("hc_schema_validate", ctypes.c_int, [ctypes.c_void_p, ctypes.c_char_p, ctypes.c_size_t, ctypes.c_int]),
    ("hc_handler_json_set_schema", ctypes.c_int, [ctypes.c_void_p, ctypes.c_void_p, ctypes.c_int]),
    ("hc_schema_format_annotations", ctypes.c_int, [ctypes.c_void_p, ctypes.c_char_p, ctypes.c_size_t,
                                                     ctypes.POINTER(ctypes.c_void_p), ctypes.POINTER(ctypes.c_size_t)]),
    ("hc_buffer_free", None, [ctypes.c_void_p]),
    ("hc_request_set_json_body_schema", ctypes.c_int,
     [ctypes.c_void_p, ctypes.c_char_p, ctypes.c_size_t, ctypes.c_void_p, ctypes.c_int]),
):
    _ffi.declare(_name, _res, _args)


def _dumps(value: Any, default: Callable[[Any], Any] | None = None) -> bytes:
    return _json.dumps(value, allow_nan=False, ensure_ascii=False, separators=(",", ":"),
                       default=default).encode("utf-8")


# ----------------------------------------------------------------------------- transformers

def _parse_date_time(text: str) -> _dt.datetime:
    t = text.replace("t", "T").replace("z", "Z")
    if t.endswith("Z"):
        t = t[:-1] + "+00:00"
    if ":60" in t[16:20]:  # a leap second has no datetime: the second before it
        t = t[:17] + "59" + t[19:]
    return _dt.datetime.fromisoformat(t)


def _encode_builtin(value: Any) -> Any:
    if isinstance(value, _dt.datetime):
        if value.tzinfo is None:
            raise TypeError("a naive datetime cannot be sent as date-time (RFC 3339 needs an offset)")
        return value.isoformat().replace("+00:00", "Z")
    if isinstance(value, _dt.date):
        return value.isoformat()
    if isinstance(value, _uuid.UUID):
        return str(value)
    raise TypeError(f"Object of type {type(value).__name__} is not JSON serializable")


def _encode_uuid(value: Any) -> Any:
    if isinstance(value, _uuid.UUID):
        return str(value)
    raise TypeError(f"Object of type {type(value).__name__} is not a UUID")


# Decoders of strings (the library lists built-in formats on strings only); encoders back to text.
# uri has no encoder: its values are the strings themselves.
BUILTIN_TRANSFORMERS: dict[str, tuple[Callable[[Any], Any], Callable[[Any], Any] | None]] = {
    "date-time": (_parse_date_time, _encode_builtin),
    "date": (_dt.date.fromisoformat, _encode_builtin),
    "uuid": (_uuid.UUID, _encode_uuid),
    "uri": (str, None),
}

Transformer = Callable[[Any], Any] | tuple[Callable[[Any], Any], Callable[[Any], Any]]


class Schema(Handle):
    """A compiled JSON Schema (draft 2020-12).

    `schema`: a dict, True/False, or a path to a JSON or property-list file (XML or binary). `remotes`: other schema documents by
    URI, for `$ref`s that leave this one (the 2020-12 meta-schemas are built in; nothing is ever
    fetched). `assert_format`: check `format` (date-time, email, ipv4... default False: formats
    are annotations, as the specification says). `transformers`: {format name: decode or
    (decode, encode)}; with a schema on a response handler, string values with a format that
    has a transformer come back converted (date-time: aware `datetime`, date: `date`, uuid:
    `uuid.UUID`, uri: str), and typed values in a `json=` body are encoded back.

    A transformer of yours applies to any JSON scalar whose schema gives it its format, numbers
    and booleans too (`{"type": "integer", "format": "cents"}` -> `Decimal`, Unix times ->
    `datetime`); the built-in ones to strings. Its encoder may return any JSON value (`int`,
    `str`, `bool`...): the body is then validated against the schema with it. Encoders are tried
    on a value that `json` cannot write, yours first (the last registered first), then the
    built-in ones; one that does not take the value raises TypeError or ValueError, or returns
    None."""

    __slots__ = ("document", "transformers", "_encoders")

    @staticmethod
    def _free(ptr: int) -> None:
        _ffi.lib().hc_schema_free(ptr)

    def __init__(self, schema: Any, *, remotes: Mapping[str, Any] | None = None,
                 assert_format: bool = False,
                 transformers: Mapping[str, Transformer] | None = None) -> None:
        plist_text: bytes | None = None
        if isinstance(schema, (str, os.PathLike)):
            with open(cast("str | os.PathLike[str]", schema), "rb") as f:
                raw_file = f.read()
            if _looks_like_plist(raw_file):
                plist_text = raw_file
                schema = plistlib.loads(raw_file)
            else:
                schema = _json.loads(raw_file)
        if not isinstance(schema, (dict, bool)):
            raise TypeError("a schema is a dict, a bool, or a path to a JSON or property-list file")
        self.document: dict[str, Any] | bool = cast("dict[str, Any] | bool", schema)
        table: dict[str, tuple[Callable[[Any], Any], Callable[[Any], Any] | None]] = dict(BUILTIN_TRANSFORMERS)
        for name, fn in (transformers or {}).items():
            table[name] = fn if isinstance(fn, tuple) else (fn, None)
        self.transformers = table
        # Yours first, the last registered first; then the built-in ones not replaced.
        mine = [table[name][1] for name in reversed(list(transformers or {}))]
        builtin = [enc for name, (_dec, enc) in BUILTIN_TRANSFORMERS.items() if name not in (transformers or {})]
        self._encoders = [enc for enc in mine + builtin if enc is not None]
        lib = _ffi.lib()
        opts = lib.hc_schema_options_new()
        try:
            check(lib.hc_schema_options_set_assert_format(opts, int(bool(assert_format))))
            for name in table:
                check(lib.hc_schema_options_add_transformer(opts, name.encode()))
            for uri, doc in (remotes or {}).items():
                raw = _dumps(doc)
                check(lib.hc_schema_options_add_remote(opts, uri.encode(), raw, len(raw)))
            if plist_text is not None:
                super().__init__(lib.hc_schema_new_from_plist(plist_text, len(plist_text), opts))
            else:
                raw = _dumps(schema)
                super().__init__(lib.hc_schema_new_from_json(raw, len(raw), opts))
        finally:
            lib.hc_schema_options_free(opts)

    def _encode(self, value: Any) -> Any:
        """json.dumps' `default`: typed values back to JSON values (request bodies), which the
        library then validates with the rest of the body."""
        for enc in self._encoders:
            try:
                out: Any = enc(value)
            except (TypeError, ValueError, AttributeError, ArithmeticError):
                continue
            if out is not None:
                return out
        raise TypeError(f"Object of type {type(value).__name__} is not JSON serializable")

    def _dumps(self, instance: Any) -> bytes:
        try:
            return _dumps(instance, self._encode)
        except ValueError as exc:
            from .errors import InvalidArgument
            raise InvalidArgument(f"cannot be written as JSON: {exc}") from exc

    def validate(self, instance: Any, *, all_errors: bool = False) -> None:
        """Raises `hc.SchemaError` when `instance` (any JSON-serializable object) is not valid:
        the first violation, or all of them in `.errors` with `all_errors`."""
        self._check_open()
        raw = self._dumps(instance)
        check(_ffi.lib().hc_schema_validate(self, raw, len(raw), _ALL_ERRORS if all_errors else 0))

    def is_valid(self, instance: Any) -> bool:
        self._check_open()
        raw = self._dumps(instance)
        code: int = _ffi.lib().hc_schema_validate(self, raw, len(raw), 0)
        return code == 0

    def iter_errors(self, instance: Any) -> list[dict[str, str]]:
        """Every violation, as dicts with instance_path, schema_path, keyword, message."""
        from .errors import SchemaError
        try:
            self.validate(instance, all_errors=True)
        except SchemaError as exc:
            return exc.errors
        return []

    def transform(self, value: Any) -> Any:
        """A copy of `value` with every string whose (passing) schema gives it a `format` that has
        a transformer converted: date-time → aware `datetime`, date → `date`, uuid →
        `uuid.UUID`, uri → str, and the registered ones. Where the formats are is worked out by
        the library, along the same evaluation as validation ($ref, anyOf branches that pass...).
        Raises `hc.SchemaError` when `value` is not valid."""
        return self.transform_text(self._dumps(value), validate=True)

    def transform_text(self, raw: bytes, *, validate: bool = False) -> Any:
        """`transform` for JSON text (already validated unless `validate`)."""
        lib = _ffi.lib()
        if validate:
            check(lib.hc_schema_validate(self, raw, len(raw), 0))
        value = _json.loads(raw)
        out, size = ctypes.c_void_p(), ctypes.c_size_t()
        check(lib.hc_schema_format_annotations(self, raw, len(raw), ctypes.byref(out), ctypes.byref(size)))
        try:
            annotations = ctypes.string_at(out, size.value) if out.value else b"[]"
        finally:
            lib.hc_buffer_free(out)
        return self._apply(value, annotations)

    def _apply(self, value: Any, annotations: bytes) -> Any:
        """Converts the values at the pointers of `annotations` ([[pointer, format], ...]), which
        the library lists where a format's transformer applies (strings for the built-in ones,
        any scalar for yours); a property list's (naive UTC) date under "date-time" becomes
        aware, as a transformed date-time string would be."""
        for pointer, fmt in _json.loads(annotations):
            decode: Callable[[Any], Any] = self.transformers[fmt][0]
            kinds: tuple[type, ...] = (str, int, float, bool, type(None))
            if fmt == "date-time":
                decode = _aware_or(decode)
                kinds = (str, _dt.datetime)
            if pointer == "":
                value = decode(value) if isinstance(value, kinds) else value
                continue
            tokens = [t.replace("~1", "/").replace("~0", "~") for t in pointer[1:].split("/")]
            parent: Any = value
            for token in tokens[:-1]:
                parent = _child(parent, token)
            last: Any = int(tokens[-1]) if isinstance(parent, list) else tokens[-1]
            if isinstance(parent[last], kinds):
                parent[last] = decode(parent[last])
        return value


def _child(parent: Any, token: str) -> Any:
    """The member or element a JSON Pointer token names."""
    try:
        return parent[token]
    except TypeError:  # a list: the token is an index
        return parent[int(token)]


def _aware_or(decode: Callable[[str], Any]) -> Callable[[Any], Any]:
    """`decode` for strings; a naive datetime (a plist date, UTC) made aware."""
    def convert(v: Any) -> Any:
        if isinstance(v, _dt.datetime):
            return v.replace(tzinfo=_dt.timezone.utc) if v.tzinfo is None else v
        return decode(v)
    return convert


def _looks_like_plist(raw: bytes) -> bool:
    """A property list (binary, or XML: "<" first), as the library tells schema documents apart."""
    if raw.startswith(b"bplist"):
        return True
    return raw.removeprefix(b"\xef\xbb\xbf").lstrip(b" \t\r\n").startswith(b"<")


__all__ = ["Schema"]
