"""A request's method and URL as the C strings the library takes, encoded once: the usual
methods at import, and the last URL a client sent (a loop fetching one URL encodes it once).
Every fast path encodes through here."""

from __future__ import annotations

from . import _ffi

_METHODS = {m: m.encode() for m in ("GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS")}


def method_bytes(method: str) -> bytes | None:
    """`method` as the library takes it (the usual ones without encoding them again)."""
    return _METHODS.get(method) or _ffi.text(method)


class LastURL:
    """The last URL encoded and its bytes, held as one tuple: read and replaced whole, so
    threads sharing a client never pair one URL with another's bytes."""

    __slots__ = ("_last",)

    def __init__(self) -> None:
        self._last: tuple[str | None, bytes | None] = (None, None)

    def encode(self, url: str) -> bytes | None:
        """`url` as NUL-terminated UTF-8 (`_ffi.text`), reused when it is the last one."""
        last = self._last
        if last[0] is url:
            return last[1]
        encoded = _ffi.text(url)
        self._last = (url, encoded)
        return encoded


__all__ = ["LastURL", "method_bytes"]
