"""The client: sends requests on the caller's thread (one at a time, or many at once with
`map`). Its asyncio methods are in _aclient.py, its streaming iterators in _iterators.py, the
preparing of a request in _prepare.py and the small-response fast path in _fastpath.py."""

from __future__ import annotations

import ctypes
from typing import TYPE_CHECKING, Any, Generator, Iterable

from . import _feed, _ffi, _lib
from . import _constants as _c
from . import session as _session
from . import streaming as _streaming
from . import transport as _transport
from ._aclient import LoopMethods, default_concurrency
from ._aio import LoopDriver
from ._fastpath import LIFTED, NO_TIMEOUT, raise_fetch_error, response_of
from ._iterators import StreamingMethods
from ._handle import Handle
from ._prepare import Prepared, limits, ms, pairs, prepare
from ._types import UNSET, FormInput, HeadersInput, Progress, _Unset
from ._urls import LastURL, method_bytes
from .errors import CallbackError, check
from .handlers import Bytes, Handler
from .models import CancelToken, Request, Response

_ffi.declare("hc_default_max_redirects", ctypes.c_int, [])

if TYPE_CHECKING:
    from typing_extensions import Unpack

    from ._types import RequestOptions, SendOptions
    from .cache import Cache


class Client(LoopMethods, StreamingMethods, Handle):
    """Sends requests; keeps connections alive between them. Defaults, the library's (an
    option left out is not set): no total timeout, 30 s to connect
    (`hc_default_connect_timeout_ms`), redirects followed (at most `hc_default_max_redirects`,
    10), TLS verified, compressed bodies decoded, 64 KiB of a rejected body kept
    (`hc_default_rejected_body_limit`).

    Time limits, in seconds (None: none): `timeout` the total for a request, `connect_timeout`
    to connect, `read_timeout` the longest silence between bytes (the limit for streams, which
    a total would cut however healthy); each request may set its own or lift the client's
    (`timeout=None`). `low_speed=(bytes_per_second, seconds)`
    fails a transfer that stays slower than that for that long (libcurl averages the speed over
    its last 5 s, so a stall after a burst fires a few seconds late); `rejected_body_limit` is how
    much of a rejected response's body an error keeps.

    `compressed=False` takes bodies as the server sends them (Content-Encoding and all) instead
    of asking for compressed ones and decoding them; `cert` is a client certificate (PEM file,
    or (certificate, key) files) sent when a server asks for one.

    `proxy` is a proxy URL for every request (http://, https://, socks4://, socks4a://,
    socks5://, socks5h://; credentials as scheme://user:password@host:port); "" sends
    directly whatever the environment says; None (the default) follows the environment's
    http_proxy/https_proxy/all_proxy. https URLs go through an http proxy with CONNECT;
    socks5h lets the proxy resolve names. `no_proxy` lists hosts reached directly
    ("localhost,.example.com,10.0.0.0/8", "*"); None: the environment's, or none when `proxy`
    is given. `trust_env=False` ignores the environment's proxy variables (no_proxy too). `buffer_size` and `upload_buffer_size` set libcurl's receive buffer (the most one
    chunk holds; 1 KiB to 10 MiB) and upload buffer (16 KiB to 2 MiB); None: 256 KiB (upload 1 MiB) for
    a request sent alone, 128 KiB (upload libcurl's 64 KiB) for `map` and the asyncio methods,
    where many transfers each hold theirs."""

    @staticmethod
    def _free(ptr: int) -> None:
        _ffi.lib().hc_client_free(ptr)

    def __init__(self, *, timeout: float | None = None, connect_timeout: float | None | _Unset = UNSET,
                 read_timeout: float | None = None, low_speed: tuple[int, int] | None = None, follow_redirects: bool = True,
                 max_redirects: int | None = None, user_agent: str | None = None,
                 headers: HeadersInput | None = None,
                 verify: bool = True, ca_file: str | None = None,
                 rejected_body_limit: int | None = None,
                 proxy: str | None = None, no_proxy: str | None = None,
                 buffer_size: int | None = None, upload_buffer_size: int | None = None,
                 cookies: bool = True, cookie_file: str | None = None, auth: Any = None,
                 retries: "_session.Retry | None" = None, trust_env: bool = True,
                 compressed: bool = True, cert: str | tuple[str, str] | None = None,
                 cache: "Cache | None" = None, **transport: Any) -> None:
        lib = _ffi.lib()
        super().__init__(lib.hc_client_new())
        self._arg = _ffi.as_arg(ctypes.c_void_p, self._ptr)
        self._urls = LastURL()  # the last URL sent, encoded
        # _ffi.fetch_slot()s that no call is using: one is taken per call instead of making
        # one, and calls from several threads each take their own.
        self._results: list[tuple[_ffi.FetchResult, Any]] = []
        self._bytes: Bytes | None = None  # see _default_bytes
        self._drivers: dict[int, LoopDriver] = {}  # see _loop_driver, by id(loop)
        # The driver `map` left idle (at most one, usually): its batch's multi handle keeps the
        # connections, so the next `map` finds its h2 connection open instead of a new TLS
        # handshake per call. list.pop/append: threads never take the same one.
        self._idle_drivers: list[LoopDriver] = []
        self._host_limit = int(transport.get("host_limit") or 0)  # the client's, for a reused batch
        # (loop, its driver) of the loop arequest last ran on, when _fast_loop says it may be
        # recognised by its thread; else None.
        self._current: tuple[Any, LoopDriver] | None = None
        self._auth_hook: Any = None  # a custom auth hook runs per request (see _prepare)
        try:
            if timeout is not None:
                check(lib.hc_client_set_timeout_ms(self, ms(timeout)))
            if connect_timeout is not UNSET:
                check(lib.hc_client_set_connect_timeout_ms(self, ms(connect_timeout) if connect_timeout else 0))
            if read_timeout is not None:
                check(lib.hc_client_set_read_timeout_ms(self, ms(read_timeout)))
            if low_speed is not None:
                check(lib.hc_client_set_low_speed(self, int(low_speed[0]), int(low_speed[1])))
            if not follow_redirects or max_redirects is not None:
                most = lib.hc_default_max_redirects() if max_redirects is None else int(max_redirects)
                check(lib.hc_client_set_redirects(self, int(follow_redirects), most))
            if user_agent is not None:
                check(lib.hc_client_set_user_agent(self, _ffi.text(user_agent)))
            for name, value in pairs(headers):
                check(lib.hc_client_add_header(self, _ffi.text(name), _ffi.text(value)))
            check(lib.hc_client_set_verify_tls(self, int(verify)))
            if ca_file is not None:
                check(lib.hc_client_set_ca_file(self, _ffi.text(ca_file)))
            if cert is not None:
                cert_file, key_file = (cert, None) if isinstance(cert, str) else cert
                check(lib.hc_client_set_client_cert(self, _ffi.text(cert_file), _ffi.text(key_file)))
            if not compressed:
                check(lib.hc_client_set_compressed(self, 0))
            if rejected_body_limit is not None:
                check(lib.hc_client_set_rejected_body_limit(self, int(rejected_body_limit)))
            if buffer_size is not None or upload_buffer_size is not None:
                check(lib.hc_client_set_buffer_sizes(self, int(buffer_size or 0), int(upload_buffer_size or 0)))
            if proxy is not None:
                check(lib.hc_client_set_proxy(self, _ffi.text(proxy)))
            if no_proxy is not None:
                check(lib.hc_client_set_no_proxy(self, _ffi.text(no_proxy)))
            if not trust_env:
                check(lib.hc_client_set_trust_env(self, 0))
            if not cookies or cookie_file is not None:
                check(lib.hc_client_set_cookies(self, int(bool(cookies)), _ffi.text(cookie_file)))
            if auth is not None:
                kind, a, b, callback = _session.auth_args(auth, [])
                if kind == _c.HC_AUTH_CUSTOM:
                    self._auth_hook = auth
                else:
                    check(lib.hc_client_set_auth(self, kind, a, b, callback, None))
            if retries is not None:
                check(lib.hc_client_set_retry(self, *retries.args()))
            if cache is not None:  # the HTTP cache (cache.py); the client keeps its own reference
                check(lib.hc_client_set_cache(self, cache))
            if transport:  # resolve=, unix_socket=, ca_pem=, min_tls=...: see transport.py
                _transport.configure(self, **transport)
        except BaseException:
            self.close()
            raise

    def request(self, method: str, url: str, *, handler: Handler | None = None,
                headers: HeadersInput | None = None,
                data: Any = None, content_type: str | None = None,
                params: FormInput | None = None, form: FormInput | None = None, json: Any = None,
                plist: Any = None, plist_format: str = "xml",
                multipart: Iterable[Any] | None = None, files: Any = None, arrays: str | None = None,
                timeout: float | None | _Unset = UNSET, connect_timeout: float | None | _Unset = UNSET,
                read_timeout: float | None | _Unset = UNSET, follow_redirects: bool | None = None,
                proxy: str | None = None, schema: Any = None,
                progress: Progress | None = None, cancel: CancelToken | None = None,
                cookies: Any = None, auth: Any = None,
                retries: "_session.Retry | None" = None) -> Response:
        """Sends one request and returns the response, or raises an `hc.Error` subclass.

        Bodies: `form=` (dict or pairs, form-encoded with %20 for spaces), `json=` (any
        JSON-serialisable object; NaN refused), `data=` (bytes; str sent as UTF-8 text; a file
        object, read by the library; or an iterable of bytes, sent chunked), `multipart=` (a list
        of `hc.Field`, `hc.FilePart`, `hc.BytesPart`), `plist=` (a property list: dict, list,
        str, int, float, bool, datetime, bytes, plistlib.UID) in `plist_format` "xml" (default,
        application/x-plist) or "binary" (application/x-bplist). `params=` adds query pairs.
        As in requests: `data=` a dict (or (key, value) pairs) sends a form (%20 for spaces);
        `files=` a multipart body from {"name": file_object} or {"name": (filename, bytes or
        file, content_type)}, after the fields of a `data=` dict. List values of `params`,
        `form` and a `data` dict are written as the library writes arrays by default
        (`a[]=1&a[]=2`, C `hc_form_default_array_encoding`, for queries and forms alike);
        `arrays="repeat"` (a=1&a=2) or `"indexed"` (a[0]=1) instead.
        `schema=` (an `hc.Schema`) validates the `json=` or `plist=` body before anything is sent
        (`hc.RequestSchemaError`, an `hc.SchemaError` and `hc.InvalidArgument`), and writes
        typed values (datetime, date, UUID, registered transformers) back as text.

        `timeout`, `connect_timeout`, `read_timeout` (seconds) replace the client's for this
        request; None lifts the client's limit.

        `progress` is called with a dict (received, expected, decoded, sent, to_send) as bytes
        move; returning True from it cancels the transfer. `proxy` overrides the client's for
        this request ("": directly). An exception raised by it, by a
        handler of yours or by an upload source stops the transfer and is re-raised here.

        Session: `cookies=` (dict or pairs) sent beside the jar's; `auth=` ("user", "pass"),
        `hc.BearerAuth`, `hc.DigestAuth` or a hook, instead of the client's; `retries=` an
        `hc.Retry` instead of the client's."""
        if (headers is None and data is None and params is None and form is None and json is None
                and plist is None and multipart is None and files is None
                and progress is None and cancel is None and proxy is None
                and cookies is None and auth is None and retries is None
                and schema is None and connect_timeout is UNSET and read_timeout is UNSET):
            return self._fetch(method, url, handler, timeout, follow_redirects)
        return self._send(Request(method, url, handler=handler, headers=headers, data=data,
                                  content_type=content_type, params=params, form=form,
                                  json=json, plist=plist, plist_format=plist_format,
                                  multipart=multipart, files=files, arrays=arrays,
                                  follow_redirects=follow_redirects, proxy=proxy,
                                  progress=progress, cancel=cancel, cookies=cookies, auth=auth,
                                  retries=retries, schema=schema,
                                  **limits(timeout, connect_timeout, read_timeout)))

    @property
    def cookies(self) -> "_session.Cookies":
        """The client's cookie jar (a live view); with cookies=False reading it raises."""
        return _session.Cookies(self)

    def _send(self, request: "Request") -> Response:
        """`request` as a native request (hc_client_send)."""
        self._check_open()
        prepared = prepare(request, self._bytes or self._default_bytes(), self._auth_hook)
        with prepared.native as req:
            out = ctypes.c_void_p()
            code = _ffi.lib().hc_client_send(self, req, ctypes.byref(out))
            response = prepared.outcome(code, out.value, raise_errors=True)
            assert isinstance(response, Response)  # errors were raised
            return response

    def _fetch(self, method: str, url: str, handler: Handler | None, timeout: float | None | _Unset,
               follow_redirects: bool | None) -> Response:
        """`request` without a body or headers of its own: one library call (hc_client_fetch)
        instead of building a native request, unless a custom auth hook or a handler needing a
        native per request wants the full path."""
        if self._auth_hook is not None or (handler is not None and handler._shared):
            self._check_open()
            return self._send(Request(method, url, handler=handler, follow_redirects=follow_redirects,
                                      **limits(timeout, UNSET, UNSET)))
        return self._fetched(method_bytes(method), url, handler,
                             NO_TIMEOUT if timeout is UNSET else LIFTED if timeout is None
                             else ctypes.c_long(ms(timeout)),
                             -1 if follow_redirects is None else int(follow_redirects))

    def _fetched(self, method: bytes | None, url: str, handler: Handler | None, timeout: Any,
                 follow: int) -> Response:
        """The fast path (hc_client_fetch): the path of most requests, so it is kept short
        (callgrind counts every step): the arguments are C values already, the URL encoded
        once for a loop on one URL, the result struct taken from a pool, and a small plain body
        copied into `Response._small`."""
        if self._ptr is None:
            raise ValueError("Client is closed")
        if handler is None:
            handler = self._bytes or self._default_bytes()
        native = handler._native or handler._handle()
        try:
            slot = self._results.pop()
        except IndexError:
            slot = _ffi.fetch_slot()
        result, result_ptr = slot
        code = _lib.client_fetch(self._arg, method, self._urls.encode(url), native.arg, timeout,
                                 follow, result_ptr)
        if code or handler._may_raise:
            raise_fetch_error(handler, code, result)
        response = response_of(handler, result)
        self._results.append(slot)
        return response

    def close(self) -> None:
        self._current = None
        drivers, self._drivers = getattr(self, "_drivers", {}), {}
        for driver in drivers.values():
            driver.close()
        idle, self._idle_drivers = getattr(self, "_idle_drivers", []), []
        for driver in idle:
            driver.close()
        super().close()
        shared, self._bytes = self._bytes, None
        if shared is not None:
            shared.close()

    def _default_bytes(self) -> Handler:
        """The handler of requests given none: one `Bytes` per client, shared by its requests
        (a native handler made per request would cost more than the request's own work)."""
        self._bytes = Bytes()
        return self._bytes

    def map(self, requests: Iterable["Request"], *, concurrency: int | None = None,
            host_limit: int | None = None) -> list[Any]:
        """Sends many requests at once (libcurl multi, on this thread, with the GIL released
        while it waits for the sockets; completions taken as `amap` takes them) and returns, in order, a `Response` or the `hc.Error` (or other
        exception) of each request: one failure does not stop the rest. At most `concurrency`
        transfers run at once (None: the library's default, `default_concurrency()`, 64; 0: no
        limit), and at most `host_limit` connections per host (0: no limit; None: the client's
        `host_limit`).
        Built-in handlers may be shared between requests; a handler of your own may not.
        Retries and the auth hook apply as in `request`: a request waiting to be sent again
        holds up no other."""
        self._check_open()
        items = list(requests)
        if not items:
            return []
        return self._map_blocking(items, default_concurrency() if concurrency is None else int(concurrency),
                                  self._host_limit if host_limit is None else int(host_limit))

    def _stepped(self, request: Request) -> Generator[None, None, Response]:
        """Runs `request` on this thread, in steps: a batch of one, waited on (hc_batch_wait)
        and stepped (hc_batch_perform) each time this generator is resumed, so the handler's
        callbacks run here between yields, and nothing is read while the caller holds it.
        Returns the Response (StopIteration's value) or raises the request's error, as `request`
        would. Closing it early cancels the transfer. For the streaming iterators: no worker
        thread, no GIL handed back and forth per batch."""
        self._check_open()
        lib = _ffi.lib()
        prepared = prepare(request, self._bytes or self._default_bytes(), self._auth_hook)
        outcome: list[Any] = []

        def done(_userdata: int | None, code: int, response: int | None) -> None:
            try:
                outcome.append(prepared.outcome(code, response, raise_errors=False))
            except BaseException as exc:  # noqa: BLE001 - the request's outcome
                outcome.append(exc)

        _feed.watch(done, prepared.raised)   # a signal's exception at its first instruction
        callback = _ffi.DONE_CB(done)
        pending = ctypes.c_size_t()
        with _Batch(lib.hc_batch_new(self)) as batch:
            with prepared.native as req:
                check(lib.hc_batch_add(batch, req, callback, None))
            perform, wait = lib.hc_batch_perform, lib.hc_batch_wait
            # Plain C arguments: converting a handle runs Python code, where a signal's
            # exception would come out as a ctypes.ArgumentError.
            ptr, pending_ref = ctypes.c_void_p(batch._as_parameter_), ctypes.byref(pending)
            while not outcome:
                check(perform(ptr, pending_ref))
                yield   # the callbacks of this step ran: the caller takes what they left
                if outcome:
                    break
                if prepared.raised:   # a callback's exception that ctypes could not pass on
                    raise prepared.raised[0]   # (see _feed.watch); leaving cancels the transfer
                if pending.value == 0:
                    raise CallbackError("the transfer ended without an outcome")
                check(wait(ptr, 1000))   # at most libcurl's timer
        result = outcome[0]
        if isinstance(result, BaseException):
            raise result
        assert isinstance(result, Response)
        return result

    def stream(self, method: str, url: str, **kwargs: Any) -> "_streaming.StreamedResponse":
        """Sends a request and returns as soon as its head is in (httpx's `client.stream`,
        requests' `stream=True`): `with client.stream("GET", url) as r: for chunk in
        r.iter_bytes(): ...`. Every status is returned (`r.status`, `r.reason`, `r.headers`);
        the body is read, stepped on your thread, as you take it. Leaving the `with` block
        stops a transfer not yet done. The options of `request`, and `accept_status=`,
        `accept_types=`, `max_size=`."""
        self._check_open()
        return _streaming.stream(self, method, url, **kwargs)

    async def astream(self, method: str, url: str, **kwargs: Any) -> "_streaming.AsyncStreamedResponse":
        """`stream` on the running event loop, with no thread: `async with await
        client.astream("GET", url) as r: async for chunk in r.aiter_bytes(): ...`. At most
        `buffer` (8) chunks wait for you; the loop then stops reading the socket."""
        self._check_open()
        return await _streaming.astream(self, method, url, **kwargs)

    def _prepare_native(self, request: Request, default: Handler) -> Prepared:
        """`request` as a native request (for the record streams' hc_client_events)."""
        return prepare(request, default)

    def get(self, url: str, *, handler: Handler | None = None,
            **kwargs: Unpack[SendOptions]) -> Response:
        if kwargs or self._auth_hook is not None or (handler is not None and handler._shared):
            return self.request("GET", url, handler=handler, **kwargs)
        return self._fetched(_GET, url, handler, NO_TIMEOUT, -1)

    def head(self, url: str, **kwargs: Unpack[RequestOptions]) -> Response:
        return self.request("HEAD", url, **kwargs)

    def post(self, url: str, **kwargs: Unpack[RequestOptions]) -> Response:
        return self.request("POST", url, **kwargs)

    def put(self, url: str, **kwargs: Unpack[RequestOptions]) -> Response:
        return self.request("PUT", url, **kwargs)

    def patch(self, url: str, **kwargs: Unpack[RequestOptions]) -> Response:
        return self.request("PATCH", url, **kwargs)

    def delete(self, url: str, **kwargs: Unpack[RequestOptions]) -> Response:
        return self.request("DELETE", url, **kwargs)


class _Batch(Handle):
    @staticmethod
    def _free(ptr: int) -> None:
        _ffi.lib().hc_batch_free(ptr)


_GET = method_bytes("GET")

__all__ = ["Client"]
