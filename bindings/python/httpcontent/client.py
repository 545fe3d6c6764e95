"""The client: sends requests (one at a time, or many at once with `map`).

The values it sends and returns (Headers, Request, Response, CancelToken) live in models.py;
they are re-exported here for code that imported them from this module.
"""

from __future__ import annotations

import asyncio
import ctypes
import functools
import threading
from typing import TYPE_CHECKING, Any, AsyncGenerator, Generator, Iterable, Iterator, Mapping, cast

from . import _feed, _ffi, _lib
from . import chunks as _chunks
from ._aio import _RELEASE_BATCH, LoopDriver, _Future, _released, release_now as _release_now
from ._handle import Handle
from ._types import REQUEST_OPTION_NAMES, UNSET, FormInput, HeadersInput, Progress, ProgressInfo, _Unset
from .bodies import apply_body
from .errors import CallbackError, InvalidArgument, check, last_error
from .handlers import _LEND_MIN, Bytes, Handler
from .jsoncontent import aiter_json as _aiter_json
from .jsoncontent import iter_json as _iter_json
from . import records as _records
from .xmlcontent import aiter_xml as _aiter_xml
from .xmlcontent import iter_xml as _iter_xml
from .plist import set_plist_body as _set_plist_body
from .models import CancelToken, Headers, Request, Response
from . import session as _session
from . import streaming as _streaming
from . import transport as _transport

if TYPE_CHECKING:
    from typing_extensions import Unpack

    from ._types import RequestOptions, SendOptions


class _Request(Handle):
    @staticmethod
    def _free(ptr: int) -> None:
        _ffi.lib().hc_request_free(ptr)


class Client(Handle):
    """Sends requests; keeps connections alive between them. Defaults: no total timeout,
    30 s to connect, redirects followed (at most 10), TLS verified, compressed bodies decoded.

    Time limits, in seconds (None: none): `timeout` the total for a request, `connect_timeout`
    to connect, `read_timeout` the longest silence between bytes (the limit for streams, which
    a total would cut however healthy); each request may set its own or lift the client's
    (`timeout=None`). `low_speed=(bytes_per_second, seconds)`
    fails a transfer that stays slower than that for that long; `rejected_body_limit` is how
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
    a request sent alone, libcurl's own for `map`, where many transfers each hold theirs."""

    @staticmethod
    def _free(ptr: int) -> None:
        _ffi.lib().hc_client_free(ptr)

    def __init__(self, *, timeout: float | None = None, connect_timeout: float | None = 30.0,
                 read_timeout: float | None = None, low_speed: tuple[int, int] | None = None, follow_redirects: bool = True,
                 max_redirects: int = 10, user_agent: str | None = None,
                 headers: HeadersInput | None = None,
                 verify: bool = True, ca_file: str | None = None,
                 rejected_body_limit: int = 65536,
                 proxy: str | None = None, no_proxy: str | None = None,
                 buffer_size: int | None = None, upload_buffer_size: int | None = None,
                 cookies: bool = True, cookie_file: str | None = None, auth: Any = None,
                 retries: "_session.Retry | None" = None, trust_env: bool = True,
                 compressed: bool = True, cert: str | tuple[str, str] | None = None,
                 **transport: Any) -> None:
        lib = _ffi.lib()
        super().__init__(lib.hc_client_new())
        self._arg = _ffi.as_arg(ctypes.c_void_p, self._ptr)
        self._last_url: tuple[str | None, bytes | None] = (None, None)
        # _ffi.fetch_slot()s that no call is using: one is taken per call instead of making
        # one, and calls from several threads each take their own.
        self._results: list[tuple[_ffi.FetchResult, Any]] = []
        self._bytes: Bytes | None = None  # see _default_bytes
        self._drivers: dict[int, LoopDriver] = {}  # see _loop_driver, by id(loop)
        # (loop, its driver) of the loop arequest last ran on, when _fast_loop says it may be
        # recognised by its thread; else None.
        self._current: tuple[Any, LoopDriver] | None = None
        self._auth_hook: Any = None  # a custom auth hook runs per request (see _prepare)
        try:
            if timeout is not None:
                check(lib.hc_client_set_timeout_ms(self, _ms(timeout)))
            check(lib.hc_client_set_connect_timeout_ms(self, _ms(connect_timeout) if connect_timeout else 0))
            if read_timeout is not None:
                check(lib.hc_client_set_read_timeout_ms(self, _ms(read_timeout)))
            if low_speed is not None:
                check(lib.hc_client_set_low_speed(self, int(low_speed[0]), int(low_speed[1])))
            check(lib.hc_client_set_redirects(self, int(follow_redirects), int(max_redirects)))
            if user_agent is not None:
                check(lib.hc_client_set_user_agent(self, _ffi.text(user_agent)))
            for name, value in _pairs(headers):
                check(lib.hc_client_add_header(self, _ffi.text(name), _ffi.text(value)))
            check(lib.hc_client_set_verify_tls(self, int(verify)))
            if ca_file is not None:
                check(lib.hc_client_set_ca_file(self, _ffi.text(ca_file)))
            if cert is not None:
                cert_file, key_file = (cert, None) if isinstance(cert, str) else cert
                check(lib.hc_client_set_client_cert(self, _ffi.text(cert_file), _ffi.text(key_file)))
            if not compressed:
                check(lib.hc_client_set_compressed(self, 0))
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
                if kind == 4:
                    self._auth_hook = auth
                else:
                    check(lib.hc_client_set_auth(self, kind, a, b, callback, None))
            if retries is not None:
                check(lib.hc_client_set_retry(self, *retries.args()))
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
                                  **_limits(timeout, connect_timeout, read_timeout)))

    @property
    def cookies(self) -> "_session.Cookies":
        """The client's cookie jar (a live view); with cookies=False reading it raises."""
        return _session.Cookies(self)

    def _send(self, request: "Request") -> Response:
        """`request` as a native request (hc_client_send)."""
        self._check_open()
        prepared = _prepare(request, self._bytes or self._default_bytes(), self._auth_hook)
        with prepared.native as req:
            out = ctypes.c_void_p()
            code = _ffi.lib().hc_client_send(self, req, ctypes.byref(out))
            response = prepared.outcome(code, out.value, raise_errors=True)
            assert isinstance(response, Response)  # errors were raised
            return response

    def _fetch(self, method: str, url: str, handler: Handler | None, timeout: float | None | _Unset,
               follow_redirects: bool | None) -> Response:
        """`request` without a body or headers of its own: one library call (hc_client_fetch)
        instead of building a native request. This is the path of most requests, so it is kept
        short (callgrind counts every step): the encoded URL of the last call is reused, the
        arguments are C values already, and a plain `Bytes` response is made here without
        calling its `__init__` or the handler."""
        if self._ptr is None:
            raise ValueError("Client is closed")
        if self._auth_hook is not None:  # the hook runs per request, from a native request
            return self._send(Request(method, url, handler=handler, follow_redirects=follow_redirects,
                                      **_limits(timeout, UNSET, UNSET)))
        if handler is None:
            handler = self._bytes or self._default_bytes()
        elif handler._shared:  # a native of its own for this request (Handler._native_for)
            return self._send(Request(method, url, handler=handler, follow_redirects=follow_redirects,
                                      **_limits(timeout, UNSET, UNSET)))
        native = handler._native or handler._handle()
        last = self._last_url
        if last[0] is url:
            url_bytes = last[1]
        else:
            url_bytes = _ffi.text(url)
            self._last_url = (url, url_bytes)
        try:
            slot = self._results.pop()
        except IndexError:
            slot = _ffi.fetch_slot()
        result, result_ptr = slot
        code = _lib.client_fetch(
            self._arg, _METHODS.get(method) or _ffi.text(method), url_bytes, native.arg,
            _NO_TIMEOUT if timeout is UNSET else _LIFTED if timeout is None else ctypes.c_long(_ms(timeout)),
            -1 if follow_redirects is None else int(follow_redirects), result_ptr)
        if code or handler._may_raise:
            _raise_fetch_error(handler, code, result)
        size = result.bytes_len
        if size < _LEND_MIN and handler._plain_bytes:  # a copy: no lent memory
            response = _new_response(Response)
            response._ptr = result.response
            response._url = response._media = response._headers = response._metrics = response._history = None
            response.status = result.status
            response.content = result.bytes[:size]  # NULL with length 0 gives b""
        else:
            response = Response(result.response, handler, result)
        self._results.append(slot)
        return response

    def close(self) -> None:
        self._current = None
        drivers, self._drivers = getattr(self, "_drivers", {}), {}
        for driver in drivers.values():
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
            host_limit: int = 0) -> list[Any]:
        """Sends many requests at once (libcurl multi, on this thread, with the GIL released
        while transfers run) and returns, in order, a `Response` or the `hc.Error` (or other
        exception) of each request: one failure does not stop the rest. At most `concurrency`
        transfers run at once (None: the library's default, `default_concurrency()`, 64; 0: no
        limit), and at most `host_limit` connections per host (0: no limit).
        Built-in handlers may be shared between requests; a handler of your own may not.
        Retries and the auth hook apply as in `request`: a request waiting to be sent again
        holds up no other."""
        self._check_open()
        lib = _ffi.lib()
        items = list(requests)
        results: list[Any] = [None] * len(items)
        prepared: list[_Prepared | None] = []
        default = self._bytes or self._default_bytes()

        def done(userdata: int | None, code: int, response: int | None) -> None:
            i = userdata or 0
            try:
                item = prepared[i]
                assert item is not None  # a request that failed to prepare was never added
                results[i] = item.outcome(code, response, raise_errors=False)
            except BaseException as exc:  # noqa: BLE001 - the result of that request
                results[i] = exc

        callback = _ffi.DONE_CB(done)
        with _Batch(lib.hc_batch_new(self)) as batch:
            if concurrency is not None:  # else the batch's own default
                check(lib.hc_batch_set_concurrency(batch, max(0, int(concurrency))))
            check(lib.hc_batch_set_host_limit(batch, max(0, int(host_limit))))
            for i, item in enumerate(items):
                try:
                    ready = _prepare(item, default, self._auth_hook)
                except Exception as exc:  # noqa: BLE001 - the result of that request
                    prepared.append(None)
                    results[i] = exc
                    continue
                prepared.append(ready)
                with ready.native as req:
                    check(lib.hc_batch_add(batch, req, callback, i))
            check(lib.hc_batch_run(batch))
        return results

    def _stepped(self, request: Request) -> Generator[None, None, Response]:
        """Runs `request` on this thread, in steps: a batch of one, waited on (hc_batch_wait)
        and stepped (hc_batch_perform) each time this generator is resumed, so the handler's
        callbacks run here between yields, and nothing is read while the caller holds it.
        Returns the Response (StopIteration's value) or raises the request's error, as `request`
        would. Closing it early cancels the transfer. For the streaming iterators: no worker
        thread, no GIL handed back and forth per batch."""
        self._check_open()
        lib = _ffi.lib()
        prepared = _prepare(request, self._bytes or self._default_bytes(), self._auth_hook)
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

    def iter_json(self, url: str, prefix: str = "item", **kwargs: Any) -> Iterator[Any]:
        """Yields each JSON value under the ijson `prefix` ("item": each element of a top-level
        array; "results.item": each element of the array at member "results"; "": each
        document of an NDJSON stream with `multiple_values=True`, which also accepts the NDJSON
        media types) while the body is still arriving, in bounded memory. Stopping early stops
        the transfer."""
        return _iter_json(self, url, prefix, **kwargs)

    def aiter_json(self, url: str, prefix: str = "item", **kwargs: Any) -> AsyncGenerator[Any, None]:
        """`iter_json` on the running event loop, with no thread: `async for value in
        client.aiter_json(url, "results.item")`. At most `buffer` (4) batches wait for you; the
        loop then stops reading the socket until you catch up. Leaving early stops the transfer."""
        self._check_open()
        return _aiter_json(self, self._loop_send, url, prefix, **kwargs)

    async def _loop_send(self, handler: Handler, driver: LoopDriver, *, method: str, url: str,
                         **options: Any) -> Any:
        """Sends one request of a streaming async iterator on its own driver (_aio.loop_items)."""
        return await self._await(driver, Request(method, url, handler=handler, **options))

    def _prepare_native(self, request: Request, default: Handler) -> "_Prepared":
        """`request` as a native request (for the record streams' hc_client_events)."""
        return _prepare(request, default)

    def iter_lines(self, url: str, **kwargs: Any) -> Iterator[str]:
        """Yields each text line (str, no terminator; empty lines and a last unterminated line
        kept) while the body arrives: `max_line_size=` (bytes, default 1 MiB), `strict=`, and
        the request options. Stopping early stops the transfer. See `hc.Lines`."""
        return _records.iter_lines(self, url, **kwargs)

    def iter_json_lines(self, url: str, **kwargs: Any) -> Iterator[Any]:
        """Yields each JSON record (RFC 7464 when the Content-Type is application/json-seq, else
        JSON Lines / NDJSON; `framing="lines"`, `"seq"` or `"concatenated"` (`{..}{..}`) to
        choose) as `json.loads` gives it, while the body arrives, in
        bounded memory. A bad record raises `hc.DecodeError` with `.record_index` and `.offset`,
        or with `skip_bad=True` goes to `on_skip(error)`. See `hc.JSONLines`."""
        return _records.iter_json_lines(self, url, **kwargs)

    def iter_events(self, url: str, **kwargs: Any) -> Iterator[Any]:
        """Yields each Server-Sent Event (`.event`, `.data`, `.id`, `.retry`) as it arrives;
        `reconnect=True, max_reconnects=, retry=, max_retry=, max_line_size=, max_event_size=,
        on_comment=` and the request options. See `hc.records.iter_events`."""
        return _records.iter_events(self, url, **kwargs)

    def aiter_events(self, url: str, **kwargs: Any) -> AsyncGenerator[Any, None]:
        """`iter_events` on the running event loop, with no thread: `async for event in
        client.aiter_events(url, reconnect=True)`. At most `buffer` (16) events wait for you;
        the loop then stops reading the socket until you catch up. Leaving early, or cancelling
        the task, stops the stream (also during a reconnection wait)."""
        self._check_open()
        return _records.aiter_events(self, self._loop_send, url, **kwargs)

    def aiter_lines(self, url: str, **kwargs: Any) -> AsyncGenerator[str, None]:
        """`iter_lines` on the running event loop, with no thread, the same options: `async for
        line in client.aiter_lines(url)`. At most `buffer` (4) batches wait for you; the loop
        then stops reading the socket. Leaving early (`break`, `aclose()`) or cancelling the
        task stops the transfer."""
        self._check_open()
        return _records.aiter_lines(self, self._loop_send, url, **kwargs)

    def aiter_json_lines(self, url: str, **kwargs: Any) -> AsyncGenerator[Any, None]:
        """`iter_json_lines` on the running event loop, with no thread, the same options
        (`framing`, `skip_bad`, `on_skip`, `path`, `schema`, ...); bounded and stopped as
        `aiter_lines`."""
        self._check_open()
        return _records.aiter_json_lines(self, self._loop_send, url, **kwargs)

    def iter_bytes(self, url: str, chunk_size: int | None = None, **kwargs: Any) -> Generator[bytes, None, None]:
        """Yields the body's chunks as they arrive (requests' `iter_content`, httpx's
        `iter_bytes`); with `chunk_size`, cut again into chunks of exactly that many bytes, the
        last one shorter. Stepped on your thread: nothing is read while you hold it. Stopping
        early stops the transfer. `accept_status=`, `accept_types=`, `max_size=` and the
        request options."""
        return _chunks.iter_bytes(self, url, chunk_size, **kwargs)

    def aiter_bytes(self, url: str, chunk_size: int | None = None, **kwargs: Any) -> AsyncGenerator[bytes, None]:
        """`iter_bytes` on the running event loop, with no thread. At most `buffer` (8) chunks
        wait for you; the loop then stops reading the socket. Leaving early or cancelling the
        task stops the transfer."""
        self._check_open()
        return _chunks.aiter_bytes(self, self._loop_send, url, chunk_size, **kwargs)

    def iter_xml(self, url: str, path: str, **kwargs: Any) -> Iterator[Any]:
        """Yields each `xml.etree.ElementTree.Element` matching `path` ("feed/entry": steps from
        the root element, local names or "{namespace}name") as soon as its end tag arrives, in
        flat memory however large the document. A generator: closing it stops the transfer.
        Depth and entity limits raise `hc.DecodeError`."""
        return _iter_xml(self, url, path, **kwargs)

    def aiter_xml(self, url: str, path: str, **kwargs: Any) -> AsyncGenerator[Any, None]:
        """`iter_xml` on the running event loop, with no thread, the same options. At most
        `buffer` (4) batches wait for you; the loop then stops reading the socket. Leaving early
        or cancelling the task stops the transfer."""
        self._check_open()
        return _aiter_xml(self, self._loop_send, url, path, **kwargs)

    async def arequest(self, method: str, url: str, **kwargs: Unpack[RequestOptions]) -> Response:
        """`request` on the running event loop, with no thread: the loop watches the batch's
        sockets (see _aio.py), so thousands may be in flight at once. Cancelling the task
        cancels the transfer. Handlers' callbacks run on the loop's thread."""
        current = self._current
        if current is not None and current[0]._thread_id == _get_ident() and current[1].open:
            # The loop last seen is the one running on this thread (see _fast_loop): found
            # without get_running_loop, whose pid check is a system call per request.
            loop, driver = current
            future: asyncio.Future[Any] = _Future(loop=loop)
        else:
            loop = asyncio.get_running_loop()
            found = self._drivers.get(id(loop))
            driver = (found if found is not None and found.loop is loop and found.open
                      else self._loop_driver())
            future = loop.create_future()
            self._current = (loop, driver) if _fast_loop(loop) else None
        if kwargs:
            key = self._submit(driver, Request(method, url, **kwargs), future)
        else:   # the common case: one library call to queue it (`_fetch_on`, inlined)
            handler = self._bytes or self._default_bytes()
            native = handler._native
            if native is not None and self._auth_hook is None and driver.fetches:
                last = self._last_url
                if last[0] is url:
                    url_bytes = last[1]
                else:
                    url_bytes = _ffi.text(url)
                    self._last_url = (url, url_bytes)
                # driver.fetch, written out (one frame less per request).
                key = driver._next
                driver._next = key + 1
                driver._out.append((_METHODS.get(method) or _ffi.text(method), url_bytes, native, key))
                driver._waiting[key] = (None, handler, future)
                if not driver._soon:
                    driver._soon = True
                    loop.call_soon(driver._step)
            else:
                key = self._fetch_on(driver, method, url, handler, future)
        try:
            response: Response = await future
        except asyncio.CancelledError:
            driver.cancel(key)
            raise
        return response

    async def amap(self, requests: Iterable[Request], *, concurrency: int | None = None,
                   host_limit: int = 0) -> list[Any]:
        """`map` on the running event loop, with no thread: in order, a `Response` or the
        error of each request. At most `concurrency` are in flight (None: the library's
        default, `default_concurrency()`; 0: all at once); the next
        is queued as one completes, with no task per request. Cancelling the task cancels every
        transfer."""
        self._check_open()
        items = list(requests)
        results: list[Any] = [None] * len(items)
        if not items:
            return results
        loop = asyncio.get_running_loop()
        # The loop's own batch (its connections already made), unless a host limit needs a
        # batch of its own.
        own = LoopDriver(self, loop, host_limit=host_limit, respond=_fetched, small=_SMALL) if host_limit > 0 else None
        driver = own or self._loop_driver()
        finished = loop.create_future()
        in_flight: dict[int, int] = {}   # index -> key
        state = {"next": 0, "left": len(items), "stopped": False}

        def submit_next() -> None:
            i = state["next"]
            state["next"] = i + 1
            try:
                in_flight[i] = self._submit(driver, items[i], functools.partial(done, i))
            except BaseException as exc:  # noqa: BLE001 - that request's outcome
                done(i, exc)

        def done(i: int, outcome: Any) -> None:
            in_flight.pop(i, None)
            results[i] = outcome
            state["left"] -= 1
            if state["stopped"]:
                return
            if state["next"] < len(items):
                submit_next()
            elif state["left"] == 0 and not finished.done():
                finished.set_result(None)

        if concurrency is None:
            concurrency = default_concurrency()
        window = len(items) if concurrency <= 0 else min(concurrency, len(items))
        try:
            for _ in range(window):
                if state["stopped"]:
                    break
                submit_next()
            await finished
        except BaseException:
            state["stopped"] = True
            for key in in_flight.values():
                driver.cancel(key)
            raise
        finally:
            if own is not None:
                own.close()
        return results

    def _submit(self, driver: LoopDriver, request: Request, sink: Any) -> int:
        """Queues `request` on `driver`, its outcome to `sink`; returns its key. A request with
        no option but a handler takes one library call (`_fetch_on`)."""
        o = request.options
        if not o or (len(o) == 1 and "handler" in o):
            handler = o.get("handler") or self._bytes or self._default_bytes()
            return self._fetch_on(driver, request.method, request.url, handler, sink)
        return driver.add(_prepare(request, self._bytes or self._default_bytes(), self._auth_hook), sink)

    def _fetch_on(self, driver: LoopDriver, method: str, url: str, handler: Handler, sink: Any) -> int:
        """`_submit` of a request with no body and no header of its own (hc_batch_fetch_queued),
        unless a custom auth hook or a handler needing a native per request wants the full path."""
        if self._auth_hook is not None or handler._shared or not driver.fetches:
            return driver.add(_prepare(Request(method, url, handler=handler),
                                       self._bytes or self._default_bytes(), self._auth_hook), sink)
        native = handler._native or handler._handle()
        last = self._last_url
        if last[0] is url:
            url_bytes = last[1]
        else:
            url_bytes = _ffi.text(url)
            self._last_url = (url, url_bytes)
        return driver.fetch(_METHODS.get(method) or _ffi.text(method), url_bytes, handler, native, sink)

    def _loop_driver(self) -> LoopDriver:
        """The client's batch on the running loop, made on first use (no limit on transfers
        in flight: they cost nothing while they wait)."""
        self._check_open()
        loop = asyncio.get_running_loop()
        drivers = self._drivers
        driver = drivers.get(id(loop))
        if driver is None or driver.loop is not loop or driver.closed:
            for key, old in list(drivers.items()):   # those of loops since closed
                if old.loop.is_closed():   # (another thread may be at it too)
                    old.close()
                    drivers.pop(key, None)
            driver = drivers[id(loop)] = LoopDriver(self, loop, respond=_fetched, small=_SMALL)
        return driver

    async def _await(self, driver: LoopDriver, request: Request) -> Any:
        """Adds `request` to `driver` and waits for its outcome; a cancelled wait cancels the
        transfer."""
        future: asyncio.Future[Any] = driver.loop.create_future()
        key = self._submit(driver, request, future)
        try:
            return await future
        except asyncio.CancelledError:
            driver.cancel(key)
            raise

    def get(self, url: str, *, handler: Handler | None = None,
            **kwargs: Unpack[SendOptions]) -> Response:
        if kwargs or self._auth_hook is not None or (handler is not None and handler._shared):
            return self.request("GET", url, handler=handler, **kwargs)
        # `_fetch` for a GET, written out here: a sequential loop of small GETs spends as much
        # in the binding's Python as in its own request, and the call to `_fetch` was a tenth.
        if self._ptr is None:
            raise ValueError("Client is closed")
        if handler is None:
            handler = self._bytes or self._default_bytes()
        native = handler._native or handler._handle()
        last = self._last_url
        if last[0] is url:
            url_bytes = last[1]
        else:
            url_bytes = _ffi.text(url)
            self._last_url = (url, url_bytes)
        try:
            slot = self._results.pop()
        except IndexError:
            slot = _ffi.fetch_slot()
        result, result_ptr = slot
        code = _lib.client_fetch(self._arg, b"GET", url_bytes, native.arg, _NO_TIMEOUT, -1, result_ptr)
        if code or handler._may_raise:
            _raise_fetch_error(handler, code, result)
        size = result.bytes_len
        if size < _LEND_MIN and handler._plain_bytes:  # a copy: no lent memory
            response = _new_response(Response)
            response._ptr = result.response
            response._url = response._media = response._headers = response._metrics = response._history = None
            response.status = result.status
            response.content = result.bytes[:size]  # NULL with length 0 gives b""
        else:
            response = Response(result.response, handler, result)
        self._results.append(slot)
        return response

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


class _Prepared:
    """A native request ready to send, with what must stay alive while it runs."""

    __slots__ = ("native", "handler", "keep", "raised")

    def __init__(self, native: _Request, handler: Handler, keep: list[Any],
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


def _prepare(request: Request, default: Handler, auth_hook: Any = None,
             cancel: CancelToken | None = None) -> _Prepared:
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
        native = _Request(lib.hc_request_new(_ffi.text(request.method), _ffi.text(request.url)))
        raised: list[BaseException] = []
        try:
            native_handler = handler._native_for(raised)
            check(lib.hc_request_set_handler(native, native_handler))
            if cancel is not None:
                check(lib.hc_request_set_cancel(native, cancel))
        except BaseException:
            native.close()
            raise
        return _Prepared(native, handler, [native_handler], raised)
    unknown = set(o) - REQUEST_OPTION_NAMES
    if unknown:
        raise TypeError(f"unknown request options: {', '.join(sorted(unknown))}")
    handler = o.get("handler") or default
    native = _Request(lib.hc_request_new(_ffi.text(request.method), _ffi.text(request.url)))
    raised = []
    keep: list[Any] = []
    try:
        for name, value in _pairs(o.get("headers")):
            check(lib.hc_request_add_header(native, _ffi.text(name), _ffi.text(value)))
        apply_body(native, keep, params=o.get("params"), form=o.get("form"), json=o.get("json"),
                   data=o.get("data"), multipart=o.get("multipart"),
                   content_type=o.get("content_type"), raised=raised, schema=o.get("schema"),
                   files=o.get("files"), arrays=o.get("arrays"),
                   plist=o.get("plist"))
        plist_value = o.get("plist")
        if plist_value is not None:
            others = [n for n in ("form", "json", "data", "multipart", "files") if o.get(n) is not None]
            if others:
                raise InvalidArgument(f"one body at a time: got plist, {', '.join(others)}")
            _set_plist_body(native, plist_value, o.get("plist_format", "xml"), o.get("schema"))
        # The request keeps its own reference to the native handler; `keep` keeps its Python
        # object, with the callbacks it calls, for the send (the handler may be closed and make
        # new ones meanwhile).
        native_handler = handler._native_for(raised)
        keep.append(native_handler)
        check(lib.hc_request_set_handler(native, native_handler))
        _set_limits(native, o.get("timeout", UNSET), o.get("connect_timeout", UNSET), o.get("read_timeout", UNSET))
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
    return _Prepared(native, handler, keep, raised)


_METHODS = {m: m.encode() for m in ("GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS")}
_new_response = object.__new__


class _LoopResponse(Response):
    """A Response made on the event loop with its small body copied (`_fetched`): its native
    response is freed with others, one library call for many (_aio.release), not one each."""

    __slots__ = ()

    def __del__(self) -> None:
        ptr = self._ptr
        if ptr is not None:   # _aio.release, written out (one of these goes per request)
            self._ptr = None
            _released.append(ptr)
            if len(_released) >= _RELEASE_BATCH:
                _release_now()


def _fetched(handler: Handler, result: Any) -> Response:
    """The Response of a request queued with hc_batch_fetch_queued (`result` its
    hc_fetch_result, whose response it now owns), made as `Client._fetch` makes it."""
    if handler._plain_bytes and result.bytes_len < _LEND_MIN:  # a copy: no lent memory
        response = _new_response(_LoopResponse)
        response._ptr = result.response
        response._url = response._media = response._headers = response._metrics = response._history = None
        response.status = result.status
        response.content = result.bytes[:result.bytes_len]  # NULL with length 0 gives b""
        return response
    return Response(result.response, handler, result)


# What LoopDriver makes small-bodied responses of (as `_fetched` does) without calling it.
_SMALL = (_LoopResponse, _LEND_MIN)
_get_ident = threading.get_ident


def _fast_loop(loop: Any) -> bool:
    """Whether `loop` is recognised as the running one by its `_thread_id` (asyncio's own loops
    set it while they run on a thread, and a thread runs one loop at a time) and makes its
    futures as asyncio.Future (its create_future is asyncio's)."""
    return (isinstance(loop, asyncio.BaseEventLoop)
            and type(loop).create_future is asyncio.BaseEventLoop.create_future)
_NO_TIMEOUT = _ffi.as_arg(ctypes.c_long, 0)  # hc_client_fetch: the client's own timeout
_HC_TIMEOUT_NONE = -1  # the header's HC_TIMEOUT_NONE: no limit, lifting the client's
_LIFTED = _ffi.as_arg(ctypes.c_long, _HC_TIMEOUT_NONE)


def _set_limits(native: Any, *limits: float | None | _Unset) -> None:
    """A request's total, connect and read time limits, where given (None: no limit, which lifts
    the client's)."""
    lib = _ffi.lib()
    setters = (lib.hc_request_set_timeout_ms, lib.hc_request_set_connect_timeout_ms,
               lib.hc_request_set_read_timeout_ms)
    for setter, limit in zip(setters, limits):
        if limit is not UNSET:
            check(setter(native, _HC_TIMEOUT_NONE if limit is None else _ms(limit) or 1))


def _limits(timeout: float | None | _Unset, connect_timeout: float | None | _Unset,
            read_timeout: float | None | _Unset) -> dict[str, Any]:
    """The time limits given (None included: it lifts the client's), as request options."""
    given = (("timeout", timeout), ("connect_timeout", connect_timeout), ("read_timeout", read_timeout))
    return {name: value for name, value in given if value is not UNSET}


def _raise_fetch_error(handler: Handler, code: int, result: Any) -> None:
    """After hc_client_fetch: raises the handler's exception, else the library's error when
    `code` is one, freeing a response the fetch made; returns when there is neither."""
    exc = handler._take_exception() if handler._may_raise else None
    if exc is None and code != 0:
        exc = last_error()
    if exc is not None:
        if result.response:
            _lib.response_free(result.response)
        raise exc


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


def _apply_session(native: "_Request", o: "RequestOptions", auth_hook: Any, keep: list[Any],
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


def _ms(seconds: float) -> int:
    if seconds < 0:
        raise ValueError("time limits cannot be negative")
    return max(1, int(seconds * 1000)) if seconds else 0


def _pairs(headers: HeadersInput | None) -> list[tuple[str, str]]:
    if headers is None:
        return []
    if isinstance(headers, Mapping):
        return list(cast("Mapping[str, str]", headers).items())
    return list(headers)


def default_concurrency() -> int:
    """The library's default for transfers in flight at once: `map`, `amap` and C batches
    (`hc_batch_default_concurrency`)."""
    return int(_ffi.lib().hc_batch_default_concurrency())


__all__ = ["Client", "Request", "Response", "Headers", "CancelToken", "CallbackError", "default_concurrency"]
