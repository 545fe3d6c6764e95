"""httpcontent underneath code written for requests and httpx, in one line:

    session.mount("https://", RequestsAdapter()); session.mount("http://", RequestsAdapter())
    httpx.Client(transport=HTTPXTransport())

Each request goes through libcurl as one `client.stream()` (the body read as it arrives when the
caller streams it, in one call when it does not); what the peer does above the transport stays
with it: requests' and httpx's redirects, cookies, auth, retries and hooks. Errors become the
peer's own exceptions. Neither requests nor httpx is imported until an adapter is made."""

from __future__ import annotations

from ._adapter_common import _Clients
from ._httpx_transport import AsyncHTTPXTransport, HTTPXTransport
from ._requests_adapter import RequestsAdapter

__all__ = ["RequestsAdapter", "HTTPXTransport", "AsyncHTTPXTransport", "_Clients"]
