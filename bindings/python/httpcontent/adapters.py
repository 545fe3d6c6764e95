"""httpcontent underneath code written for requests and httpx, in one line:

    session.mount("https://", RequestsAdapter()); session.mount("http://", RequestsAdapter())
    httpx.Client(transport=HTTPXTransport())

Each request goes through libcurl as one `client.stream()` (the body read as it arrives when the
caller streams it, in one call when it does not); what the peer does above the transport stays
with it: requests' and httpx's redirects, cookies, auth, retries and hooks. Errors become the
peer's own exceptions. Neither requests nor httpx is imported until an adapter is made."""

from __future__ import annotations

import datetime
import http.client
import ssl
from typing import Any, AsyncIterator, Iterable, Iterator

from .client import Client
from .errors import DecodeError, Error, InvalidArgument, Timeout, TransportError
from .handlers import Bytes
from .streaming import StreamedResponse

# libcurl's codes, by what the peers call them.
_TLS_CODES = frozenset({35, 53, 54, 58, 59, 60, 64, 66, 77, 80, 82, 83, 90, 91, 98})
_PROXY_CODES = frozenset({5, 97})
_BODY_CODES = frozenset({18, 56})   # the body cut short: a partial file, a receive failure
_DECODING_CODES = frozenset({61})
# Headers that describe one request's body: never a client's defaults.
_BODY_HEADERS = frozenset({"content-length", "content-type", "transfer-encoding", "content-encoding"})


def _as_tuple(value: Any) -> tuple[Any, ...]:
    return tuple(value)


class _Clients:
    """One `Client` per TLS setting the peer asks for (verify, CA bundle, client certificate),
    made on first use: redirects, cookies and the environment's proxies stay with the peer."""

    def __init__(self, client: Client | None, options: dict[str, Any]) -> None:
        self._given = client
        self._options = options
        self._made: dict[tuple[Any, ...], Client] = {}
        # The header set each client of ours sends by default (see `with_headers`).
        self._defaults: dict[tuple[Any, ...], tuple[tuple[str, str], ...]] = {}

    @property
    def given(self) -> Client | None:
        """The caller's client, with settings of its own (None: none was given)."""
        return self._given

    def get(self, verify: Any = True, cert: Any = None, http2: bool = False) -> Client:
        return self.with_headers(verify, cert, [])[0]

    def with_headers(self, verify: Any, cert: Any,
                     headers: list[tuple[str, str]]) -> tuple[Client, list[tuple[str, str]] | None]:
        """The client for these TLS settings, and the headers to send with it (None: the
        client's default headers are exactly these). A client of ours takes the first request's
        headers as its defaults: a session sends the same ones on most requests, which then go
        as one library call (`Client._fetch`, the header lines made once per client) instead
        of a native request built header by header; one with more headers sends them. A request
        lacking one of the defaults goes through a client without defaults, as the library
        would otherwise add the missing one."""
        if self._given is not None and verify is True and cert is None:
            return self._given, headers
        cert_key: Any = _as_tuple(cert) if isinstance(cert, list) else cert
        key: tuple[Any, ...] = (verify, cert_key)
        client = self._made.get(key)
        if client is None:
            try:   # (headers given among the adapter's client options stay the client's)
                defaults = [] if "headers" in self._options else [
                    (name, value) for name, value in headers if name.lower() not in _BODY_HEADERS]
                client = self._make(verify, cert, cert_key, defaults)
                self._defaults[key] = tuple(defaults)
            except Error:   # a header the library refuses: reported per request, as requests would
                client = self._make(verify, cert, cert_key, [])
                self._defaults[key] = ()
            self._made[key] = client
        defaults = self._defaults[key]
        if defaults == tuple(headers):
            return client, None
        names = {name.lower() for name, _ in headers}
        if all(name.lower() in names for name, _ in defaults):
            return client, headers
        bare_key = (*key, "bare")
        bare = self._made.get(bare_key)
        if bare is None:
            bare = self._made[bare_key] = self._make(verify, cert, cert_key, [])
            self._defaults[bare_key] = ()
        return bare, headers

    def _make(self, verify: Any, cert: Any, cert_key: Any, headers: list[tuple[str, str]]) -> Client:
        options: dict[str, Any] = dict(follow_redirects=False, cookies=False, trust_env=False,
                                       connect_timeout=None)
        options.update(self._options)
        if headers:
            options["headers"] = list(headers)
        if verify is False:
            options["verify"] = False
        elif isinstance(verify, str):
            options["ca_file"] = verify
        if cert is not None:
            options["cert"] = cert if isinstance(cert, str) else tuple(cert_key)
        return Client(**options)

    def close(self) -> None:
        for client in self._made.values():
            client.close()
        self._made.clear()
        self._defaults.clear()


def _header_pairs(headers: Any) -> list[tuple[str, str]]:
    items: Any = headers.items() if hasattr(headers, "items") else headers
    out: list[tuple[str, str]] = []
    for name, value in items:
        name = name.decode("latin-1") if isinstance(name, bytes) else str(name)
        value = value.decode("latin-1") if isinstance(value, bytes) else str(value)
        out.append((name, value))
    return out


def _joined(headers: Iterable[tuple[str, str]]) -> dict[str, str]:
    """Header fields by name, repeated ones joined with ", " (what urllib3 gives requests)."""
    out: dict[str, str] = {}
    lower: dict[str, str] = {}
    for name, value in headers:
        key = lower.setdefault(name.lower(), name)
        out[key] = f"{out[key]}, {value}" if key in out else value
    return out


def _message(headers: Iterable[tuple[str, str]]) -> http.client.HTTPMessage:
    msg = http.client.HTTPMessage()
    for name, value in headers:
        msg[name] = value
    return msg


# -- requests -------------------------------------------------------------------------------

def _requests_error(exc: Error, request: Any, *, reading: bool = False, proxy: str = "",
                    timeouts: tuple[Any, Any] = (None, None)) -> Exception:
    from requests import exceptions as rex
    code = getattr(exc, "curl_code", 0) or 0
    # A response had begun: requests would have met the error reading the body.
    reading = reading or getattr(exc, "headers", None) is not None
    if isinstance(exc, InvalidArgument):
        text = exc.message.lower()
        if "scheme" in text:
            return rex.InvalidSchema(exc.message, request=request)
        if "url" in text:
            return rex.InvalidURL(exc.message, request=request)
        if "header" in text:
            return rex.InvalidHeader(exc.message, request=request)
        return rex.RequestException(exc.message, request=request)
    if isinstance(exc, Timeout):
        if reading:
            return rex.ConnectionError(exc.message, request=request)
        connecting = getattr(exc, "headers", None) is None and "connect" in exc.message.lower()
        # As urllib3's errors, which requests wraps: callers look for "Read timed out." in
        # e.args[0].args[0].
        from urllib3.exceptions import ConnectTimeoutError, ReadTimeoutError
        if connecting:
            reason = ConnectTimeoutError(f"Connection to {request.url} timed out. "
                                         f"(connect timeout={timeouts[0]}): {exc.message}")
            return rex.ConnectTimeout(reason, request=request)
        pool: Any = None   # no urllib3 pool here
        return rex.ReadTimeout(ReadTimeoutError(pool, request.url, f"Read timed out. (read timeout="
                                                f"{timeouts[1]}): {exc.message}"), request=request)
    if isinstance(exc, DecodeError) or code in _DECODING_CODES:
        return rex.ContentDecodingError(exc.message, request=request)
    if code in _TLS_CODES:
        return rex.SSLError(exc.message, request=request)
    # Through a proxy, failing to reach or resolve it is a ProxyError, as urllib3 reports it.
    if code in _PROXY_CODES or (proxy and code in (6, 7) and not reading):
        return rex.ProxyError(exc.message, request=request)
    if reading and code in _BODY_CODES:
        return rex.ChunkedEncodingError(exc.message, request=request)
    return rex.ConnectionError(exc.message, request=request)


class _Original:
    def __init__(self, msg: http.client.HTTPMessage) -> None:
        self.msg = msg


class _RequestsRaw:
    """What requests reads a body from (its `Response.raw`): `stream()`, `read()`, `close()`,
    `release_conn()`, `headers`, `status`, `reason`, and `_original_response.msg` for the
    cookie jar. Bodies come decoded (gzip, deflate, br), as urllib3's `decode_content=True`."""

    def __init__(self, streamed: StreamedResponse | None, body: bytes | None, status: int, reason: str,
                 pairs: list[tuple[str, str]], request: Any, version: str) -> None:
        self._streamed = streamed
        self._body = body
        self.status = status
        self.reason = reason
        self.headers = _joined(pairs)
        self.version = 20 if version.startswith("HTTP/2") else 11 if version == "HTTP/1.1" else 10
        self.decode_content = True
        self._request = request
        # requests' cookie extraction (build_response, and Session.send again) reads it; with no
        # Set-Cookie there is nothing to extract, and None tells requests so before it builds
        # its mock request and response.
        cookies = any(name.lower() in ("set-cookie", "set-cookie2") for name, _ in pairs)
        self._original_response = _Original(_message(pairs)) if cookies else None
        self._pending = b""
        self._offset = 0
        self.closed = False

    def _chunks(self) -> Iterator[bytes]:
        if self._body is not None:
            body, self._body = self._body, b""
            if body:
                yield body
            return
        if self._streamed is None:
            return
        try:
            yield from self._streamed.iter_bytes()
        except Error as exc:
            raise _requests_error(exc, self._request, reading=True) from exc

    def _rest(self) -> bytes:
        """What is left of the chunk being cut, taken whole."""
        rest = self._pending[self._offset:] if self._offset else self._pending
        self._pending, self._offset = b"", 0
        return rest

    def stream(self, amt: int | None = 2 ** 16, decode_content: bool | None = None) -> Iterator[bytes]:
        if amt is None:
            rest = self._rest()
            if rest:
                yield rest
            yield from self._chunks()
            return
        while True:
            data = self.read(amt)
            if not data:
                return
            yield data

    def read(self, amt: int | None = None, decode_content: bool | None = None,
             cache_content: bool = False) -> bytes:
        if amt is None:
            return self._rest() + b"".join(self._chunks())
        # Each byte copied once: pieces cut from the current chunk at an offset, joined.
        pieces: list[bytes] = []
        need = amt
        chunks: Iterator[bytes] | None = None
        while need > 0:
            if self._offset >= len(self._pending):
                if chunks is None:
                    chunks = self._chunks()
                chunk = next(chunks, None)
                if chunk is None:
                    break
                self._pending, self._offset = chunk, 0
            piece = self._pending[self._offset:self._offset + need]
            self._offset += len(piece)
            need -= len(piece)
            pieces.append(piece)
        if self._offset >= len(self._pending):
            self._pending, self._offset = b"", 0
        return pieces[0] if len(pieces) == 1 else b"".join(pieces)

    def close(self) -> None:
        self.closed = True
        if self._streamed is not None:
            self._streamed.close()

    def release_conn(self) -> None:
        self.close()


class RequestsAdapter:
    """A `requests` transport adapter: `session.mount("https://", RequestsAdapter())`. Takes a
    `Client` of yours, or options to make one (`hc.Client`'s; redirects, cookies and the
    environment stay with requests, whatever they say). `send` honours `timeout` (a float, a
    (connect, read) pair, or urllib3's Timeout: a read timeout is the longest silence, as
    urllib3's), `verify` (bool or a CA bundle path), `cert`, `proxies` and `stream` (the body
    read as requests reads it). Bodies come decoded (gzip, deflate, br): reading `raw` with
    `decode_content=False` still gives the decoded bytes."""

    def __new__(cls, client: Client | None = None, **client_options: Any) -> Any:
        import requests.adapters

        class _Adapter(requests.adapters.BaseAdapter):
            def __init__(self) -> None:
                super().__init__()
                self._clients = _Clients(client, client_options)

            def send(self, request: Any, stream: bool = False, timeout: Any = None, verify: Any = True,
                     cert: Any = None, proxies: Any = None) -> Any:
                return _requests_send(self, request, stream, timeout, verify, cert, proxies)

            def cert_verify(self, conn: Any, url: str, verify: Any, cert: Any) -> None:
                _requests_cert_verify(url, verify, cert)

            def build_response(self, req: Any, resp: Any) -> Any:
                return _requests_build_response(self, req, resp)

            def close(self) -> None:
                self._clients.close()

            def __reduce__(self) -> Any:   # pickled with its options, as requests pickles Sessions
                return (_requests_adapter, (client, client_options))

        _Adapter.__name__ = _Adapter.__qualname__ = "RequestsAdapter"
        return _Adapter()


def _requests_adapter(client: Client | None, options: dict[str, Any]) -> Any:
    return RequestsAdapter(client, **options)


def _requests_cert_verify(url: str, verify: Any, cert: Any) -> None:
    """requests' HTTPAdapter.cert_verify's checks, with its messages (OSError)."""
    import os
    if url.lower().startswith("https") and verify and verify is not True:
        if not os.path.exists(verify):
            raise OSError(f"Could not find a suitable TLS CA certificate bundle, invalid path: {verify}")
    if cert:
        cert_file, key_file = (cert, None) if isinstance(cert, str) else (cert[0], cert[1])
        if cert_file and not os.path.exists(cert_file):
            raise OSError(f"Could not find the TLS certificate file, invalid path: {cert_file}")
        if key_file and not os.path.exists(key_file):
            raise OSError(f"Could not find the TLS key file, invalid path: {key_file}")


_ANY_STATUS_BYTES: list[Bytes] = []


def _any_status_bytes() -> Bytes:
    """One Bytes handler taking every status, shared by the adapters' requests (a handler made
    per request costs a native handler and its acceptance calls each time)."""
    if not _ANY_STATUS_BYTES:
        _ANY_STATUS_BYTES.append(Bytes(accept_status=[]))
    return _ANY_STATUS_BYTES[0]


def _requests_proxy(url: str, proxies: Any, request: Any) -> str:
    """The proxy for this URL as requests' HTTPAdapter picks it: scheme prepended when missing,
    a URL with no host refused (InvalidProxyURL); "" for none."""
    if not proxies:
        return ""
    from requests.exceptions import InvalidProxyURL
    from requests.utils import prepend_scheme_if_needed, select_proxy
    from urllib3.util import parse_url
    proxy = select_proxy(url, proxies)
    if not proxy:
        return ""
    proxy = prepend_scheme_if_needed(proxy, "http")
    if not parse_url(proxy).host:
        raise InvalidProxyURL("Please check proxy URL. It is malformed and could be missing the host.")
    return proxy


def _requests_timeouts(timeout: Any) -> tuple[Any, Any]:
    if timeout is None:   # requests' default: nothing to check
        return None, None
    if isinstance(timeout, tuple):
        pair = _as_tuple(timeout)
        try:
            connect, read = pair
        except ValueError:
            raise ValueError(f"Invalid timeout {timeout}. Pass a (connect, read) timeout tuple, "
                             "or a single float to set both timeouts to the same value.") from None
        from urllib3.util import Timeout as Urllib3Timeout
        Urllib3Timeout(connect=connect, read=read)
        return connect, read
    if timeout is not None and hasattr(timeout, "connect_timeout"):   # urllib3's Timeout
        return timeout.connect_timeout, timeout.read_timeout
    # urllib3's checks (requests' HTTPAdapter makes a urllib3 Timeout): a ValueError naming it.
    from urllib3.util import Timeout as Urllib3Timeout
    Urllib3Timeout(connect=timeout, read=timeout)
    return timeout, timeout


def _requests_send(adapter: Any, request: Any, stream: bool, timeout: Any, verify: Any, cert: Any,
                   proxies: Any) -> Any:
    url = request.url.decode("utf-8") if isinstance(request.url, bytes) else request.url
    proxy = _requests_proxy(url, proxies, request)
    adapter.cert_verify(None, url, verify, cert)
    connect, read = _requests_timeouts(timeout)
    body = request.body.encode("utf-8") if isinstance(request.body, str) else request.body
    client, headers = adapter._clients.with_headers(verify, cert, _header_pairs(request.headers))
    options: dict[str, Any] = {} if headers is None else dict(headers=headers)
    if connect is not None or read is not None or proxy or client is adapter._clients.given:
        # A client of the adapter's own has no time limit and no proxy already: for requests'
        # default (no timeout, no proxy) nothing is set per request (three fewer library calls).
        options.update(connect_timeout=connect, read_timeout=read, timeout=None, proxy=proxy)
    if body is not None:
        options["data"] = body
    started = datetime.datetime.now()
    try:
        if stream:
            opened = client.stream(request.method, url, **options)
            status, reason, pairs, version = (opened.status, opened.reason, opened.headers.items(),
                                              opened.http_version)
            streamed: StreamedResponse | None = opened
            content = None
        else:
            streamed = None
            done = client.request(request.method, url, handler=_any_status_bytes(), **options)
            status, reason, pairs, version = done.status, done.reason, done.headers.items(), done.http_version
            content = done.content
    except Error as exc:
        raise _requests_error(exc, request, proxy=proxy, timeouts=(connect, read)) from exc
    pairs = list(pairs)
    lengths = {value.strip() for name, value in pairs if name.lower() == "content-length"}
    if len(lengths) > 1:   # as urllib3 and http.client refuse it
        if streamed is not None:
            streamed.close()
        from requests.exceptions import InvalidHeader
        raise InvalidHeader(f"Content-Length contained multiple unmatching values ({', '.join(sorted(lengths))})",
                            request=request)
    raw = _RequestsRaw(streamed, content, status, reason, pairs, request, version)
    response = adapter.build_response(request, raw)
    if content is not None and response.raw is raw:
        # Not streamed: the body is already whole, what requests' Session.send would read it
        # into (response.content) right after this; `raw` is then read out, as urllib3's is.
        response._content, response._content_consumed = content, True
        raw.read()
    response.elapsed = datetime.datetime.now() - started
    return response


def _requests_build_response(adapter: Any, request: Any, raw: _RequestsRaw) -> Any:
    """requests' HTTPAdapter.build_response: a requests Response over `raw`."""
    from requests.cookies import extract_cookies_to_jar
    from requests.models import Response as RequestsResponse
    from requests.structures import CaseInsensitiveDict
    from requests.utils import get_encoding_from_headers

    response = RequestsResponse()
    response.status_code = raw.status
    response.headers = CaseInsensitiveDict(raw.headers)
    response.encoding = get_encoding_from_headers(response.headers)
    response.raw = raw
    response.reason = raw.reason
    url = request.url
    response.url = url.decode("utf-8") if isinstance(url, bytes) else url
    extract_cookies_to_jar(response.cookies, request, raw)
    response.request = request
    response.connection = adapter
    return response


# -- httpx ----------------------------------------------------------------------------------

def _httpx_error(exc: Error, request: Any, *, reading: bool = False) -> Exception:
    import httpx
    code = getattr(exc, "curl_code", 0) or 0
    if isinstance(exc, InvalidArgument):
        if "scheme" in exc.message.lower():   # in httpcore's words
            return httpx.UnsupportedProtocol("Request URL has an unsupported protocol "
                                             f"'{request.url.scheme}://'.", request=request)
        if code == 3:   # a URL httpx accepted but libcurl cannot use (a port beyond 65535): httpcore
            return httpx.ConnectError(exc.message, request=request)   # fails to connect to it
        return httpx.LocalProtocolError(exc.message, request=request)
    if isinstance(exc, Timeout):
        if getattr(exc, "headers", None) is None and "connect" in exc.message.lower() and not reading:
            return httpx.ConnectTimeout(exc.message, request=request)
        return httpx.ReadTimeout(exc.message, request=request)
    if isinstance(exc, DecodeError) or code in _DECODING_CODES:
        return httpx.DecodingError(exc.message, request=request)
    if code in _PROXY_CODES:
        return httpx.ProxyError(exc.message, request=request)
    if reading or code in _BODY_CODES or code == 52:
        return (httpx.RemoteProtocolError if code in (18, 52) else httpx.ReadError)(exc.message, request=request)
    if isinstance(exc, TransportError):
        return httpx.ConnectError(exc.message, request=request)
    return httpx.TransportError(exc.message, request=request)


_CONTEXT_BUNDLES: dict[tuple[bytes, ...], Any] = {}


def _ssl_context_verify(context: ssl.SSLContext) -> bool | str:
    """What libcurl can take from an ssl.SSLContext given as `verify=`: no verification
    (CERT_NONE), or the CA certificates it holds (written once to a PEM bundle kept for the
    process), or the system's when it holds none it can list (a CA directory). Its other settings
    (ciphers, protocol versions, a client certificate loaded into it) are not carried over."""
    if context.verify_mode == ssl.CERT_NONE:
        return False
    certs = context.get_ca_certs(binary_form=True)
    if not certs:
        return True
    key = tuple(certs)
    if key not in _CONTEXT_BUNDLES:
        import tempfile
        bundle = tempfile.NamedTemporaryFile("w", prefix="httpcontent-ca-", suffix=".pem")
        bundle.write("".join(ssl.DER_cert_to_PEM_cert(der) for der in certs))
        bundle.flush()
        _CONTEXT_BUNDLES[key] = bundle   # one per certificate set, deleted when the process exits
    return str(_CONTEXT_BUNDLES[key].name)


_HTTPX_REFUSED = ("uds", "local_address", "socket_options")


def _httpx_client_options(kwargs: dict[str, Any]) -> tuple[dict[str, Any], Any, Any]:
    """httpx.HTTPTransport's keyword arguments as hc.Client options (those it cannot honour are
    refused, clearly), and the verify and cert settings."""
    for name in _HTTPX_REFUSED:
        if kwargs.get(name) not in (None, ()):
            raise ValueError(f"httpcontent's transport does not support {name}= yet")
    if kwargs.get("retries"):
        raise ValueError("httpcontent's transport retries only with hc.Retry (client=hc.Client(retries=...))")
    verify = kwargs.get("verify", True)
    if isinstance(verify, ssl.SSLContext):
        verify = _ssl_context_verify(verify)
    elif not isinstance(verify, (bool, str)):
        raise ValueError("httpcontent's transport takes verify=True/False, a CA bundle path or an ssl.SSLContext")
    options: dict[str, Any] = {}
    proxy = kwargs.get("proxy")
    if proxy is not None:
        options["proxy"] = str(getattr(proxy, "url", proxy))
    if kwargs.get("trust_env", True) is False or proxy is None:
        options["trust_env"] = False
    return options, verify, kwargs.get("cert")


class _HTTPXStream:
    """An httpx response stream over a `StreamedResponse` (sync iteration)."""

    def __init__(self, streamed: StreamedResponse, request: Any) -> None:
        self._streamed = streamed
        self._request = request

    def __iter__(self) -> Iterator[bytes]:
        try:
            yield from self._streamed.iter_bytes()
        except Error as exc:
            raise _httpx_error(exc, self._request, reading=True) from exc

    def close(self) -> None:
        self._streamed.close()


class _TraceURL:
    def __init__(self, url: Any) -> None:
        self.target = url.raw_path
        self.scheme, self.host, self.port = url.raw_scheme, url.raw_host, url.port


class _TraceRequest:
    """What httpcore's trace events carry as `info["request"]`: method, url.target, headers as bytes."""

    def __init__(self, request: Any) -> None:
        self.method = request.method.encode("ascii")
        self.url = _TraceURL(request.url)
        self.headers = list(request.headers.raw)
        self.extensions = request.extensions


def _trace_events(request: Any, streamed: Any) -> list[tuple[str, dict[str, Any]]]:
    """httpcore's request and response header events for `request.extensions["trace"]`
    (the httpx command line prints the exchange from them), sent once the head is in; the
    connection events are not (libcurl connects, reuses and negotiates TLS out of sight)."""
    http2 = streamed.http_version.startswith("HTTP/2")
    prefix = "http2" if http2 else "http11"
    traced = _TraceRequest(request)
    headers = [(k.encode("latin-1"), v.encode("latin-1")) for k, v in streamed.headers.items()]
    head = ((streamed.status, headers) if http2 else
            (streamed.http_version.encode("ascii"), streamed.status, streamed.reason.encode("latin-1"), headers))
    return [(f"{prefix}.send_request_headers.started", {"request": traced}),
            (f"{prefix}.send_request_headers.complete", {"request": traced, "return_value": None}),
            (f"{prefix}.receive_response_headers.started", {"request": traced}),
            (f"{prefix}.receive_response_headers.complete", {"request": traced, "return_value": head})]


def _trace(request: Any, streamed: Any) -> None:
    trace = request.extensions.get("trace")
    if trace is not None:
        for name, info in _trace_events(request, streamed):
            trace(name, info)


async def _atrace(request: Any, streamed: Any) -> None:
    trace = request.extensions.get("trace")
    if trace is not None:
        for name, info in _trace_events(request, streamed):
            result = trace(name, info)
            if hasattr(result, "__await__"):
                await result


def _httpx_timeouts(request: Any) -> dict[str, Any]:
    timeout = request.extensions.get("timeout", {})
    return dict(connect_timeout=timeout.get("connect"), read_timeout=timeout.get("read"), timeout=None)


def _httpx_body(request: Any) -> Any:
    if "content" in request.__dict__ or not hasattr(request, "stream"):
        return request.content or None
    headers = request.headers
    if "transfer-encoding" not in headers and headers.get("content-length", "0") == "0":
        return None   # httpx frames every body it sends: neither header, no body (GET, HEAD)
    import httpx
    if isinstance(request.stream, httpx.ByteStream):   # bytes already: sent with their length
        return b"".join(request.stream) or None
    return iter(request.stream)


class HTTPXTransport:
    """An `httpx.BaseTransport`: `httpx.Client(transport=HTTPXTransport())`. Takes
    httpx.HTTPTransport's keyword arguments (verify, cert, trust_env, http1, http2, limits,
    proxy, retries, uds, local_address, socket_options): verify (bool or CA path), cert,
    trust_env and proxy are honoured; http1/http2 and limits are taken as they are (libcurl
    offers HTTP/2 over TLS by ALPN and pools connections itself); uds, local_address,
    socket_options and retries, when set, are refused with a clear error. Or `client=` an
    `hc.Client` of yours. Reads each request's timeouts
    (`request.extensions["timeout"]`); the body streams as httpx reads it, undecoded (httpx
    decodes Content-Encoding itself)."""

    def __new__(cls, client: Client | None = None, **kwargs: Any) -> Any:
        import httpx

        options, verify, cert = _httpx_client_options(kwargs)
        options["compressed"] = False

        class _Transport(httpx.BaseTransport):
            def __init__(self) -> None:
                self._clients = _Clients(client, options)
                self._verify, self._cert = verify, cert

            def handle_request(self, request: httpx.Request) -> httpx.Response:
                hc_client = self._clients.get(self._verify, self._cert)
                body = _httpx_body(request)
                try:
                    streamed = hc_client.stream(request.method, str(request.url),
                                                headers=_header_pairs(request.headers.raw),
                                                data=body, proxy=None if "proxy" in options else "",
                                                **_httpx_timeouts(request))
                except Error as exc:
                    raise _httpx_error(exc, request) from exc
                _trace(request, streamed)
                return httpx.Response(streamed.status, headers=list(streamed.headers.items()),
                                      stream=_HTTPXSyncStream(streamed, request),
                                      extensions={"http_version": streamed.http_version.encode(),
                                                  "reason_phrase": streamed.reason.encode("latin-1")})

            def close(self) -> None:
                self._clients.close()

        class _HTTPXSyncStream(_HTTPXStream, httpx.SyncByteStream):
            pass

        _Transport.__name__ = _Transport.__qualname__ = "HTTPXTransport"
        return _Transport()


def _running_asyncio() -> bool:
    try:
        import sniffio
        return sniffio.current_async_library() == "asyncio"
    except Exception:  # noqa: BLE001 - no sniffio, or no async library: look for asyncio's loop
        try:
            import asyncio
            asyncio.get_running_loop()
            return True
        except RuntimeError:
            return False


class AsyncHTTPXTransport:
    """An `httpx.AsyncBaseTransport`: `httpx.AsyncClient(transport=AsyncHTTPXTransport())`, the
    same arguments as `HTTPXTransport`. Under asyncio the transfer runs on the event loop itself
    (`client.astream`: no thread; cancelling the task stops it); under trio (through anyio) the
    blocking transport runs on a worker thread, a chunk at a time."""

    def __new__(cls, client: Client | None = None, **kwargs: Any) -> Any:
        import httpx

        options, verify, cert = _httpx_client_options(kwargs)
        options["compressed"] = False
        blocking = HTTPXTransport(client=client, **kwargs)

        class _AsyncStream(httpx.AsyncByteStream):
            def __init__(self, streamed: Any, request: httpx.Request) -> None:
                self._streamed = streamed
                self._request = request

            async def __aiter__(self) -> AsyncIterator[bytes]:
                try:
                    async for chunk in self._streamed.aiter_bytes():
                        yield chunk
                except Error as exc:
                    raise _httpx_error(exc, self._request, reading=True) from exc

            async def aclose(self) -> None:
                await self._streamed.aclose()

        class _ThreadStream(httpx.AsyncByteStream):
            def __init__(self, stream: Any) -> None:
                self._stream = stream

            async def __aiter__(self) -> AsyncIterator[bytes]:
                import anyio
                chunks = iter(self._stream)
                while True:
                    chunk = await anyio.to_thread.run_sync(next, chunks, None)
                    if chunk is None:
                        return
                    yield chunk

            async def aclose(self) -> None:
                import anyio
                await anyio.to_thread.run_sync(self._stream.close)

        class _Transport(httpx.AsyncBaseTransport):
            def __init__(self) -> None:
                self._clients = _Clients(client, options)

            async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
                if not _running_asyncio():
                    import anyio
                    await request.aread()
                    response = await anyio.to_thread.run_sync(blocking.handle_request, request)
                    return httpx.Response(response.status_code, headers=response.headers.raw,
                                          stream=_ThreadStream(response.stream),
                                          extensions=response.extensions)
                hc_client = self._clients.get(verify, cert)
                body = await _httpx_async_body(request)
                try:
                    streamed = await hc_client.astream(request.method, str(request.url),
                                                       headers=_header_pairs(request.headers.raw),
                                                       data=body, proxy=None if "proxy" in options else "",
                                                       **_httpx_timeouts(request))
                except Error as exc:
                    raise _httpx_error(exc, request) from exc
                await _atrace(request, streamed)
                return httpx.Response(streamed.status, headers=list(streamed.headers.items()),
                                      stream=_AsyncStream(streamed, request),
                                      extensions={"http_version": streamed.http_version.encode(),
                                                  "reason_phrase": streamed.reason.encode("latin-1")})

            async def aclose(self) -> None:
                self._clients.close()
                blocking.close()

        _Transport.__name__ = _Transport.__qualname__ = "AsyncHTTPXTransport"
        return _Transport()


async def _httpx_async_body(request: Any) -> Any:
    """The request body for the loop: read whole (an async iterable cannot feed libcurl's read
    callback on the loop's own thread)."""
    body = await request.aread()
    return body or None


__all__ = ["RequestsAdapter", "HTTPXTransport", "AsyncHTTPXTransport"]
