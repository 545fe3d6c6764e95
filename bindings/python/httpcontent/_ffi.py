"""The library's C functions (from `_lib`) with the helpers that raise `hc.Error`s.

Feature modules call the library through this module: `_ffi.lib()`, `_ffi.declare(...)`,
`_ffi.text(...)`, `_ffi.borrowed_bytes(...)`. It imports `_lib` and `errors`, never a module
above them (the package has no import cycles; tests/test_imports.py checks it).

`client_fetch` and `response_free` are set when the library is loaded: read them from `_lib`.
"""

from __future__ import annotations

from typing import Any

from ._lib import (ACCEPT_CB, ALLOC_CB, CLEANUP_CB, DONE_CB, FINISH_CB, PROGRESS_CB, READ_CB,
                   RELEASE_CB, SONAME, WRITE_CB, FetchResult, HandlerVTable, as_arg, borrowed,
                   c_ubyte_p, declare, fetch_slot, lib)
from .errors import InvalidArgument, raise_last


def text(value: str | bytes | None) -> bytes | None:
    """A str argument as the NUL-terminated UTF-8 the C API takes. A NUL inside the value would
    silently cut it short in C (a header value, a URL or a download path other than the one
    given), so it is refused with `hc.InvalidArgument`."""
    if value is None:
        return None
    data = value if isinstance(value, bytes) else value.encode("utf-8")
    if b"\x00" in data:
        raise InvalidArgument(f"NUL byte in {value!r}: C strings end at the first NUL")
    return data


def borrowed_bytes(getter: Any, handle: Any) -> bytes:
    """Copies a (pointer, length) pair the library lends out into Python bytes; raises the
    library's error when the getter fails."""
    data = borrowed(getter, handle)
    if data is None:
        raise_last()
        raise AssertionError("unreachable")  # raise_last always raises
    return data


__all__ = ["ACCEPT_CB", "ALLOC_CB", "CLEANUP_CB", "DONE_CB", "FINISH_CB", "PROGRESS_CB", "READ_CB",
           "RELEASE_CB", "SONAME", "WRITE_CB", "FetchResult", "HandlerVTable", "as_arg",
           "borrowed", "borrowed_bytes", "c_ubyte_p", "declare", "fetch_slot", "lib", "text"]
