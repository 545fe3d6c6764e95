"""Preparing a request: one module turns a `Request` and its options into the native request,
in one direction, top to bottom (`prepare`), with what must stay alive while it runs
(`Prepared`). The client, `map`, the streaming iterators and the event loop all send what this
makes."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Mapping, cast

from . import _ffi
from ._constants import HC_TIMEOUT_NONE as TIMEOUT_NONE
from . import session as _session
from ._handle import Handle
from ._types import REQUEST_OPTION_NAMES, UNSET, HeadersInput, Progress, ProgressInfo, _Unset
from .bodies import apply_body
from .errors import InvalidArgument, check, last_error
from .handlers import Handler
from .models import CancelToken, Request, Response
from .plist import set_plist_body as _set_plist_body

if TYPE_CHECKING:
    from ._types import RequestOptions


class NativeRequest(Handle):
    @staticmethod
    def _free(ptr: int) -> None:
        _ffi.lib().hc_request_free(ptr)


class Prepared:
    """A native request ready to send, with what must stay alive while it runs."""

    __slots__ = ("native", "handler", "keep", "raised")

    def __init__(self, native: NativeRequest, handler: Handler, keep: list[Any],
                 raised: list[BaseException]) -> None:
        self.native = native
        self.handler = handler
        self.keep = keep
        self.raised = raised

    def outcome(self, code: int, response: int | None, *, raise_errors: bool,
                error: BaseException | None = None) -> Any:
        """The Response, or the error: raised, or returned when `raise_errors` is False.
        `error` is the library's error when it came with the outcome (else the thread's last)."""
        lib = _ffi.lib()
        try:
            exc = self.handler._take_exception() or (self.raised[0] if self.raised else None)
            if exc is None and code != 0:
                exc = error or last_error()
            if exc is not None:
                if raise_errors:
                    raise exc
                return exc
            made = Response(response, self.handler)
            response = None  # now owned by the Response
            return made
        finally:
            if response:
                lib.hc_response_free(response)


# Options that leave nothing to set but the handler and the cancellation token.
_LEAN_OPTIONS = frozenset({"handler", "cancel"})


def prepare(request: Request, default: Handler, auth_hook: Any = None,
             cancel: CancelToken | None = None) -> Prepared:
    """The native request of `request`; `default` (the client's shared `Bytes`) is its handler
    if it names none; `auth_hook` the client's custom auth, used when the request has none;
    `cancel` a token to set when the request brings none (arequest's own)."""
    lib = _ffi.lib()
    o = request.options
    if cancel is None:
        cancel = o.get("cancel")
    if auth_hook is None and _LEAN_OPTIONS.issuperset(o):
        # A plain request (most of arequest's and amap's): three calls instead of the full walk.
        handler = o.get("handler") or default
        native = NativeRequest(lib.hc_request_new(_ffi.text(request.method), _ffi.text(request.url)))
        raised: list[BaseException] = []
        try:
            native_handler = handler._native_for(raised)
            check(lib.hc_request_set_handler(native, native_handler))
            if cancel is not None:
                check(lib.hc_request_set_cancel(native, cancel))
        except BaseException:
            native.close()
            raise
        return Prepared(native, handler, [native_handler], raised)
    unknown = set(o) - REQUEST_OPTION_NAMES
    if unknown:
        raise TypeError(f"unknown request options: {', '.join(sorted(unknown))}")
    handler = o.get("handler") or default
    native = NativeRequest(lib.hc_request_new(_ffi.text(request.method), _ffi.text(request.url)))
    raised = []
    keep: list[Any] = []
    try:
        for name, value in pairs(o.get("headers")):
            check(lib.hc_request_add_header(native, _ffi.text(name), _ffi.text(value)))
        apply_body(native, keep, params=o.get("params"), form=o.get("form"), json=o.get("json"),
                   data=o.get("data"), multipart=o.get("multipart"),
                   content_type=o.get("content_type"), raised=raised, schema=o.get("schema"),
                   files=o.get("files"), arrays=o.get("arrays"),
                   plist=o.get("plist"))
        plist_value = o.get("plist")
        if plist_value is not None:  # alone: apply_body checked the one-body rule
            _set_plist_body(native, plist_value, o.get("plist_format", "xml"), o.get("schema"))
        # The request keeps its own reference to the native handler; `keep` keeps its Python
        # object, with the callbacks it calls, for the send (the handler may be closed and make
        # new ones meanwhile).
        native_handler = handler._native_for(raised)
        keep.append(native_handler)
        check(lib.hc_request_set_handler(native, native_handler))
        set_limits(native, o.get("timeout", UNSET), o.get("connect_timeout", UNSET), o.get("read_timeout", UNSET))
        follow = o.get("follow_redirects")
        if follow is not None:
            check(lib.hc_request_set_follow_redirects(native, int(follow)))
        proxy = o.get("proxy")
        if proxy is not None:
            check(lib.hc_request_set_proxy(native, _ffi.text(proxy)))
        if cancel is not None:
            check(lib.hc_request_set_cancel(native, cancel))
        progress = o.get("progress")
        if progress is not None:
            callback = _progress_callback(progress, raised)
            keep.append(callback)
            check(lib.hc_request_set_progress(native, callback, None))
        _apply_session(native, o, auth_hook, keep, raised)
    except BaseException:
        native.close()
        raise
    return Prepared(native, handler, keep, raised)


def set_limits(native: Any, *limits: float | None | _Unset) -> None:
    """A request's total, connect and read time limits, where given (None: no limit, which lifts
    the client's)."""
    lib = _ffi.lib()
    setters = (lib.hc_request_set_timeout_ms, lib.hc_request_set_connect_timeout_ms,
               lib.hc_request_set_read_timeout_ms)
    for setter, limit in zip(setters, limits):
        if limit is not UNSET:
            check(setter(native, TIMEOUT_NONE if limit is None else ms(limit) or 1))


def limits(timeout: float | None | _Unset, connect_timeout: float | None | _Unset,
            read_timeout: float | None | _Unset) -> dict[str, Any]:
    """The time limits given (None included: it lifts the client's), as request options."""
    given = (("timeout", timeout), ("connect_timeout", connect_timeout), ("read_timeout", read_timeout))
    return {name: value for name, value in given if value is not UNSET}


def _progress_callback(progress: Progress, raised: list[BaseException]) -> Any:
    # An exception cannot cross C: keep it, cancel the transfer, re-raise after the call.
    def call(_userdata: int | None, received: int, expected: int, decoded: int, sent: int,
             to_send: int) -> int:
        try:
            info: ProgressInfo = {"received": received, "expected": expected, "decoded": decoded,
                                  "sent": sent, "to_send": to_send}
            stop = progress(info)
            return 1 if stop else 0
        except BaseException as exc:  # noqa: BLE001 - re-raised by request()
            raised.append(exc)
            return 1
    return _ffi.PROGRESS_CB(call)


def _apply_session(native: "NativeRequest", o: "RequestOptions", auth_hook: Any, keep: list[Any],
                   raised: list[BaseException]) -> None:
    """A request's cookies, auth and retry policy (Session section of the C header)."""
    lib = _ffi.lib()
    cookies = o.get("cookies")
    if cookies is not None:
        for name, value in _session.cookie_pairs(cookies):
            check(lib.hc_request_add_cookie(native, _ffi.text(name), _ffi.text(value)))
    auth: Any = o.get("auth")
    if auth is None:
        auth = auth_hook
    if auth is not None:
        kind, a, b, callback = _session.auth_args(auth, raised)
        keep.append(callback)
        check(lib.hc_request_set_auth(native, kind, a, b, callback, None))
    retries = o.get("retries")
    if retries is not None:
        check(lib.hc_request_set_retry(native, *retries.args()))


def ms(seconds: float) -> int:
    if seconds < 0:
        raise ValueError("time limits cannot be negative")
    return max(1, int(seconds * 1000)) if seconds else 0


def pairs(headers: HeadersInput | None) -> list[tuple[str, str]]:
    if headers is None:
        return []
    if isinstance(headers, Mapping):
        return list(cast("Mapping[str, str]", headers).items())
    return list(headers)



__all__ = ["NativeRequest", "Prepared", "limits", "ms", "pairs", "prepare", "set_limits"]
