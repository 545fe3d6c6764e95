"""The exception hierarchy: one class per hc_code, each carrying the code, the message and,
where there is one, the response it concerns."""

from __future__ import annotations

import ctypes
from typing import Any, NoReturn

from . import _lib
from ._constants import HC_EDECODE, HC_EINVALID_ARG
from . import _constants as _c
from ._headers import Headers
from ._history import HistoryEntry, read_history

# errors imports only the bottom of the package (_lib, the loader, and _headers, pure Python):
# never the client, models or handlers.


class Error(Exception):
    """Base of every httpcontent error. `.code` is the C hc_code, `.message` the explanation."""

    code = _c.HC_OK
    #: How many times the request was sent (more than 1 when a retry policy sent it again).
    attempts = 1
    #: The redirects followed before the failure, oldest first (`HistoryEntry`).
    history: list[HistoryEntry] = []
    #: How the HTTP cache answered when a response came ("miss", "hit"...), else None.
    cache_status: str | None = None

    def __init__(self, message: str, *, curl_code: int = 0, status: int = 0,
                 headers: Headers | None = None, body: bytes = b"",
                 server_message: str | None = None, offset: int | None = None,
                 url: str | None = None, method: str | None = None,
                 record_index: int | None = None) -> None:
        super().__init__(message)
        self.message = message
        #: The URL of the request that failed (the final one, after redirects, when a response
        #: came), and its method; None for a failure not tied to a request.
        self.url = url
        self.method = method
        self.curl_code = curl_code
        self.status = status
        self.headers = headers
        self.body = body
        self.server_message = server_message
        self.offset = offset
        # For a bad record of a record stream (hc.JSONLines): its index among the records.
        self.record_index = record_index

    @property
    def response(self) -> dict[str, Any] | None:
        """What is known of the response: status and headers, or None if none was received."""
        if not self.status:
            return None
        return {"status": self.status, "headers": self.headers, "body": self.body}


class InvalidArgument(Error, ValueError):
    code = _c.HC_EINVALID_ARG


class TransportError(Error):
    """libcurl could not complete the exchange; `.curl_code` is libcurl's CURLcode."""
    code = _c.HC_ETRANSPORT


class Timeout(TransportError, TimeoutError):
    """The transfer took longer than its timeout; also a `TimeoutError`."""
    code = _c.HC_ETIMEOUT


class ConnectError(TransportError, ConnectionError):
    """The server could not be reached or the connection broke: name not resolved, connection
    refused, TLS not set up, connection reset or closed without a reply (the library decides:
    `hc_error_connection_failed`); also a `ConnectionError`."""
    code = _c.HC_ETRANSPORT


class TooManyRedirects(TransportError):
    code = _c.HC_ETOO_MANY_REDIRECTS


class UnacceptableStatus(Error):
    """The handler does not accept the status. `.status`, `.headers`, `.body` (capped) and
    `.server_message` (from a JSON error document) describe the response."""
    code = _c.HC_EUNACCEPTABLE_STATUS


class UnacceptableContentType(Error):
    code = _c.HC_EUNACCEPTABLE_CONTENT_TYPE


class DecodeError(Error, ValueError):
    """The body could not be decoded; `.offset` is the byte offset when known and `.body` the
    bytes that could not be decoded. Also a `ValueError` (as `json.JSONDecodeError` is)."""
    code = _c.HC_EDECODE


class SchemaError(DecodeError):
    """A value failed a JSON Schema (`hc.Schema`): `.instance_path` (RFC 6901 pointer, "" for the
    root), `.schema_path` (pointer to the failing keyword along the evaluation path),
    `.keyword` and `.message` of the first violation; `.errors` lists every violation reported
    (one unless all errors were asked for), each a dict with those four keys. For a response,
    `.status`, `.headers` and `.body` are set as for any decode error."""
    code = _c.HC_EDECODE

    def __init__(self, message: str, *, errors: list[dict[str, str]] | None = None, **kwargs: Any) -> None:
        super().__init__(message, **kwargs)
        self.errors = errors or []
        first = self.errors[0] if self.errors else {}
        self.instance_path = first.get("instance_path", "")
        self.schema_path = first.get("schema_path", "")
        self.keyword = first.get("keyword", "")


class RequestSchemaError(SchemaError, InvalidArgument):
    """A request body failed its schema; nothing was sent (code HC_EINVALID_ARG)."""
    code = _c.HC_EINVALID_ARG


class TooLarge(Error):
    code = _c.HC_ETOO_LARGE


class Cancelled(Error):
    code = _c.HC_ECANCELLED


class LocalIOError(Error):
    """A local file operation failed (download target, upload source)."""
    code = _c.HC_EIO


class CallbackError(Error):
    """A callback of yours failed; when it was Python code, its exception is raised instead."""
    code = _c.HC_ECALLBACK


class ChecksumMismatch(Error):
    """A download's bytes do not match the digest expected of them (given with `sha256=`...,
    or sent by the server); neither the file nor a part file is left."""
    code = _c.HC_ECHECKSUM


_BY_CODE: dict[int, type[Error]] = {cls.code: cls for cls in (
    InvalidArgument, TransportError, Timeout, TooManyRedirects, UnacceptableStatus,
    UnacceptableContentType, DecodeError, TooLarge, Cancelled, LocalIOError, CallbackError,
    ChecksumMismatch)}



def last_error() -> Error:
    """The calling thread's last library error as an exception object."""
    return error_of(_lib.lib().hc_error_last())


def error_of(err: int) -> Error:
    """The library error `err` (an hc_error, borrowed) as an exception object."""
    lib = _lib.lib()
    code = lib.hc_error_code(err)
    message = (lib.hc_error_message(err) or b"").decode("utf-8", "replace")
    status = lib.hc_error_status(err)
    headers = None
    if status:
        # Every field of the response, in order, as a response's own Headers.
        fields: list[tuple[str, str]] = []
        name, value = ctypes.c_char_p(), ctypes.c_char_p()
        for i in range(lib.hc_error_header_count(err)):
            if lib.hc_error_header_at(err, i, ctypes.byref(name), ctypes.byref(value)) == 0:
                fields.append(((name.value or b"").decode("latin-1"), (value.value or b"").decode("latin-1")))
        headers = Headers(fields)
    url, method = lib.hc_error_url(err), lib.hc_error_method(err)
    server = lib.hc_error_server_message(err)
    offset = lib.hc_error_offset(err)
    record_index = lib.hc_error_record_index(err)
    cls = _BY_CODE.get(code, Error)
    if cls is TransportError and lib.hc_error_connection_failed(err):
        cls = ConnectError
    extra: dict[str, Any] = {}
    count = lib.hc_error_schema_count(err) if code in (HC_EINVALID_ARG, HC_EDECODE) else 0
    if count:
        cls = SchemaError if code == HC_EDECODE else RequestSchemaError
        extra["errors"] = [{
            "instance_path": _text(lib.hc_error_schema_instance_path(err, i)),
            "schema_path": _text(lib.hc_error_schema_path(err, i)),
            "keyword": _text(lib.hc_error_schema_keyword(err, i)),
            "message": _text(lib.hc_error_schema_message(err, i)),
        } for i in range(count)]
    exc = cls(message, **extra, curl_code=lib.hc_error_curl_code(err), status=status, headers=headers,
               body=_lib.borrowed(lib.hc_error_body, err) or b"",
               server_message=server.decode("utf-8", "replace") if server else None,
               offset=offset if offset >= 0 else None,
               url=url.decode("utf-8", "replace") if url is not None else None,
               method=method.decode("utf-8", "replace") if method is not None else None,
               record_index=record_index if record_index >= 0 else None)
    exc.attempts = lib.hc_error_attempts(err)  # how many times the request was sent
    cached = lib.hc_error_cache_status(err)  # how the HTTP cache answered, when a response came
    exc.cache_status = lib.hc_cache_status_name(cached).decode("ascii") if cached else None
    if status:
        exc.history = read_history(lib.hc_error_history_count, lib.hc_error_history_at, err)
    return exc


def _text(p: bytes | None) -> str:
    return p.decode("utf-8", "replace") if p else ""


def raise_last() -> NoReturn:
    raise last_error()


def check(code: int) -> None:
    """Raises the thread's last error when a call returned a failure code."""
    if code != 0:
        raise_last()


def check_handle(handle: int | None) -> int:
    """`handle`, or the thread's last error raised when a constructor returned NULL."""
    if not handle:
        raise_last()
    return handle


__all__ = ["Error", "InvalidArgument", "TransportError", "Timeout", "ConnectError", "TooManyRedirects",
           "UnacceptableStatus", "UnacceptableContentType", "DecodeError", "SchemaError",
           "RequestSchemaError", "TooLarge",
           "Cancelled", "LocalIOError", "CallbackError", "ChecksumMismatch"]

