"""`HistoryEntry`: one redirect a response (or an error) went through, read from the library.
Imports only the bottom of the package (_lib, _headers), so errors can use it."""

from __future__ import annotations

from ctypes import byref, c_char_p, c_int
from dataclasses import dataclass
from typing import Any

from ._headers import Headers


@dataclass(frozen=True, eq=False)
class HistoryEntry:
    """A redirect response followed on the way to the final one: its `status`, the `url` it came
    from and its `headers` (as `requests`' `r.history` entries, without a body)."""
    status: int
    url: str
    headers: Headers

    def __repr__(self) -> str:
        return f"<HistoryEntry {self.status} {self.url}>"


def read_history(count: Any, at: Any, handle: Any) -> list[HistoryEntry]:
    """The entries of hc_response_history_* or hc_error_history_* (`count`, `at`) for `handle`,
    oldest first."""
    entries: list[HistoryEntry] = []
    status, url, headers = c_int(), c_char_p(), c_char_p()
    for i in range(count(handle)):
        if at(handle, i, byref(status), byref(url), byref(headers)) != 0:
            break
        entries.append(HistoryEntry(status.value, (url.value or b"").decode("utf-8", "replace"),
                                    Headers.parse(headers.value or b"")))
    return entries


__all__ = ["HistoryEntry", "read_history"]
