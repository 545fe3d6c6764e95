"""`RequestsAdapter`: requests' transport adapter over an httpcontent client (see adapters.py)."""

from __future__ import annotations

import datetime
import http.client
from typing import Any, Iterator

from .client import Client
from .errors import DecodeError, Error, InvalidArgument, Timeout
from .handlers import Bytes
from .streaming import StreamedResponse

from ._adapter_common import (_BODY_CODES, _DECODING_CODES, _PROXY_CODES, _TLS_CODES, _Clients,
                              _as_tuple, _header_pairs, _joined, _message)

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


__all__ = ["RequestsAdapter"]
