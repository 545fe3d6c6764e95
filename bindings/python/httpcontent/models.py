"""The values requests and responses are made of: `Headers`, `Request`, `Response` and
`CancelToken`. The client (client.py) sends them; this module does not import it, nor the
handlers (a Response calls its handler only through the methods every handler has)."""

from __future__ import annotations

import ctypes
import datetime
import json as _json
import sys as _sys
from typing import TYPE_CHECKING, Any

from . import _ffi, _lib
from . import cache as _cache
from ._handle import Handle
from ._headers import Headers
from ._history import HistoryEntry, read_history
from .errors import DecodeError, check, raise_last

if TYPE_CHECKING:
    from typing_extensions import Unpack

    from ._types import Metrics, RequestOptions
    from .transport import Timings
    from .handlers import Handler


class Response(Handle):
    """A completed response: `status`, `headers`, `url`, `content` (what the handler made of the
    body), `media_type` and `charset` from Content-Type, and transfer `metrics`; as in
    `requests`: `ok`, `elapsed`, `history` (the redirects followed), `raise_for_status()`, and
    `text` and `json()` of a body kept as bytes.

    The content is taken when the response arrives; the rest is read from the library on first
    use (a request loop that only wants the content pays for nothing else). The library's
    response is released when this object is (or by `close()`); after that the fields already
    read remain."""

    __slots__ = ("status", "content", "_url", "_media", "_headers", "_metrics", "_history")

    @staticmethod
    def _free(ptr: int) -> None:
        _ffi.lib().hc_response_free(ptr)

    def __del__(self) -> None:
        # Handle.__del__, shortened: one of these goes for every response.
        ptr = self._ptr
        if ptr is not None:
            self._ptr = None
            try:
                if not _is_finalizing():  # at exit the library may be gone: leak, don't crash
                    _lib.response_free(ptr)
            except Exception:  # module globals already torn down
                pass

    def __init__(self, ptr: int | None, handler: Handler,
                 fetched: _ffi.FetchResult | None = None) -> None:
        if not ptr:
            raise_last()
        self._ptr = ptr
        self._url: str | None = None
        self._media: tuple[str | None, str | None] | None = None
        self._headers: Headers | None = None
        self._metrics: Metrics | None = None
        self._history: list[HistoryEntry] | None = None
        try:
            if fetched is None:
                self.status: int = _ffi.lib().hc_response_status(ptr)
                self.content: Any = handler._content(ptr)
            else:  # hc_client_fetch reported the status (and a bytes handler's body) already
                self.status = fetched.status
                self.content = handler._fetched_content(ptr, fetched)
        except BaseException:
            self.close()
            raise

    @classmethod
    def _small(cls, ptr: int, status: int, content: bytes) -> Response:
        """The fast paths' constructor: a response whose small body the caller copied already
        (`content`), made without `__init__` or the handler; the other fields are read from
        the library on first use, as always. The one place outside `__init__` that fills the
        slots."""
        response = _new(cls)
        response._ptr = ptr
        response._url = response._media = response._headers = None
        response._metrics = response._history = None
        response.status = status
        response.content = content
        return response

    def _native(self) -> int:
        if self._ptr is None:
            raise ValueError("the response is closed; read its fields before closing it")
        return self._ptr

    @property
    def url(self) -> str:
        url = self._url
        if url is None:
            url = self._url = _ffi.lib().hc_response_url(self._native()).decode("utf-8", "replace")
        return url

    @property
    def reason(self) -> str:
        """The reason phrase of the status line ("" for HTTP/2 and later)."""
        return (_ffi.lib().hc_response_reason(self._native()) or b"").decode("latin-1")

    @property
    def http_version(self) -> str:
        """The protocol version of the status line: "HTTP/1.1", "HTTP/2"."""
        return (_ffi.lib().hc_response_http_version(self._native()) or b"").decode("latin-1")

    @property
    def headers(self) -> Headers:
        headers = self._headers
        if headers is None:
            raw = _ffi.borrowed_bytes(_ffi.lib().hc_response_headers_raw, self._native())
            headers = self._headers = Headers.parse(raw)
        return headers

    def _content_type(self) -> tuple[str | None, str | None]:
        if self._media is None:
            lib = _ffi.lib()
            media = lib.hc_response_media_type(self._native())
            charset = lib.hc_response_charset(self._native())
            self._media = (media.decode() if media else None, charset.decode() if charset else None)
        return self._media

    @property
    def media_type(self) -> str | None:
        return self._content_type()[0]

    @property
    def charset(self) -> str | None:
        return self._content_type()[1]

    @property
    def cache_status(self) -> str | None:
        """How the client's cache answered: "miss", "hit", "revalidated" or "stale" (None: the
        client has no cache, or it did not apply to the request)."""
        return _cache.status_name(_ffi.lib().hc_response_cache_status(self._native()))

    @property
    def from_cache(self) -> bool:
        """Whether the body came from the cache (a hit, a revalidated or a stale response)."""
        return self.cache_status not in (None, "miss")

    @property
    def digest(self) -> str | None:
        """The digest a file download computed ("sha256:<hex>"), else None."""
        value = getattr(self.content, "digest", None)
        return value if isinstance(value, str) else None

    @property
    def metrics(self) -> Metrics:
        """wire_bytes (body bytes on the wire), decoded_bytes (after decompression) and
        total_seconds."""
        if self._metrics is None:
            wire, decoded, seconds = ctypes.c_int64(), ctypes.c_int64(), ctypes.c_double()
            _ffi.lib().hc_response_metrics(self._native(), ctypes.byref(wire), ctypes.byref(decoded),
                                           ctypes.byref(seconds))
            self._metrics = {"wire_bytes": wire.value, "decoded_bytes": decoded.value,
                             "total_seconds": seconds.value}
        return self._metrics

    @property
    def timings(self) -> "Timings":
        """When each phase ended, in seconds from the start (dns, connect, tls, pretransfer,
        first_byte, total, redirect): transport.py."""
        from .transport import timings
        return timings(self._native())

    @property
    def history(self) -> list[HistoryEntry]:
        """The redirect responses followed before this one, oldest first: each entry's `status`,
        `url` (where it came from) and `headers`. Empty when there was no redirect."""
        history = self._history
        if history is None:
            lib = _ffi.lib()
            history = self._history = read_history(lib.hc_response_history_count,
                                                   lib.hc_response_history_at, self._native())
        return history

    @property
    def ok(self) -> bool:
        """True unless the status is 400 or more (as `requests`: a redirect not followed is ok)."""
        return self.status < 400

    @property
    def elapsed(self) -> datetime.timedelta:
        """The time from sending the request to the end of the body (metrics' total_seconds)."""
        return datetime.timedelta(seconds=self.metrics["total_seconds"])

    def raise_for_status(self) -> None:
        """Raises `hc.UnacceptableStatus` when the status is 400 or more, the error the library
        raises for a response a handler refuses (same message, `.status`, `.headers`, `.url`,
        `.method`, `.body`, `.server_message`); otherwise does nothing. Only a handler that
        accepts such a status gets here: `accept_status=[]` (any status), or codes that include
        it (`accept_status=None` is the default 200-299)."""
        if self.status < 400:
            return
        check(_ffi.lib().hc_response_check_status(self._native()))

    @property
    def text(self) -> str:
        """The body as text: a `Text` handler's content as it is, a `Bytes` one's decoded by the
        library as a `Text` handler decodes (Content-Type charset, then byte order mark, then
        UTF-8; invalid bytes replaced, an unknown charset read as UTF-8)."""
        content = self.content
        if isinstance(content, str):
            return content
        if isinstance(content, (bytes, bytearray)):
            raw = bytes(content)
            content_type = self.headers.get("content-type")
            ct = content_type.encode("latin-1", "replace") if content_type is not None else None
            try:
                return _decode_text(raw, ct)
            except DecodeError:  # a charset the library does not know
                return _decode_text(raw, None)
        raise TypeError(f"response.text reads a Bytes or Text response; this handler made {type(content).__name__}")

    @property
    def links(self) -> dict[str, dict[str, str]]:
        """The links of the `Link` header (RFC 8288), as `requests` gives them: keyed by their
        `rel` (else their URL), each a dict with "url" and its parameters (names lowercased)."""
        lib = _ffi.lib()
        ptr = self._native()
        links: dict[str, dict[str, str]] = {}
        url, count = ctypes.c_char_p(), ctypes.c_size_t()
        name, value = ctypes.c_char_p(), ctypes.c_char_p()
        for i in range(lib.hc_response_link_count(ptr)):
            check(lib.hc_response_link_at(ptr, i, ctypes.byref(url), ctypes.byref(count)))
            link = {"url": (url.value or b"").decode("utf-8", "replace")}
            for j in range(count.value):
                check(lib.hc_response_link_param_at(ptr, i, j, ctypes.byref(name), ctypes.byref(value)))
                link.setdefault((name.value or b"").decode("utf-8", "replace"),
                                (value.value or b"").decode("utf-8", "replace"))
            links[link.get("rel") or link["url"]] = link
        return links

    def json(self, **kwargs: Any) -> Any:
        """The body parsed with `json.loads(**kwargs)`, for a `Bytes` or `Text` response (a `JSON`
        handler has parsed it already: its `content` is the value)."""
        content = self.content
        if isinstance(content, (bytes, bytearray, str)):
            return _json.loads(content, **kwargs)
        raise TypeError(f"response.json() reads a Bytes or Text response; this handler made {type(content).__name__}")

    def __repr__(self) -> str:
        return f"<Response {self.status}>"


def _decode_text(raw: bytes, content_type: bytes | None) -> str:
    """`raw` decoded by the library's text rules (hc_text_decode, lenient)."""
    lib = _ffi.lib()
    out, size = ctypes.c_void_p(), ctypes.c_size_t()
    check(lib.hc_text_decode(raw, len(raw), content_type, 0, 0, ctypes.byref(out), ctypes.byref(size)))
    try:
        return ctypes.string_at(out, size.value).decode("utf-8")
    finally:
        lib.hc_buffer_free(out)


class CancelToken(Handle):
    """Set it with `cancel()`, from any thread, to stop the requests it was passed to; they
    raise `hc.Cancelled`."""

    @staticmethod
    def _free(ptr: int) -> None:
        _ffi.lib().hc_cancel_free(ptr)

    def __init__(self) -> None:
        super().__init__(_ffi.lib().hc_cancel_new())

    def cancel(self) -> None:
        check(_ffi.lib().hc_cancel_cancel(self))

    @property
    def cancelled(self) -> bool:
        return bool(_ffi.lib().hc_cancel_is_cancelled(self))


class Request:
    """A request to send later, with `client.map`: the same arguments as `client.request`."""

    __slots__ = ("method", "url", "options")

    def __init__(self, method: str, url: str, **options: Unpack[RequestOptions]) -> None:
        self.method = method
        self.url = url
        self.options: RequestOptions = options

    def __repr__(self) -> str:
        return f"<Request {self.method} {self.url}>"


_is_finalizing = _sys.is_finalizing
_new = object.__new__

__all__ = ["Headers", "Request", "Response", "CancelToken"]
