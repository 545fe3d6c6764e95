"""Response content handlers: what becomes of a body, decided per request.

Each handler describes the handling; every request creates fresh handling state from it, so one
handler object may serve many requests. Every built-in takes `accept_status=` (codes, ranges,
`(low, high)` pairs or `"200-299"` strings; an empty list accepts any status) and
`accept_types=` (media ranges such as `"application/json"`, `"image/*"`, `"*/*+json"`).
"""

from __future__ import annotations

from typing import Any, Iterable, Union

from . import _ffi
from ._handle import Handle
from .errors import check

StatusSpec = Union[int, range, tuple, str]


def _status_ranges(spec: Iterable[StatusSpec]) -> list[tuple[int, int]]:
    ranges = []
    for item in spec:
        if isinstance(item, bool):
            raise TypeError("accept_status takes status codes, not booleans")
        if isinstance(item, int):
            ranges.append((item, item))
        elif isinstance(item, range):
            if len(item):
                ranges.append((item[0], item[-1]))
        elif isinstance(item, tuple) and len(item) == 2:
            ranges.append((int(item[0]), int(item[1])))
        elif isinstance(item, str):
            low, _, high = item.partition("-")
            ranges.append((int(low), int(high or low)))
        else:
            raise TypeError(f"accept_status: cannot read {item!r} as a status code or range")
    return ranges


class _NativeHandler(Handle):
    """The library's hc_handler behind a Python handler."""

    @staticmethod
    def _free(ptr: int) -> None:
        _ffi.lib().hc_handler_free(ptr)


class Handler:
    """Base of the built-in handlers. Subclasses say how to make the native handler and how
    to read the content from a response."""

    def __init__(self, *, accept_status: Iterable[StatusSpec] | None = None,
                 accept_types: Iterable[str] | None = None) -> None:
        self.accept_status = None if accept_status is None else _status_ranges(accept_status)
        self.accept_types = None if accept_types is None else list(accept_types)
        self._native: _NativeHandler | None = None

    # Subclasses override these two.
    def _new_native(self) -> int:
        raise NotImplementedError

    def _content(self, response_ptr: int) -> Any:
        return None

    def _handle(self) -> _NativeHandler:
        """The native handler, made once and configured with the acceptance options."""
        if self._native is None:
            native = _NativeHandler(self._new_native())
            lib = _ffi.lib()
            if self.accept_status is not None:
                check(lib.hc_handler_accept_any_status(native))
                for low, high in self.accept_status:
                    check(lib.hc_handler_accept_status(native, low, high))
            for media_range in self.accept_types or ():
                check(lib.hc_handler_accept_type(native, _ffi.text(media_range)))
            self._native = native
        return self._native

    def close(self) -> None:
        if self._native is not None:
            self._native.close()
            self._native = None


class Discard(Handler):
    """Takes nothing from the body; `response.content` is None. Accepts 200-299, any type."""

    def _new_native(self) -> int:
        return _ffi.lib().hc_handler_discard_new()


class Bytes(Handler):
    """Keeps the body as `bytes`. `max_size` (decoded bytes) fails larger bodies with
    `hc.TooLarge` as soon as they pass it. Accepts 200-299, any type."""

    def __init__(self, max_size: int | None = None, **acceptance: Any) -> None:
        super().__init__(**acceptance)
        if max_size is not None and max_size <= 0:
            raise ValueError("max_size must be positive (or None for no limit)")
        self.max_size = max_size

    def _new_native(self) -> int:
        return _ffi.lib().hc_handler_bytes_new(self.max_size or 0)

    def _content(self, response_ptr: int) -> bytes:
        return _ffi.borrowed_bytes(_ffi.lib().hc_response_bytes, response_ptr)


__all__ = ["Handler", "Discard", "Bytes"]
