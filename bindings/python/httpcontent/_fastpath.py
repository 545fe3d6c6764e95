"""The small-response fast path, written once: a request with no body or header of its own is
sent in one library call (hc_client_fetch, or hc_batch_fetch_queued on the event loop), and
its Response is made from the call's hc_fetch_result. A plain `Bytes` body shorter than
_LEND_MIN is copied into a Response made by `Response._small` (no `__init__`, no handler call);
any other goes through the general constructor. `Client.get`, `Client.request`, `arequest` and
the loop driver's completions all come here."""

from __future__ import annotations

import ctypes
from typing import Any

from . import _ffi, _lib
from ._constants import HC_TIMEOUT_NONE
from ._aio import _RELEASE_BATCH, _released, release_now
from .errors import last_error
from .handlers import _LEND_MIN, Handler, lent
from .models import Response

#: hc_client_fetch's timeout argument: the client's own limit.
NO_TIMEOUT = _ffi.as_arg(ctypes.c_long, 0)
#: HC_TIMEOUT_NONE: no limit, lifting the client's.
LIFTED = _ffi.as_arg(ctypes.c_long, HC_TIMEOUT_NONE)


def response_of(handler: Handler, result: Any, cls: type[Response] = Response) -> Response:
    """The Response of a fetch (`result` its hc_fetch_result, whose response it now owns): a
    `cls` holding a copy of a small plain body, else the handler's content."""
    size = result.bytes_len
    if size < _LEND_MIN and handler._plain_bytes:  # a copy: no lent memory
        return cls._small(result.response, result.status, result.bytes[:size])  # NULL, 0 gives b""
    return Response(result.response, handler, result)


def raise_fetch_error(handler: Handler, code: int, result: Any) -> None:
    """After a fetch: raises the handler's exception, else the library's error when `code` is
    one, freeing a response the fetch made; returns when there is neither."""
    exc = handler._take_exception() if handler._may_raise else None
    if exc is None and code != 0:
        exc = last_error()
    if exc is not None:
        if result.response:
            _lib.response_free(result.response)
        raise exc


class LoopResponse(Response):
    """A Response made on the event loop with its small body copied: its native response is
    freed with others, one library call for many (_aio.release), not one each."""

    __slots__ = ()

    def __del__(self) -> None:
        ptr = self._ptr
        if ptr is not None:   # _aio.release, written out (one of these goes per request)
            self._ptr = None
            _released.append(ptr)
            if len(_released) >= _RELEASE_BATCH:
                release_now()


def fetched(handler: Handler, result: Any) -> Response:
    """The Response of a request queued with hc_batch_fetch_queued (the loop driver's
    `respond`)."""
    return response_of(handler, result, LoopResponse)


#: What the loop driver makes small-bodied responses of (as `fetched` does) in its step.
SMALL = (LoopResponse, _LEND_MIN, lent)
#: The same for a driver whose responses are plain ones (as `response_of` makes): `map`'s.
PLAIN = (Response, _LEND_MIN, lent)

__all__ = ["LIFTED", "NO_TIMEOUT", "PLAIN", "SMALL", "LoopResponse", "fetched",
           "raise_fetch_error", "response_of"]
