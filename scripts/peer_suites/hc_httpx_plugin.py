"""pytest plugin (`-p hc_httpx_plugin`): httpx.Client and httpx.AsyncClient build httpcontent's
transports where they would build their own. `httpx._client.HTTPTransport` and
`AsyncHTTPTransport` (the names Client._init_transport and _init_proxy_transport call) become
HTTPXTransport and AsyncHTTPXTransport; a `transport=` given explicitly (MockTransport,
WSGITransport, ASGITransport, ...) is used as it is."""

import httpx._client

from httpcontent.adapters import AsyncHTTPXTransport, HTTPXTransport


def pytest_configure(config):
    httpx._client.HTTPTransport = HTTPXTransport
    httpx._client.AsyncHTTPTransport = AsyncHTTPXTransport
