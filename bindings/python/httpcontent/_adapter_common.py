"""What the requests adapter and the httpx transports share: the clients they keep (one per TLS
setting), libcurl codes grouped by what the other library calls them, and header conversions."""

from __future__ import annotations

import http.client
from typing import Any, Iterable

from .client import Client
from .errors import Error



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
        # Each client of ours, with the header set it sends by default (see `with_headers`).
        self._made: dict[tuple[Any, ...], tuple[Client, tuple[tuple[str, str], ...]]] = {}

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
        made = self._made.get(key)
        if made is None:
            try:   # (headers given among the adapter's client options stay the client's)
                given = [] if "headers" in self._options else [
                    (name, value) for name, value in headers if name.lower() not in _BODY_HEADERS]
                made = self._made[key] = (self._make(verify, cert, cert_key, given), tuple(given))
            except Error:   # a header the library refuses: reported per request, as requests would
                made = self._made[key] = (self._make(verify, cert, cert_key, []), ())
        client, defaults = made
        if defaults == tuple(headers):
            return client, None
        names = {name.lower() for name, _ in headers}
        if all(name.lower() in names for name, _ in defaults):
            return client, headers
        bare_key = (*key, "bare")
        bare = self._made.get(bare_key)
        if bare is None:
            bare = self._made[bare_key] = (self._make(verify, cert, cert_key, []), ())
        return bare[0], headers

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
        for client, _ in self._made.values():
            client.close()
        self._made.clear()


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


__all__ = ["_BODY_CODES", "_BODY_HEADERS", "_Clients", "_DECODING_CODES", "_PROXY_CODES", "_TLS_CODES", "_as_tuple", "_header_pairs", "_joined", "_message"]
