"""The base of every object that owns a library handle."""

from __future__ import annotations

import sys
from typing import TYPE_CHECKING, Callable

from .errors import raise_last

if TYPE_CHECKING:
    from typing_extensions import Self


class Handle:
    """Owns one library handle: `close()` frees it (idempotent), `with` closes on exit, and the
    finalizer is a safety net. A closed handle raises on use instead of reaching C."""

    __slots__ = ("_ptr", "__weakref__")
    _free: Callable[[int], None]  # the library's *_free for this kind of handle

    def __init__(self, handle: int | None) -> None:
        if not handle:
            raise_last()
        self._ptr: int | None = handle

    @property
    def _as_parameter_(self) -> int:
        if self._ptr is None:
            raise ValueError(f"{type(self).__name__} is closed")
        return self._ptr

    def _check_open(self) -> None:
        if self._ptr is None:
            raise ValueError(f"{type(self).__name__} is closed")

    @property
    def closed(self) -> bool:
        return self._ptr is None

    def close(self) -> None:
        ptr, self._ptr = self._ptr, None
        if ptr:
            type(self)._free(ptr)

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def __del__(self) -> None:
        # At interpreter shutdown the library may already be gone; leak rather than crash.
        if sys is None or sys.is_finalizing():
            return
        try:
            self.close()
        except Exception:
            pass
