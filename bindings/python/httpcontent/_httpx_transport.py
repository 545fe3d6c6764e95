"""`HTTPXTransport` and `AsyncHTTPXTransport`: httpx transports over an httpcontent client (see
adapters.py)."""

from __future__ import annotations

import ssl
from typing import Any, AsyncIterator, Iterator

from .client import Client
from .errors import DecodeError, Error, InvalidArgument, Timeout, TransportError
from .streaming import StreamedResponse

from ._adapter_common import _BODY_CODES, _DECODING_CODES, _PROXY_CODES, _Clients, _header_pairs

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


__all__ = ["HTTPXTransport", "AsyncHTTPXTransport"]
