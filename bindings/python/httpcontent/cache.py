"""The HTTP cache (RFC 9111) from Python: `hc.Cache`, given to `hc.Client(cache=...)`.

The cache lives in the library (`include/httpcontent/cache.h`): this module only makes the
handle and reads the status names from the library, so every rule and every name has one
source. A response says how the cache answered with `r.cache_status` ("miss", "hit",
"revalidated", "stale"; None without a cache) and `r.from_cache`; so does an error where a
response came (`e.cache_status`).
"""

from __future__ import annotations

import ctypes
import os

from . import _constants as _c
from . import _ffi
from ._handle import Handle

_ffi.declare("hc_cache_new", ctypes.c_void_p, [ctypes.c_char_p, ctypes.c_int64, ctypes.c_uint])
_ffi.declare("hc_cache_free", None, [ctypes.c_void_p])
_ffi.declare("hc_cache_size", ctypes.c_int64, [ctypes.c_void_p])
_ffi.declare("hc_client_set_cache", ctypes.c_int, [ctypes.c_void_p, ctypes.c_void_p])
_ffi.declare("hc_response_cache_status", ctypes.c_int, [ctypes.c_void_p])
_ffi.declare("hc_error_cache_status", ctypes.c_int, [ctypes.c_void_p])
_ffi.declare("hc_cache_status_name", ctypes.c_char_p, [ctypes.c_int])


def status_name(status: int) -> str | None:
    """The name of an hc_cache_status value, as the library spells it; None for HC_CACHE_NONE."""
    if not status:
        return None
    name = _ffi.lib().hc_cache_status_name(status)
    return name.decode("ascii") if name else None


class Cache(Handle):
    """An HTTP cache for `hc.Client(cache=...)`: in memory (`path=None`, the default) or in a
    SQLite database file that several clients, threads and processes may share.

    `max_bytes`: the most body bytes kept, least recently used evicted first (None: the library's
    default, 64 MiB in memory, 256 MiB in a file). `shared`: the rules of a shared cache instead
    of a private one. A file that is not a database, or another application's database, raises
    `hc.LocalIOError` (`code` HC_ELOCAL_IO) and is left as it is."""

    __slots__ = ()

    @staticmethod
    def _free(ptr: int) -> None:
        _ffi.lib().hc_cache_free(ptr)

    def __init__(self, path: str | os.PathLike[str] | None = None, *, max_bytes: int | None = None,
                 shared: bool = False) -> None:
        lib = _ffi.lib()
        encoded = _ffi.text(os.fspath(path)) if path is not None else None
        flags = _c.HC_CACHE_SHARED if shared else 0
        super().__init__(lib.hc_cache_new(encoded, int(max_bytes or 0), flags))

    @property
    def size(self) -> int:
        """The body bytes the cache holds now."""
        size = _ffi.lib().hc_cache_size(self)
        if size < 0:
            from .errors import raise_last
            raise_last()
        return int(size)


__all__ = ["Cache", "status_name"]
